"""keras.io supervised_contrastive_learning's loss: a ``keras.losses.Loss`` subclass that
overrides ``__call__`` (not ``call``) and normalises with ``keras.utils.normalize``, calling
a module-level function of ``keras.ops`` (``ops.cast(y, other.dtype)``, ``ops.transpose``,
``ops.squeeze``, ``ops.categorical_crossentropy(..., from_logits=True)``). Before: the
class and each line of the function were stubs (12 stubs with the compile of its
classifier). Now both translate; the generated loss gives Keras' values on the same
inputs, and compile(loss=obj) calls the object itself as Keras does (its __call__'s value
is the loss: the runtime keras_loss used ``obj.call``, which raised NotImplementedError)."""

import sys

import numpy as np
import pytest
import torch  # (before TensorFlow)

from transpiler.translate import translate
import program_runner  # (a warm fork: tests/program_runner.py)

PROGRAM = '''
import numpy as np
import keras
from keras import layers, ops

rng = np.random.RandomState(0)
x_train = rng.rand(32, 6).astype("float32")
y_train = rng.randint(0, 3, size=(32, 1))


def npairs_loss(y_true, y_pred):
    y_pred = ops.cast(y_pred, "float32")
    y_true = ops.cast(y_true, y_pred.dtype)
    y_true = ops.cast(ops.equal(y_true, ops.transpose(y_true)), y_pred.dtype)
    y_true /= ops.sum(y_true, 1, keepdims=True)
    loss = ops.categorical_crossentropy(y_true, y_pred, from_logits=True)
    return ops.mean(loss)


class SupervisedContrastiveLoss(keras.losses.Loss):
    def __init__(self, temperature=1, name=None):
        super().__init__(name=name)
        self.temperature = temperature

    def __call__(self, labels, feature_vectors, sample_weight=None):
        feature_vectors_normalized = keras.utils.normalize(feature_vectors, axis=1, order=2)
        logits = ops.divide(
            ops.matmul(feature_vectors_normalized, ops.transpose(feature_vectors_normalized)),
            self.temperature,
        )
        return npairs_loss(ops.expand_dims(ops.squeeze(labels), 1), logits)


def add_projection_head():
    inputs = keras.Input(shape=(6,))
    outputs = layers.Dense(4)(inputs)
    return keras.Model(inputs=inputs, outputs=outputs)


model = add_projection_head()
model.compile(optimizer=keras.optimizers.SGD(0.1), loss=SupervisedContrastiveLoss(0.5))
history = model.fit(x=x_train, y=y_train, batch_size=8, epochs=3, shuffle=False, verbose=0)
print("LOSSES", [float(v) for v in history.history["loss"]])
'''


def _definitions(text: str) -> dict:
    """The program's definitions and data (everything above ``model = ...``) executed."""
    namespace: dict = {"__name__": "definitions"}
    exec(compile(text[:text.index("\nmodel = ")], "program.py", "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def translated():
    return translate(PROGRAM, "contrastive.py")


def test_contrastive_loss_class_and_its_ops_function_translate(translated):
    assert not translated.stubs, [str(d) for d in translated.stubs]
    assert "import keras" not in translated.text and "from keras" not in translated.text
    assert "keras.utils.normalize" not in translated.text and "ops.transpose" not in translated.text


def test_the_generated_program_trains(translated, tmp_path):
    path = tmp_path / "contrastive_torch.py"
    path.write_text(translated.text)
    out = program_runner.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    losses = eval(out.stdout.split("LOSSES", 1)[1].strip())
    assert len(losses) == 3 and all(np.isfinite(losses))


@pytest.mark.parametrize("temperature", [0.5, 0.05])
def test_contrastive_loss_values_equal_keras(translated, temperature):
    import keras

    rng = np.random.RandomState(1)
    features = rng.randn(8, 4).astype("float32")
    labels = rng.randint(0, 3, size=(8, 1))
    ours = _definitions(translated.text)
    got = ours["SupervisedContrastiveLoss"](temperature)(torch.from_numpy(labels), torch.from_numpy(features))
    theirs = _definitions(PROGRAM)
    want = theirs["SupervisedContrastiveLoss"](temperature)(keras.ops.convert_to_tensor(labels),
                                                            keras.ops.convert_to_tensor(features))
    assert float(got) == pytest.approx(float(keras.ops.convert_to_numpy(want)), rel=1e-5)


def test_normalize_of_a_zero_row_is_keras_epsilon_bounded(translated):
    """keras.utils.normalize on a tensor: x * min(rsqrt(sum x^2), 1 / 1e-7) (a zero row stays 0)."""
    import keras

    x = np.array([[3.0, 4.0], [0.0, 0.0], [1e-9, 0.0]], dtype="float32")
    source = "import keras\nfrom keras import ops\n\ndef norm(x):\n    return keras.utils.normalize(x, axis=1, order=2)\n"
    from transpiler.printers.torch import loss_functions
    import libcst as cst

    fn = cst.parse_module(source).body[2]
    new, _ = loss_functions.translate_function(fn, loss_functions.module_aliases(cst.parse_module(source)),
                                               lambda *a: "")
    namespace = {"torch": torch}
    exec(cst.Module([new]).code, namespace)
    got = namespace["norm"](torch.from_numpy(x)).numpy()
    want = keras.ops.convert_to_numpy(keras.utils.normalize(keras.ops.convert_to_tensor(x), axis=1, order=2))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
