"""Training helpers of a torch script read back as Keras' compile/fit/evaluate/predict
(frontend_ast/torch/helpers.py, torch_helper_calls.py): recognised by their structure, not
their names; each definition goes only when every use of it was recognised; and the Keras
objects they become compute what the torch helpers compute (optimizer steps, losses)."""

from __future__ import annotations

import ast
import re

import libcst as cst
import numpy as np
import pytest

from torch_keras_harness import assert_same_steps
from transpiler.frontend_ast.torch import helpers as torch_helpers
from transpiler.printers.keras.helper_calls import loss_arg
from transpiler.translate import translate

KERAS = '''import numpy as np
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(6,), name="features")
    x = layers.Dense(8, activation="relu", name="hidden")(inputs)
    outputs = layers.Dense(3, activation="softmax", name="probs")(x)
    return keras.Model(inputs, outputs)


def main():
    rng = np.random.RandomState(0)
    x = rng.rand(64, 6).astype("float32")
    y = rng.randint(0, 3, size=64)
    model = build_model()
    model.compile(optimizer=keras.optimizers.OPTIMIZER, loss="LOSS", metrics=["accuracy"])
    model.fit(x, y, epochs=2, batch_size=16, validation_split=0.25, verbose=2)
    loss, acc = model.evaluate(x, y, verbose=0)
    print(loss, acc, model.predict(x[:2], verbose=0))


if __name__ == "__main__":
    main()
'''

#: the generated helpers' names → names that say nothing about what they do
RENAMES = {"fit": "run_a", "evaluate": "run_b", "predict": "run_c", "train_step": "run_d",
           "make_loader": "run_e", "KerasAdam": "Opt", "KerasRMSprop": "Opt",
           "sparse_categorical_crossentropy": "run_f", "sparse_categorical_accuracy": "run_g",
           "reset_metrics": "run_h", "update_metrics": "run_i"}


def _torch(optimizer: str = "Adam(learning_rate=0.01)", loss: str = "sparse_categorical_crossentropy") -> str:
    """The Keras program translated to torch, its optimizer a helper class of the script's own
    (Keras' epsilon placement in a torch.optim subclass, as --exact programs and scripts written
    by hand carry them; the idiomatic default uses torch.optim's class itself)."""
    from transpiler.printers import runtime_source

    text = translate(KERAS.replace("OPTIMIZER", optimizer).replace("LOSS", loss), "k.py").text
    name = re.search(r"optimizer = torch\.optim\.(\w+)\(", text).group(1)
    helper = runtime_source.source("torch.optimizers", f"Keras{name}")
    text = text.replace(f"optimizer = torch.optim.{name}(", f"optimizer = Keras{name}(").replace("alpha=", "rho=")
    return text.replace("\n\ndef main(", f"\n\n{helper}\n\ndef main(").replace("import torch\n", "import math\nimport torch\n", 1)


def _renamed(text: str) -> str:
    return re.sub(r"\b(" + "|".join(RENAMES) + r")\b", lambda m: RENAMES[m.group(1)], text)


@pytest.mark.parametrize("optimizer, keras_optimizer", [
    ("Adam(learning_rate=0.01)", "keras.optimizers.Adam(learning_rate=0.01, epsilon=1e-07)"),
    ("RMSprop(learning_rate=0.01)", "keras.optimizers.RMSprop(learning_rate=0.01, rho=0.9, epsilon=1e-07)"),
])
def test_helpers_are_recognised_by_structure_not_names(optimizer, keras_optimizer):
    source = _renamed(_torch(optimizer))
    assert "def run_a(" in source and "class Opt(" in source  # (the renaming took)
    back = translate(source, "k_torch.py", "keras")
    assert not back.stubs, [str(d) for d in back.stubs]
    text = back.text
    assert (f"model.compile(\n        optimizer={keras_optimizer},\n        "
            'loss="sparse_categorical_crossentropy",\n        metrics=["accuracy"],\n    )') in text
    assert "model.fit(x, y, batch_size=16, epochs=2, validation_split=0.25, verbose=2)" in text
    assert "loss, acc = model.evaluate(x, y, verbose=0)" in text
    assert "model.predict(x[:2], verbose=0)" in text
    for name in set(RENAMES.values()):  # every helper went: Keras has its own
        assert f"def {name}(" not in text and f"class {name}(" not in text


def test_a_helper_used_otherwise_is_kept():
    """A helper also used where no fact replaces it stays (read, and stubbed where it uses
    torch, as before); its recognised calls are still Keras' own."""
    source = _torch().replace("    model = build_model()\n", "    model = build_model()\n    steps = [fit]\n")
    text = translate(source, "k_torch.py", "keras").text
    assert "def fit(" in text and "steps = [fit]" in text
    assert "model.fit(x, y, batch_size=16" in text
    assert "def predict(" not in text  # only recognised uses: it goes


def test_a_function_that_does_not_train_is_no_fit():
    module = cst.parse_module(
        "def fit(model, x, epochs=1):\n"
        "    for epoch in range(epochs):\n"
        "        for batch in x:\n"
        "            model(batch)\n"
        "    return model\n\n\n"
        "def predict(model, x):\n"
        "    return model(x)\n")
    assert torch_helpers.analyse(module) == {}


def test_roles_come_from_the_data_flow():
    helpers = torch_helpers.analyse(cst.parse_module(_renamed(_torch())))
    assert {name: h.kind for name, h in helpers.items()} == {
        "Opt": "optimizer_class", "run_e": "loader", "run_d": "step", "run_f": "loss", "run_g": "metric",
        "run_b": "evaluate", "run_c": "predict", "run_a": "fit", "run_h": "metric_state", "run_i": "metric_state"}
    assert helpers["run_i"].roles["metrics"] == "metrics" and helpers["run_b"].roles["metrics"] == "metrics"
    fit = helpers["run_a"]
    assert {r: fit.roles[r] for r in ("model", "optimizer", "loss", "x", "y", "epochs", "batch_size",
                                      "validation_split", "validation_data", "verbose", "metrics")} == {
        "model": "model", "optimizer": "optimizer", "loss": "loss_fns", "x": "x", "y": "y", "epochs": "epochs",
        "batch_size": "batch_size", "validation_split": "validation_split", "validation_data": "validation_data",
        "verbose": "verbose", "metrics": "metrics"}
    assert fit.logits  # the model is called with return_logits=True: the loss works on logits


# -- numbers: the Keras objects compute what the torch helpers computed --------------------
def _keras_compile(text: str):
    """(the translated Keras module's namespace, its printer, the helper_compile config)."""
    from transpiler import verify

    back = translate(text, "k_torch.py", "keras")
    module = verify.load_generated(back.text, "helpers_keras")
    ts = next(t for t in back.program.training if t.kind == "helper_compile")
    return vars(module), back.training_printer, ts.config


@pytest.mark.parametrize("optimizer", ["Adam(learning_rate=0.01)", "Adam(learning_rate=0.01, epsilon=1e-4)",
                                       "RMSprop(learning_rate=0.01)",
                                       "RMSprop(learning_rate=0.01, momentum=0.5, centered=True)"])
def test_optimizer_classes_step_like_the_keras_optimizer_they_become(optimizer):
    """The generated torch optimizer class and the Keras optimizer compile gets, on the same
    gradients (float64, 8 steps, tiny gradients on the last four where epsilon matters)."""
    import keras
    import torch

    text = _torch(optimizer)
    namespace, printer, config = _keras_compile(text)
    cls = re.search(r"\n(class Keras\w+\(torch\.optim\.\w+\):\n(?:(?:    .*)?\n)+)", text).group(1)
    tns: dict = {}
    exec("import math\nimport torch\n" + cls, tns)  # noqa: S102  (the generated class, as the script has it)
    call = next(ast.unparse(n.value) for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Assign)
                and ast.unparse(n.targets[0]) == "optimizer")
    rng = np.random.RandomState(3)
    start = rng.standard_normal((3, 4))
    tparam = torch.nn.Parameter(torch.from_numpy(start.copy()))
    topt = eval(call.replace("model.parameters()", "[tparam]"), {**tns, "tparam": tparam})  # noqa: S307
    keras.config.set_floatx("float64")
    try:
        kvar = keras.Variable(start.copy(), dtype="float64")
        kopt = eval(printer.optimizer_expr(config["compile"].optimizer), namespace)  # noqa: S307
        kopt.build([kvar])
        grads = [rng.standard_normal((3, 4)) * (1e-9 if step >= 4 else 1.0) for step in range(8)]
        assert_same_steps(tparam, topt, kvar, kopt, grads)
    finally:
        keras.config.set_floatx("float32")


@pytest.mark.parametrize("loss", ["sparse_categorical_crossentropy", "categorical_crossentropy",
                                  "binary_crossentropy", "mse", "mae"])
def test_loss_functions_compute_the_keras_loss_they_become(loss):
    """The generated per-sample loss (on logits where the model's activation moved into it),
    averaged as the generated train_step does, against the Keras loss compile gets on the
    model's output (the activation applied)."""
    import keras
    import torch

    text = _torch(loss=loss)
    namespace, printer, config = _keras_compile(text)
    keras_loss = keras.losses.get(eval(loss_arg(printer, config["compile"].losses[0]), namespace))  # noqa: S307
    name = re.search(r"loss_fn = (\w+)", text).group(1)
    fn_text = re.search(rf"\n(def {name}\(.*\n(?:(?:    .*)?\n)+)", text).group(1)
    tns: dict = {}
    exec("import torch\nimport torch.nn.functional as F\n" + fn_text, tns)  # noqa: S102
    rng = np.random.RandomState(0)
    logits = rng.standard_normal((8, 3)).astype("float32") * 2
    activation = keras.ops.sigmoid if loss == "binary_crossentropy" else keras.ops.softmax
    probs = keras.ops.convert_to_numpy(activation(logits))
    on_logits = "return_logits=True" in text  # the model's activation moved into the torch loss
    model_out = probs if loss.endswith("crossentropy") else logits  # what the Keras model returns
    y = {"sparse_categorical_crossentropy": rng.randint(0, 3, size=8),
         "categorical_crossentropy": np.eye(3)[rng.randint(0, 3, size=8)],
         "binary_crossentropy": rng.randint(0, 2, size=(8, 3))}.get(loss, rng.standard_normal((8, 3)))
    y = y.astype("float32") if loss != "sparse_categorical_crossentropy" else y
    torch_in = logits if on_logits else model_out
    expected = tns[name](torch.from_numpy(torch_in), torch.from_numpy(np.asarray(y))).mean().item()
    got = float(np.mean(keras.ops.convert_to_numpy(keras_loss(y, model_out))))  # the batch mean
    assert abs(got - expected) <= 1e-5 * max(1.0, abs(expected)), (got, expected)


# -- a model of two outputs: one loss, weight and metric list per output ---------------------
KERAS_TWO = '''import numpy as np
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(6,), name="features")
    x = layers.Dense(8, activation="relu", name="hidden")(inputs)
    label = layers.Dense(3, activation="softmax", name="label")(x)
    value = layers.Dense(1, name="value")(x)
    return keras.Model(inputs, [label, value])


def main():
    rng = np.random.RandomState(0)
    x = rng.rand(24, 6).astype("float32")
    y = rng.randint(0, 3, size=24)
    v = rng.rand(24, 1).astype("float32")
    model = build_model()
    model.compile(
        optimizer="adam",
        loss={"label": "sparse_categorical_crossentropy", "value": "mse"},
        metrics={"label": ["accuracy"], "value": ["mae"]},
        loss_weights=[1.0, 0.5],  # (a list: by the outputs' order)
    )
    model.fit(x, {"label": y, "value": v}, epochs=2, batch_size=8, verbose=2)
    results = model.evaluate(x, {"label": y, "value": v}, verbose=0, return_dict=True)
    probs, values = model.predict(x[:2], verbose=0)
    print(results, probs.argmax(axis=1), values)


if __name__ == "__main__":
    main()
'''


def _torch_two() -> str:
    return translate(KERAS_TWO, "k.py").text


def test_two_output_helpers_read_back_as_compile_with_a_list_per_output():
    source = _renamed(_torch_two())
    assert "loss_weights=[1.0, 0.5]" in source and '("label_accuracy", 0, ' in source  # what T1 passes
    back = translate(source, "k_torch.py", "keras")
    assert not back.stubs, [str(d) for d in back.stubs]
    text = back.text
    assert ("model.compile(\n        optimizer=keras.optimizers.Adam(learning_rate=0.001, epsilon=1e-07),\n"
            '        loss=["sparse_categorical_crossentropy", "mean_squared_error"],\n'
            "        loss_weights=[1.0, 0.5],\n"
            '        metrics=[["accuracy"], ["mae"]],\n    )') in text
    assert "model.fit(x, [y, v], batch_size=8, epochs=2, verbose=2)" in text
    assert "results = model.evaluate(x, [y, v], return_dict=True, verbose=0)" in text
    assert "probs, values = model.predict(x[:2], verbose=0)" in text
    assert "loss_fn" not in text  # the list of torch loss functions moved into compile
    again = translate(text, "k_torch_keras.py").text  # and the per-output lists go to torch again
    assert "loss_weights=[1.0, 0.5]" in again and re.search(r'\("\w+_mae", 1, mean_absolute_error\)', again)
    for name in set(RENAMES.values()):
        assert f"def {name}(" not in text and f"class {name}(" not in text


@pytest.mark.parametrize("change", [
    # one loss for two outputs: the torch helper zips it with the outputs (the first one only)
    ("    loss_fn = [\n        sparse_categorical_crossentropy,\n        mean_squared_error,\n    ]",
     "    loss_fn = sparse_categorical_crossentropy"),
    # a weight per output is what Keras takes
    ("loss_weights=[1.0, 0.5]", "loss_weights=[1.0]"),
    # a label that names no metric of its function
    ('("value_mae", 1, ', '("value_loss", 1, '),
])
def test_two_output_helper_calls_that_are_not_keras_stay(change):
    source = _torch_two()
    assert change[0] in source
    text = translate(source.replace(change[0], change[1]), "k_torch.py", "keras").text
    assert "model.compile(" not in text and "def fit(" in text


def test_two_output_losses_and_metrics_evaluate_to_the_torch_helpers_numbers():
    """The torch evaluate helper and Keras' evaluate under the compile read back from it, on the
    same weights and data: the weighted loss and each output's metric agree."""
    import keras
    import torch

    from torch_keras_harness import load_source, randomize_torch
    from transpiler.weights.torch_source import keras_weights

    text = _torch_two()
    tmod = load_source(text, "two_outputs_torch")
    torch.manual_seed(0)
    tmodel = tmod.build_model()
    randomize_torch(tmodel, 0, 0.5)
    rng = np.random.RandomState(1)
    x = rng.rand(24, 6).astype("float32")
    y, v = rng.randint(0, 3, size=24), rng.rand(24, 1).astype("float32")
    metrics = [("label_accuracy", 0, tmod.sparse_categorical_accuracy), ("value_mae", 1, tmod.mean_absolute_error)]
    expected = tmod.evaluate(tmodel, [tmod.sparse_categorical_crossentropy, tmod.mean_squared_error], x, [y, v],
                             batch_size=8, metrics=metrics, loss_weights=[1.0, 0.5], return_dict=True)
    back = translate(text, "k_torch.py", "keras")
    kmod = load_source(back.text, "two_outputs_keras")
    kmodel = kmod.build_model()
    state = {k: t.detach().numpy() for k, t in tmodel.state_dict().items()}
    for name, arrays in keras_weights(back.program.models[0].graph, state).items():
        kmodel.get_layer(name).set_weights(arrays)
    compile_call = next(n for n in ast.walk(ast.parse(back.text)) if isinstance(n, ast.Call)
                        and ast.unparse(n.func) == "model.compile")
    eval(ast.unparse(compile_call), {"model": kmodel, "keras": keras})  # noqa: S307  (the printed compile)
    got = kmodel.evaluate(x, [y, v], batch_size=8, verbose=0, return_dict=True)
    assert abs(got["loss"] - expected["loss"]) <= 1e-5 * max(1.0, abs(expected["loss"])), (got, expected)
    for key in ("accuracy", "mae"):  # Keras names them after its output layers
        (k_key,) = [k for k in got if k.endswith("_" + key)]
        (t_key,) = [k for k in expected if k.endswith("_" + key)]
        assert abs(got[k_key] - expected[t_key]) <= 1e-5, (key, got, expected)


CUSTOM_LOOP = '''
import numpy as np
import keras
import tensorflow as tf
from keras import layers

EPOCHS = 2


def build_model():
    return keras.Sequential([keras.Input((6,)), layers.Dense(8, activation="relu"), layers.Dense(3)])


def main():
    rng = np.random.RandomState(0)
    x = rng.randn(64, 6).astype("float32")
    y = rng.randint(0, 3, size=64)
    model = build_model()
    optimizer = keras.optimizers.Adam(learning_rate=1e-2)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(64).batch(16)
    for epoch in range(EPOCHS):
        for xb, yb in dataset:
            with tf.GradientTape() as tape:
                loss = loss_fn(yb, model(xb, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))


if __name__ == "__main__":
    main()
'''


def test_a_custom_loop_over_the_loader_helper_with_a_keras_loss_object_reads_back_as_fit():
    """T1 of a GradientTape loop: a torch loop over the generated loader helper, the loss
    object written as a local function called (target, output). Read back, the loader is the
    arrays' DataLoader and the function Keras' loss object again: the usual loop, compile/fit."""
    t1 = translate(CUSTOM_LOOP, "k.py").text
    assert "def loss_fn(target, output):" in t1 and "make_loader(" in t1
    for text in (t1, _renamed(t1)):
        k1 = translate(text, "k_torch.py", "keras")
        assert not k1.stubs, [str(d) for d in k1.stubs]
        tree = ast.parse(k1.text)
        assert "loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)" in k1.text
        assert "model.compile(optimizer=optimizer, loss=loss_fn)" in k1.text
        assert "model.fit(x, y, batch_size=16, epochs=EPOCHS, shuffle=True, verbose=2)" in k1.text
        defs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert not defs & {"make_loader", "run_e", "sparse_categorical_crossentropy", "run_f"}, defs


def test_a_loss_function_called_in_torch_order_is_no_keras_loss_object():
    t1 = translate(CUSTOM_LOOP, "k.py").text
    swapped = t1.replace("def loss_fn(target, output):", "def loss_fn(output, target):")
    assert swapped != t1
    k1 = translate(swapped, "k_torch.py", "keras").text
    assert "loss_fn = keras.losses" not in k1


def test_the_loader_helper_kept_for_other_uses_is_an_array_loader():
    t1 = translate(CUSTOM_LOOP, "k.py").text
    used = t1.replace("    for epoch in range(EPOCHS):", "    for xb, yb in dataset:\n        print(xb.shape)\n"
                                                             "    for epoch in range(EPOCHS):")
    assert used != t1
    k1 = translate(used, "k_torch.py", "keras")
    assert not k1.stubs, [str(d) for d in k1.stubs]
    assert re.search(r"dataset = ArrayLoader\(\s*ArrayDataset\(x, y\), batch_size=16, shuffle=True\s*\)", k1.text)


@pytest.mark.parametrize("call, want", [
    ("tf.constant([1, 2], dtype=(tf.float32))", "torch.tensor([1, 2], dtype=torch.float32)"),
    ("tf.cast((x), dtype=(tf.float32),)", "torch.as_tensor(x, dtype=torch.float32)"),
    ("tf.reduce_mean((x), axis=(1),)", None),
])
def test_redundant_parentheses_around_arguments_mean_nothing(call, want):
    # found by the whole-program fuzz (odd syntax on zero_dce.py): `dtype=(tf.float32)` was
    # refused as "dtype (tf.float32)", one stub more than the script without the parentheses
    from transpiler.printers.torch.loss_functions import canonical, rewrite_entry

    node = cst.parse_expression(call)
    emit = rewrite_entry(canonical("tensorflow." + _dotted_name(node.func)[len("tf."):]))
    assert emit is not None
    plain = cst.parse_expression(call.replace("(x)", "x").replace("(tf.float32)", "tf.float32")
                                 .replace("(1)", "1").replace(",)", ")"))
    assert emit(node) == emit(plain)
    if want is not None:
        assert emit(node) == want


def _dotted_name(node) -> str:
    return node.value if isinstance(node, cst.Name) else f"{_dotted_name(node.value)}.{node.attr.value}"


def test_a_transpose_around_predict_is_read_through_the_numpy_import():
    """``np.transpose(predict(model, ...), perm)`` (how a channels-last model output comes back
    from the torch module) is Keras' predict: the reader resolves ``np.transpose`` through the
    script's imports (helper_calls._imported_path) to numpy.transpose."""
    keras_source = '''
import numpy as np
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(8, 8, 3))
    return keras.Model(inputs, layers.Conv2D(4, 3, padding="same")(inputs))


def main():
    x = np.random.rand(16, 8, 8, 3).astype("float32")
    model = build_model()
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, np.random.rand(16, 8, 8, 4).astype("float32"), epochs=1, batch_size=8, verbose=0)
    print(model.predict(x, verbose=0).shape)


if __name__ == "__main__":
    main()
'''
    torch_text = translate(keras_source, "k.py", "pytorch").text
    assert "np.transpose(predict(model, " in torch_text
    back = translate(torch_text, "k_torch.py", "keras")
    assert "    print(model.predict(x, verbose=0).shape)" in back.text.splitlines()
    assert "transpose" not in back.text.split("def main", 1)[1]
    # numpy imported otherwise: no transpose of numpy's, the call stays as written
    other = translate(torch_text.replace("import numpy as np", "import numpy as np\nimport other as np", 1),
                      "k_torch.py", "keras")
    assert "model.predict(x, verbose=0)" in other.text and "transpose" in other.text.split("def main", 1)[1]
