"""MultiHeadAttention on a query of rank > 3 (keras.io's mobilevit: patches of (N, P, T, C)):
Keras attends over every axis but the batch's and the features' (``attention_axes=None``).
The PyTorch output computed attention over the wrong axes and failed at run time without a
stub (nn.MultiheadAttention refuses 4-D queries); now both PyTorch paths and ONNX out flatten
those axes into one sequence, and the forms not translated (explicit attention_axes, masks over
several axes) are stubs."""

from __future__ import annotations

import torch  # noqa: F401 (torch before tensorflow)
import numpy as np
import pytest

from harness import check_source, max_error, randomize_keras_weights
from transpiler.translate import translate


def _script(heads: int, key_dim: int, extra: str = "", call: str = "") -> str:
    return f'''import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(4, 6, 8))
    x = layers.MultiHeadAttention(num_heads={heads}, key_dim={key_dim}{extra})(inputs, inputs{call})
    x = layers.Dense(3)(x)
    return keras.Model(inputs, x)
'''


@pytest.mark.parametrize("heads, key_dim", [(2, 4), (2, 3)], ids=["nn_multihead", "projections"])
def test_rank4_query_attends_over_both_axes_like_keras(heads, key_dim):
    checked = check_source(_script(heads, key_dim))
    assert not checked.translation.stubs
    assert max_error(checked) <= 1e-4
    assert checked.keras_params == checked.torch_params


@pytest.mark.parametrize("extra, call, words", [
    (", attention_axes=1", "", "attention_axes=1"),
    ("", ", use_causal_mask=True", "with a mask on a rank-4 query"),
])
def test_attention_over_some_axes_or_masked_is_a_stub(extra, call, words):
    result = translate(_script(2, 4, extra, call), "case.py")
    assert any(words in d.message for d in result.stubs), [str(d) for d in result.stubs]


def test_rank4_query_to_onnx_equals_keras():
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import keras

    from transpiler import onnx_out
    from transpiler.printers.onnx.export import export_graph
    from transpiler.verify import keras_canonical_params, load_generated
    from transpiler.weights.canonical import node_params

    src = _script(2, 3)
    md = onnx_out.read_script(src, "case.py", "keras").models[0]
    keras.backend.clear_session()
    model = load_generated(src, "mha_rank4").build_model()
    randomize_keras_weights(model)
    proto = export_graph(md.graph, node_params(md.graph, keras_canonical_params(md.graph, model)), dynamic_batch=True)
    onnx.checker.check_model(proto, full_check=True)
    x = np.random.default_rng(0).standard_normal((2, 4, 6, 8)).astype("float32")
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {session.get_inputs()[0].name: x})
    assert float(np.max(np.abs(y - keras.ops.convert_to_numpy(model(x))))) <= 1e-4
