"""``layers.Lambda``: the function (a ``lambda`` or a function of the script) runs on the
layer's input where the layer is called, its ops inline in ``forward`` (a Lambda holds no
weights; Keras saves nothing for it). Each case is compared with Keras numerically (max abs
error ≤ 1e-5, same parameter count); what a Lambda cannot be read as stays a marked stub."""

from __future__ import annotations

import pytest

from harness import check_source, max_error
from transpiler.translate import translate

HEAD = '''import keras
from keras import layers, ops

'''

CASES = {
    "arithmetic_and_ops": '''
def build_model():
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(16, activation="relu")(inputs)
    x = layers.Lambda(lambda t: t * 2.0 + 1.0)(x)
    x = layers.Lambda(lambda t: ops.mean(t, axis=-1, keepdims=True), name="avg")(x)
    return keras.Model(inputs, x)
''',
    "sequential": '''
def build_model():
    return keras.Sequential([
        keras.Input(shape=(6,)),
        layers.Dense(5),
        layers.Lambda(lambda t: ops.tanh(t) * 3.0),
        layers.Dense(2),
    ])
''',
    "sequential_add": '''
def build_model():
    model = keras.Sequential()
    model.add(keras.Input(shape=(6,)))
    model.add(layers.Dense(4))
    model.add(layers.Lambda(lambda t: ops.square(t)))
    return model
''',
    "function_with_arguments": '''
SCALE = 0.5


def scaled_softplus(t, factor=1.0):
    return ops.softplus(t) * factor


def build_model():
    inputs = keras.Input(shape=(7,))
    x = layers.Dense(3)(inputs)
    x = layers.Lambda(scaled_softplus, arguments={"factor": SCALE})(x)
    return keras.Model(inputs, x)
''',
    "list_of_tensors": '''
def build_model():
    a = keras.Input(shape=(4,))
    b = keras.Input(shape=(4,))
    x = layers.Lambda(lambda ts: ts[0] * ts[1] - ts[1])([a, b])
    return keras.Model([a, b], layers.Dense(2)(x))
''',
    "in_a_layer_subclass": '''
class Block(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(4)
        self.scale = layers.Lambda(lambda t: t * 0.5)

    def call(self, x):
        return self.scale(self.dense(x))


def build_model():
    inputs = keras.Input(shape=(6,))
    return keras.Model(inputs, Block()(inputs))
''',
    "feature_map_channel_axis": '''
def build_model():
    inputs = keras.Input(shape=(9, 9, 3))
    x = layers.Conv2D(4, 3)(inputs)
    x = layers.Lambda(lambda t: t / (ops.sum(ops.abs(t), axis=-1, keepdims=True) + 1.0))(x)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, x)
''',
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lambda_layer_matches_keras(name):
    checked = check_source(HEAD + CASES[name])
    assert not checked.translation.stubs, [str(d) for d in checked.translation.stubs]
    assert max_error(checked) <= 1e-5
    assert checked.keras_params == checked.torch_params


@pytest.mark.parametrize("code, reason", [
    ("layers.Lambda(lambda t: t, mask=lambda t, m: m)(x)", "layers.Lambda(mask=...)"),
    ("layers.Lambda(lambda t, k: t * k)(x)", "no value for its parameter 'k'"),
    ("layers.Lambda(lambda t: t, arguments={'q': 1})(x)", "q not a parameter"),
])
def test_lambda_layer_that_cannot_be_read_is_a_marked_stub(code, reason):
    src = HEAD + f'''
def build_model():
    inputs = keras.Input(shape=(4,))
    x = layers.Dense(2)(inputs)
    x = {code}
    return keras.Model(inputs, x)
'''
    result = translate(src, "lam.py")
    assert any(reason in d.message for d in result.stubs), [str(d) for d in result.stubs]
    assert not result.program.models
