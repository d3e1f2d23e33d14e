"""``layers.Dot`` / ``layers.dot``: Keras' batch_dot of two inputs over one axis each,
written with the einsum op (and Keras' L2 normalisation for ``normalize=True``: x times
min(rsqrt(sum x²), 1e7)) where the layer is called; it holds no weights. Each case is compared
with Keras (max abs error ≤ 1e-5, same parameter count); what is not translated is a stub."""

from __future__ import annotations

import pytest

from harness import check_source, max_error
from transpiler.translate import translate

HEAD = '''import keras
from keras import layers

'''


def _pair(shape_a: str, shape_b: str, call: str) -> str:
    return HEAD + f'''
def build_model():
    u = keras.Input(shape={shape_a})
    v = keras.Input(shape={shape_b})
    a = layers.Dense(4)(u)
    b = layers.Dense(4)(v)
    return keras.Model([u, v], {call})
'''


CASES = {
    "vectors": _pair("(6,)", "(5,)", "layers.Dot(axes=1)([a, b])"),
    "vectors_normalized_cosine": _pair("(6,)", "(5,)", "layers.Dot(axes=-1, normalize=True)([a, b])"),
    "functional_dot": _pair("(6,)", "(6,)", "layers.dot([a, b], axes=1)"),
    "sequences_last_axes": _pair("(7, 3)", "(5, 3)", "layers.Dot(axes=(2, 2))([a, b])"),
    "sequences_time_axes": _pair("(7, 3)", "(7, 2)", "layers.Dot(axes=1)([a, b])"),
    "sequences_mixed_axes_normalized": _pair("(7, 3)", "(4, 6)",
                                             "layers.Dot(axes=(2, 1), normalize=True)([a, layers.Permute((2, 1))(b)])"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dot_layer_matches_keras(name):
    checked = check_source(CASES[name])
    assert not checked.translation.stubs, [str(d) for d in checked.translation.stubs]
    assert max_error(checked) <= 1e-5
    assert checked.keras_params == checked.torch_params
    assert "torch.einsum(" in checked.translation.text


@pytest.mark.parametrize("call, reason", [
    ("layers.Dot(axes=1)([a, layers.Reshape((2, 2))(b)])", "ranks (2, 3)"),
    ("layers.Dot(axes=0)([a, b])", "over the batch axis"),
])
def test_dot_layer_not_translated_is_a_stub(call, reason):
    result = translate(_pair("(6,)", "(6,)", call), "dot.py")
    assert any(reason in d.message for d in result.stubs), [str(d) for d in result.stubs]
    assert not result.program.models
