"""Losses with arguments (label_smoothing, from_logits, reduction, Huber delta, per-output
dicts and loss_weights) train like Keras: the program's own compile() on the Keras side,
the generated loss expressions on the torch side, 20 steps from the same weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow)

from transpiler.translate import translate
from transpiler.verify_training import STEPS, run_both

RTOL = 1e-4

SINGLE = '''
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(6,))
    x = layers.Dense(8, activation="relu")(inputs)
    outputs = layers.Dense({units}, activation={activation!r})(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss={loss})
    return model
'''

TWO_OUTPUTS = '''
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(6,))
    x = layers.Dense(8, activation="relu")(inputs)
    label = layers.Dense(3, activation="softmax", name="label")(x)
    score = layers.Dense(1, name="score")(x)
    model = keras.Model(inputs, [label, score])
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01),
                  loss={{"score": keras.losses.Huber(delta=0.5), "label": {label_loss}}},
                  loss_weights={{"score": 0.3, "label": 2.0}})
    return model
'''

CASES = {
    "cce_smoothing_softmax": (3, "softmax", 'keras.losses.CategoricalCrossentropy(label_smoothing=0.1)'),
    "cce_smoothing_logits": (3, None, 'keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.2)'),
    "bce_smoothing_sigmoid": (2, "sigmoid", 'keras.losses.BinaryCrossentropy(label_smoothing=0.1)'),
    "bce_smoothing_logits": (1, None, 'keras.losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.3)'),
    "mse_sum": (2, None, 'keras.losses.MeanSquaredError(reduction="sum")'),
    "scce_sum_logits": (3, None, 'keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")'),
    "mae_none": (2, None, 'keras.losses.MeanAbsoluteError(reduction=None)'),
    "bce_none_string": (2, "sigmoid", 'keras.losses.BinaryCrossentropy(reduction="none")'),
    "huber_delta": (2, None, 'keras.losses.Huber(delta=0.3)'),
    "mse_mean": (2, None, 'keras.losses.MeanSquaredError(reduction="mean")'),
    # were stubs (compile and fit not translated)
    "msle_string": (2, "relu", '"msle"'),
    "mape_object": (2, None, 'keras.losses.MeanAbsolutePercentageError()'),
    "poisson_softplus": (2, "softplus", '"poisson"'),
    "log_cosh_string": (2, None, '"log_cosh"'),
}


def _source(case: str) -> str:
    if case.startswith("two_outputs"):
        label = {"two_outputs_dicts": '"categorical_crossentropy"',
                 "two_outputs_smoothing": "keras.losses.CategoricalCrossentropy(label_smoothing=0.1)"}[case]
        return TWO_OUTPUTS.format(label_loss=label)
    units, activation, loss = CASES[case]
    return SINGLE.format(units=units, activation=activation, loss=loss)


ALL = [*CASES, "two_outputs_dicts", "two_outputs_smoothing"]


def assert_trains_like_keras(source: str, label: str, folder, **kwargs) -> None:
    """Write ``source`` (a builder that compiles its model), run 20 steps on both sides and
    compare the per-step losses; prints the largest relative difference."""
    path = folder / f"{label}.py"
    path.write_text(source)
    k, t = run_both(str(path), exact=True, **kwargs)
    assert len(k) == STEPS and np.all(np.isfinite(k))
    rel = np.abs(k - t) / np.maximum(np.abs(k), 1e-8)
    print(f"{label}: max relative loss difference {rel.max():.2e}")
    assert rel.max() <= RTOL, list(zip(k, t))


@pytest.mark.parametrize("case", ALL)
def test_loss_with_arguments_trains_like_keras(case, tmp_path):
    assert_trains_like_keras(_source(case), case, tmp_path)


@pytest.mark.parametrize("loss, activation, expected", [
    ("keras.losses.CategoricalCrossentropy(label_smoothing=0.1)", "softmax",
     "loss_fn = functools.partial(categorical_crossentropy_smoothed, label_smoothing=0.1)"),
    ("keras.losses.CategoricalCrossentropy(label_smoothing=0.1)", None,
     "loss_fn = functools.partial(categorical_crossentropy_from_probs_smoothed, label_smoothing=0.1)"),
    ('keras.losses.MeanSquaredError(reduction="sum")', None, "loss_fn = keras_sum_reduction(mean_squared_error)"),
    ("keras.losses.MeanSquaredError(reduction=None)", None, "loss_fn = keras_none_reduction(mean_squared_error)"),
    ('keras.losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.2, reduction="sum")', None,
     "loss_fn = keras_sum_reduction(functools.partial(binary_crossentropy_smoothed, label_smoothing=0.2))"),
])
def test_loss_arguments_are_printed(loss, activation, expected):
    source = SINGLE.format(units=3, activation=activation, loss=loss) + "\n\nmodel = build_model()\n"
    result = translate(source, "p.py")
    assert not result.stubs and "".join(expected.split()) in "".join(result.text.split()), result.text


@pytest.mark.parametrize("loss, message", [
    ("keras.losses.SparseCategoricalCrossentropy(label_smoothing=0.1)", "takes no label_smoothing"),
    ('keras.losses.MeanSquaredError(reduction="median")', "reduction='median'"),
    ("keras.losses.CategoricalCrossentropy(axis=1)", "only the last axis"),
])
def test_unsupported_loss_arguments_are_reported(loss, message):
    result = translate(SINGLE.format(units=3, activation=None, loss=loss), "p.py")
    assert any(message in str(s) for s in result.stubs), result.stubs


WEIGHTED = {
    "scce_softmax": SINGLE.format(units=3, activation="softmax", loss='"sparse_categorical_crossentropy"'),
    "mae_sum": SINGLE.format(units=2, activation=None, loss='keras.losses.MeanAbsoluteError(reduction="sum")'),
    "bce_smoothing": SINGLE.format(units=2, activation="sigmoid",
                                   loss="keras.losses.BinaryCrossentropy(label_smoothing=0.1)"),
    "two_outputs": TWO_OUTPUTS.format(label_loss='"categorical_crossentropy"'),
}


@pytest.mark.parametrize("case", WEIGHTED)
def test_sample_weights_train_like_keras(case, tmp_path):
    """fit(sample_weight=...) and fit(class_weight=...) reach train_step as per-sample weights."""
    assert_trains_like_keras(WEIGHTED[case], f"weighted_{case}", tmp_path, sample_weights=True)


REGULARIZED = '''import keras
from keras import layers, regularizers


def build_model():
    inputs = keras.Input(shape=(12,), dtype="int32")
    x = layers.Embedding(30, 8, embeddings_regularizer=regularizers.l2(1e-3))(inputs)
    x = layers.Conv1D(6, 3, kernel_regularizer=regularizers.l1_l2(l1=1e-3, l2=1e-2),
                      bias_regularizer="l2")(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.BatchNormalization(gamma_regularizer=regularizers.L1(0.02))(x)
    x = layers.Dense(16, activation="relu", kernel_regularizer=keras.regularizers.l2(0.05),
                     bias_regularizer=keras.regularizers.l1(0.01))(x)
    outputs = layers.Dense(3, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="sparse_categorical_crossentropy")
    return model
'''


def test_weight_regularizers_train_like_keras(tmp_path):
    """kernel/bias/embeddings/gamma regularizers (l1, l2, l1_l2, by name): the module's
    regularization_loss() is added to the loss as Keras adds model.losses; 20 steps."""
    result = translate(REGULARIZED, "regularized.py")
    assert not any("regularizer is not translated" in d.message for d in result.program.diagnostics)
    assert "def regularization_loss(self):" in result.text
    fitted = translate(REGULARIZED + "\n\nimport numpy as np\n\nbuild_model().fit(np.zeros((4, 12), 'int32'), "
                                     "np.zeros(4))\n", "regularized_fit.py")
    assert "loss = loss + model.regularization_loss()" in fitted.text
    assert "loss = loss + model.regularization_loss()  # Keras' evaluate adds them too" not in fitted.text
    assert_trains_like_keras(REGULARIZED, "regularized", tmp_path, float32_hyperparameters=True)


TAPE_MATH = '''import numpy as np
import tensorflow as tf
import keras
from keras import layers


def build_model():
    return keras.Sequential([keras.Input(shape=(8,)),
                             layers.Dense(16, activation="relu", kernel_regularizer=keras.regularizers.l2(1e-2)),
                             layers.Dense(1)])


def main():
    x = np.random.randn(64, 8).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
    model = build_model()
    opt = keras.optimizers.SGD(0.01)
    loss_fn = keras.losses.MeanSquaredError()
    losses = []
    for epoch in range(2):
        for xb, yb in ds:
            with tf.GradientTape() as tape:
                pred = model(xb, training=True)
                loss = loss_fn(yb, pred) + tf.add_n(model.losses) + 0.1 * tf.reduce_mean(tf.square(pred))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            losses.append(float(loss))
    return losses


if __name__ == "__main__":
    main()
'''


def test_tensor_math_and_model_losses_in_a_custom_step():
    """In a GradientTape step, tf/keras.ops math has torch spellings and model.losses is
    the module's regularization term; the step computes what Keras computes."""
    import keras
    import numpy as np
    import tensorflow as tf

    result = translate(TAPE_MATH, "tape_math.py")
    assert not result.stubs, result.stubs
    assert ("loss=(loss_fn(yb,pred)+sum([model.regularization_loss()])+0.1*torch.mean(torch.square(pred)))"
            in "".join(result.text.split())), result.text
    namespace = {"__name__": "tape_math_program"}
    exec(compile(result.text, "tape_math_torch.py", "exec"), namespace)
    # the same weights and batch on both sides: the first step's loss
    torch_model = namespace["build_model"]()
    keras_ns = {"__name__": "tape_math_keras"}
    exec(compile(TAPE_MATH, "tape_math.py", "exec"), keras_ns)
    policy = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")  # (whatever an earlier test left)
    try:
        keras_model = keras_ns["build_model"]()
    finally:
        keras.config.set_dtype_policy(policy)
    k1, k2 = keras_model.layers
    with torch.no_grad():
        torch_model.fc1.weight.copy_(torch.from_numpy(k1.kernel.numpy().T))
        torch_model.fc1.bias.copy_(torch.from_numpy(k1.bias.numpy()))
        torch_model.fc2.weight.copy_(torch.from_numpy(k2.kernel.numpy().T))
        torch_model.fc2.bias.copy_(torch.from_numpy(k2.bias.numpy()))
    xb = np.random.RandomState(0).randn(8, 8).astype("float32")
    yb = xb.sum(axis=1, keepdims=True)
    pred_k = keras_model(xb, training=True)
    expected = float(keras.losses.MeanSquaredError()(yb, pred_k) + tf.add_n(keras_model.losses)
                     + 0.1 * tf.reduce_mean(tf.square(pred_k)))
    # the generated statements of main() that make the loss function and compute the loss
    import ast

    main = next(n for n in ast.parse(result.text).body if isinstance(n, ast.FunctionDef) and n.name == "main")
    make_loss = next(n for n in ast.walk(main) if isinstance(n, (ast.FunctionDef, ast.Assign)) and
                     "loss_fn" in [getattr(n, "name", None)] + [getattr(t, "id", None) for t in getattr(n, "targets", [])])
    step_loss = next(n for n in ast.walk(main) if isinstance(n, ast.Assign) and
                     getattr(n.targets[0], "id", None) == "loss")
    scope = dict(namespace, model=torch_model, xb=torch.from_numpy(xb), yb=torch.from_numpy(yb))
    exec(ast.unparse(make_loss), scope)
    scope["pred"] = torch_model(scope["xb"])
    exec(ast.unparse(step_loss), scope)
    got = float(scope["loss"])
    assert abs(got - expected) <= 1e-5 * abs(expected), (got, expected)
    losses = namespace["main"]()
    assert len(losses) == 4 and all(np.isfinite(losses))
