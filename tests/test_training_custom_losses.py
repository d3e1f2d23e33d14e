"""User-defined losses and metrics: functions of (y_true, y_pred) written with keras.ops,
keras.backend or TensorFlow, and keras.losses.Loss subclasses, translated to torch.

Equivalence: the program's own compile() (with the user's Keras loss) on the Keras side,
the translated function/class (through the generated ``keras_loss``) on the torch side,
20 steps from the same weights on the same batches, per-step losses within 1e-4 relative.
"""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (before TensorFlow)
from test_training_losses import assert_trains_like_keras

from transpiler.printers.torch import loss_functions as torch_loss_functions
from transpiler.translate import translate

PROGRAM = '''
import keras
import tensorflow as tf
from keras import ops
from keras import backend as K


def my_mse(y_true, y_pred):
    return keras.ops.mean(keras.ops.square(y_true - y_pred), axis=-1)


def tf_loss(y_true, y_pred):
    err = tf.abs(y_true - y_pred)
    return tf.reduce_mean(tf.math.log(1.0 + err) + 0.1 * tf.square(err), axis=-1)


def k_loss(y_true, y_pred):
    return ops.mean(ops.maximum(ops.abs(y_pred - y_true) - 0.1, 0.0), axis=-1) + K.epsilon()


def mixed(y_true, y_pred):
    return keras.losses.mean_squared_error(y_true, y_pred) + 0.5 * ops.mean(ops.abs(y_true - y_pred), axis=-1)


def clipped_cce(y_true, y_pred):
    y_pred = ops.clip(y_pred, K.epsilon(), 1.0 - K.epsilon())
    return -ops.sum(y_true * ops.log(y_pred), axis=-1)


def scalar_loss(y_true, y_pred):
    return tf.reduce_sum(tf.square(y_true - y_pred)) / tf.cast(tf.shape(y_true)[0], tf.float32)


class ScaledHuber(keras.losses.Loss):
    def __init__(self, delta=0.5, scale=2.0, name="scaled_huber", **kwargs):
        super().__init__(name=name, **kwargs)
        self.delta = delta
        self.scale = scale

    def call(self, y_true, y_pred):
        err = ops.abs(y_true - y_pred)
        quad = ops.minimum(err, self.delta)
        return self.scale * ops.mean(0.5 * quad ** 2 + self.delta * (err - quad), axis=-1)


def build_model():
    inputs = keras.Input(shape=(6,))
    x = keras.layers.Dense(8, activation="tanh")(inputs)
    outputs = keras.layers.Dense(3, activation=ACTIVATION)(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05), loss=LOSS)
    return model
'''

CASES = {
    "keras_ops_function": ("my_mse", None),
    "tf_function": ("tf_loss", None),
    "backend_function": ("k_loss", None),
    "builtin_loss_inside": ("mixed", None),
    "clipped_cce_on_softmax": ("clipped_cce", "softmax"),
    "scalar_returning_function": ("scalar_loss", None),
    "loss_subclass": ("ScaledHuber(delta=0.3)", None),
    "loss_subclass_sum": ('ScaledHuber(delta=0.3, reduction="sum")', None),
}


def _program(loss: str, activation: str | None) -> str:
    return PROGRAM.replace("LOSS", loss).replace("ACTIVATION", repr(activation))


@pytest.mark.parametrize("case", CASES)
def test_custom_loss_trains_like_keras(case, tmp_path):
    assert_trains_like_keras(_program(*CASES[case]), case, tmp_path)


def _loss_script(body: str) -> str:
    """A script compiling a model with ``my_loss`` returning ``body``."""
    return ("import keras\nimport tensorflow as tf\nfrom keras import ops\nfrom keras import backend as K\n\n\n"
            f"def my_loss(y_true, y_pred):\n    return {body}\n\n\n"
            "model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(3)])\n"
            "model.compile(optimizer='sgd', loss=my_loss)\n")


@pytest.mark.parametrize("function, expected", [
    ("keras.ops.mean(keras.ops.square(y_true - y_pred), axis=-1)", "torch.mean(torch.square(y_true - y_pred), dim=-1)"),
    ("tf.reduce_sum(tf.abs(y_pred - y_true), axis=[1], keepdims=True)",
     "torch.sum(torch.abs(y_pred - y_true), dim=[1], keepdim=True)"),
    ("tf.math.log(tf.clip_by_value(y_pred, 1e-7, 1.0))", "torch.log(torch.clamp(y_pred, 1e-7, 1.0))"),
    ("K.mean(K.maximum(y_true * y_pred, 0.0)) + K.epsilon()", "torch.mean(torch.clamp(y_true * y_pred, min=0.0)) + 1e-07"),
    ("ops.cast(ops.argmax(y_pred, axis=-1), 'float32')", "torch.as_tensor(torch.argmax(y_pred, dim=-1), dtype=torch.float32)"),
    ("tf.nn.softmax(y_pred) * tf.math.reduce_std(y_true, axis=-1, keepdims=True)",
     "torch.softmax(y_pred, dim=-1) * torch.std(y_true, correction=0, dim=-1, keepdim=True)"),
    ("keras.losses.binary_crossentropy(y_true, y_pred, from_logits=True)",
     "binary_crossentropy(y_pred, y_true)"),
])
def test_rewrite_table(function, expected):
    result = translate(_loss_script(function), "p.py")
    assert not result.stubs, result.stubs
    assert "".join(f"return {expected}".split()) in "".join(result.text.split()), result.text
    assert "loss_fn = keras_loss(my_loss)" in result.text


@pytest.mark.parametrize("function, message", [
    ("tf.linalg.norm(y_true - y_pred, axis=-1)", "tf.linalg.norm"),
    ("tf.argmax(y_pred)", "explicit axis"),  # (tf: axis 0 by default; ops.argmax's None is torch's: translated)
    ("keras.losses.categorical_focal_crossentropy(y_true, y_pred)", "categorical_focal_crossentropy"),
])
def test_untranslatable_custom_loss_is_a_marked_stub(function, message):
    result = translate(_loss_script(function), "p.py")
    assert any(message in str(s) for s in result.stubs), result.stubs
    assert "raise NotImplementedError(" in result.text.split("def my_loss", 1)[1].split("\ndef ", 1)[0]


def test_custom_metric_function_is_logged_under_its_name():
    source = ("import numpy as np\nimport keras\nfrom keras import ops\n\n\n"
              "def rmse(y_true, y_pred):\n    return ops.sqrt(ops.mean(ops.square(y_pred - y_true), axis=-1))\n\n\n"
              "model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1)])\n"
              "model.compile(optimizer='sgd', loss='mse', metrics=[rmse])\n"
              "model.fit(np.zeros((8, 4)), np.zeros((8, 1)))\n")
    result = translate(source, "p.py")
    assert not result.stubs, result.stubs
    assert '("rmse", 0, keras_metric(rmse))' in result.text


def test_supported_calls_lists_the_table():
    calls = torch_loss_functions.supported_calls()
    assert "keras.ops.mean" in calls and "tf.reduce_mean" in calls and "keras.backend.epsilon" in calls


STATEFUL_SCRIPT = """import numpy as np
import keras
from keras import layers


def build_model():
    model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy",
                  metrics=[keras.metrics.AUC(name="roc"), keras.metrics.Precision(), keras.metrics.Recall()])
    return model


x = np.random.rand(64, 4).astype("float32")
y = (x[:, 0] > 0.5).astype("float32")
model = build_model()
es = keras.callbacks.EarlyStopping(monitor="val_roc", mode="max", patience=2)
callbacks = [es, keras.callbacks.ReduceLROnPlateau(patience=1)]
history = model.fit(x, y, epochs=3, validation_split=0.25, callbacks=callbacks, verbose=2)
"""


@pytest.mark.parametrize("logits", [False, True], ids=["probabilities", "logits"])
@pytest.mark.parametrize("name", ["auc", "precision", "recall"])
def test_stateful_metrics_count_like_keras(name, logits):
    """The generated AUC/Precision/Recall classes against Keras' over several batches
    (Keras on the probabilities; the generated class on logits when the model skips its
    sigmoid for the loss)."""
    import numpy as np

    import keras

    from transpiler.runtime.torch import metrics

    cls = {"auc": "AUC", "precision": "Precision", "recall": "Recall"}[name]
    ours = getattr(metrics, cls)(from_logits=True) if logits else getattr(metrics, cls)()
    theirs = getattr(keras.metrics, cls)()
    rng = np.random.RandomState(3)
    for batch in range(4):
        raw = rng.randn(16, 1) * 2
        probs = 1 / (1 + np.exp(-raw))
        target = (rng.rand(16, 1) < probs).astype("float32")  # informative, not perfect
        ours.update_state(torch.from_numpy(raw if logits else probs), torch.from_numpy(target))
        theirs.update_state(target, probs.astype("float32"))
        assert abs(ours.result() - float(theirs.result())) <= 1e-6, (batch, ours.result(), float(theirs.result()))
    ours.reset_state()
    theirs.reset_state()
    ours.update_state(torch.tensor([[0.9], [0.2]]), torch.tensor([[1.0], [0.0]]))
    theirs.update_state(np.array([[1.0], [0.0]]), np.array([[0.9], [0.2]]))
    if not logits:
        assert abs(ours.result() - float(theirs.result())) <= 1e-6


def test_stateful_metrics_and_a_callback_list_translate_and_run():
    """AUC(name="roc") is logged as "roc" (val_roc for EarlyStopping); a list of callbacks
    bound to a name and given to fit() runs inside the generated fit()."""
    result = translate(STATEFUL_SCRIPT, "p.py")
    assert not result.stubs, result.stubs
    assert '("roc", 0, AUC(from_logits=True))' in result.text
    assert "# callbacks = [...]: the callbacks run inside the generated fit() loop" in result.text
    namespace = {"__name__": "stateful_metrics_program"}
    exec(compile(result.text, "stateful.py", "exec"), namespace)
    history = namespace["history"].history
    assert {"roc", "precision", "recall", "val_roc", "val_precision", "val_recall"} <= set(history)
    assert all(0.0 <= v <= 1.0 for v in history["val_roc"])


def test_stateful_metric_with_other_settings_is_a_stub():
    result = translate(STATEFUL_SCRIPT.replace('AUC(name="roc")', 'AUC(curve="PR")'), "p.py")
    assert any("only its default settings" in str(s) for s in result.stubs), result.stubs
