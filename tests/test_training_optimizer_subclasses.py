"""A subclass of a Keras optimizer that overrides only Keras 2's optimizer API
(``get_gradients``, ``get_updates``, ...; keras.io's gradient_centralization GCRMSprop):
Keras 3 never calls those methods, so it trains exactly as its base class; the class
becomes a comment saying so and the optimizer object the torch optimizer of the base (it
was a stub: "optimizer Unknown(reason='call') is not supported"). A subclass with a
method Keras 3 calls (its own update rule) stays a marked stub. Numerics: the Keras program
and the generated one, from the same weights on the same batches, report the same epoch
losses."""

from __future__ import annotations

import numpy as np
import torch  # noqa: F401  (torch before tensorflow in one process)

from harness import program_pair
from transpiler.translate import translate

PROGRAM = '''
import numpy as np
import keras
from keras import layers, ops
from keras.optimizers import RMSprop


class GCRMSprop(RMSprop):
    def METHOD(self, loss, params):
        grads = []
        gradients = super().get_gradients()
        for grad in gradients:
            grad_len = len(grad.shape)
            if grad_len > 1:
                axis = list(range(grad_len - 1))
                grad -= ops.mean(grad, axis=axis, keep_dims=True)
            grads.append(grad)
        return grads


def build_model():
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(16, activation="relu")(inputs)
    return keras.Model(inputs, layers.Dense(3)(x))


def train(model, x, y):
    optimizer = GCRMSprop(learning_rate=1e-2)
    model.compile(optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    return history.history["loss"]


def main():
    rng = np.random.default_rng(0)
    print(train(build_model(), rng.normal(size=(64, 8)).astype("float32"), rng.integers(0, 3, size=64)))


if __name__ == "__main__":
    main()
'''


def test_an_optimizer_subclass_overriding_only_keras_2_methods_trains_as_its_base():
    src = PROGRAM.replace("METHOD", "get_gradients")
    result = translate(src, "gc_optimizer.py", exact=True)  # (Keras' RMSprop arithmetic: --exact)
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "# class GCRMSprop(RMSprop):" in result.text and "Keras 3 never calls" in result.text
    keras_mod, torch_mod, kmodel, tmodel = program_pair(src, result, 3, "gc_optimizer")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 8)).astype("float32")
    y = rng.integers(0, 3, size=64)
    expected = np.array(keras_mod.train(kmodel, x, y))
    got = np.array(torch_mod.train(tmodel, x, y))
    assert expected.shape == got.shape == (3,)
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-6), (expected, got)


def test_an_optimizer_subclass_with_its_own_update_rule_is_a_stub():
    src = PROGRAM.replace("METHOD", "update_step")
    result = translate(src, "gc_optimizer.py")
    assert any("GCRMSprop.update_step()" in str(d) for d in result.stubs), [str(d) for d in result.stubs]
    assert "NotImplementedError" in result.text
