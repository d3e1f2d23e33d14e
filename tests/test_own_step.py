"""A torch module with its own ``train_step``/``test_step`` (Keras' custom-step pattern in
torch, as the Keras → PyTorch direction writes it) → the methods of its ``keras.Model``
subclass, with ``model.optimizer = ...`` read as ``compile`` and the generated
``fit_train_step``/``evaluate_test_step`` as ``fit``/``evaluate`` (frontend_ast/torch/own_step).

Checked: the Keras text (golden lines), the whole-script round trip (K → T1 → K1 → T2 → K2
is a fixpoint from K1 on), what stays a marked stub (a submodule called on its own, torch
code the table lacks, a torch-only tensor method, a method Keras has with another meaning),
and numerics: T1's and K1's own steps from the same weights on the same batches log the
same losses step by step, and their test_step the same.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from transpiler.translate import translate

KERAS = '''
"""A classifier whose keras.Model subclass writes its own train_step and test_step."""

import numpy as np
import tensorflow as tf
import keras
from keras import layers


class Classifier(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(16, activation="relu")
        self.out = layers.Dense(3)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.penalty_tracker = keras.metrics.Mean(name="penalty")

    @property
    def metrics(self):
        return [self.loss_tracker, self.penalty_tracker]

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            logits = self(x, training=True)
            # cross-entropy on logits, plus a small penalty on large logits
            ce = keras.ops.mean(keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
            penalty = 0.01 * keras.ops.mean(keras.ops.square(logits))
            loss = ce + penalty
        grads = tape.gradient(loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.loss_tracker.update_state(loss)
        self.penalty_tracker.update_state(penalty)
        return {"loss": self.loss_tracker.result(), "penalty": self.penalty_tracker.result()}

    def test_step(self, data):
        x, y = data
        logits = self(x, training=False)
        loss = keras.ops.mean(keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}


def build_model():
    model = Classifier()
    model(keras.Input(shape=(8,)))
    return model


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 8)).astype("float32")
    y = rng.integers(0, 3, size=96)
    model = build_model()
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2))
    model.fit(x, y, epochs=2, batch_size=32, verbose=2)
    print("eval:", model.evaluate(x, y, verbose=0))


if __name__ == "__main__":
    main()
'''

_SOURCE_REF = re.compile(r"\(([\w.-]+\.py):(\d+)\)")


def _h5_groups(path) -> list[str]:
    """Every group and dataset path of a ``.weights.h5`` file, sorted."""
    import h5py

    found: list[str] = []
    with h5py.File(path, "r") as f:
        f.visit(found.append)
    return sorted(found)


def _rounds():
    t1 = translate(KERAS, "own.py", "pytorch")
    k1 = translate(t1.text, "own_torch.py", "keras")
    t2 = translate(k1.text, "own_torch_keras.py", "pytorch")
    k2 = translate(t2.text, "own_torch_keras_torch.py", "keras")
    t3 = translate(k2.text, "own_torch_keras_torch_keras.py", "pytorch")
    return t1, k1, t2, k2, t3


def _body(text: str) -> str:
    return _SOURCE_REF.sub("(<source>)", text.split("\n", 1)[1])


@pytest.fixture(scope="module")
def rounds():
    return _rounds()


def test_own_train_step_becomes_the_keras_subclass_methods(rounds):
    t1, k1 = rounds[0], rounds[1]
    assert "def train_step(self, data):" in t1.text and "fit_train_step(" in t1.text  # (what is read back)
    assert not k1.stubs, [str(d) for d in k1.stubs]
    text = k1.text
    for line in ["class Classifier(keras.Model):",
                 "        self.loss_tracker = keras.metrics.Mean(name=\"loss\")",
                 "        with tf.GradientTape() as tape:",
                 "            logits = self(x, training=True)",
                 "            penalty = 0.01 * keras.ops.mean(keras.ops.square(logits))",
                 "        grads = tape.gradient(loss, self.trainable_weights)",
                 "        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))",
                 "        logits = self(x, training=False)",
                 "    @property",
                 "    model.fit(x, y, batch_size=32, epochs=2, verbose=2)",
                 '    print("eval:", model.evaluate(x, y, verbose=0))',
                 "import tensorflow as tf"]:
        assert line in text.splitlines(), line
    assert "keras.losses.sparse_categorical_crossentropy(" in text
    assert "model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01, epsilon=1e-07))" in text
    # the torch helpers went: Keras has them
    for gone in ("class Mean", "def fit_train_step", "def evaluate_test_step", "model.optimizer =", "import torch",
                 "def sparse_categorical_crossentropy"):
        assert gone not in text, gone


def test_own_train_step_round_trip_is_a_fixpoint(rounds):
    t1, k1, t2, k2, t3 = rounds
    assert not k2.stubs and not t2.stubs
    assert _body(k2.text) == _body(k1.text)
    assert _body(t3.text) == _body(t2.text)


def _torch_own(step_body: str) -> str:
    return f'''
import torch
from torch import nn

INPUT_SHAPE = (4,)


class Mean:
    def __init__(self, name="mean", dtype=None):
        self.name = name
        self.reset_state()

    def update_state(self, values, sample_weight=None):
        self.total += float(values)
        self.count += 1.0

    def result(self):
        return torch.tensor(self.total / self.count if self.count else 0.0)

    def reset_state(self):
        self.total, self.count = 0.0, 0.0


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(4, 2)
        self.tracker = Mean(name="loss")

    def forward(self, x):
        return self.head(self.block(x))

    def train_step(self, data):
        x, y = data
        self.optimizer.zero_grad()
{step_body}
        loss.backward()
        self.optimizer.step()
        self.tracker.update_state(loss)
        return {{"loss": self.tracker.result()}}


def build_model():
    return Net()
'''


@pytest.mark.parametrize("body, reason", [
    ("        loss = torch.mean((self.block(x) - y) ** 2)", "self.block: a submodule called on its own"),
    ("        loss = torch.cat([self(x), y], dim=1).mean()", "torch.cat() in the model's own train_step"),
    ("        loss = ((self(x) - y) ** 2).mean()\n        print(loss.item())", ".item()"),
    ("        loss = self.compute_loss(x, y, self(x))", "self.compute_loss: not an attribute the Keras model has"),
])
def test_own_train_step_untranslatable_stays_a_marked_stub(body, reason):
    src = _torch_own(body)
    if "compute_loss" in body:  # a method of the module: Keras' compute_loss means another thing
        src = src.replace("    def forward(self, x):", "    def compute_loss(self, x, y, out):\n"
                                                       "        return ((out - y) ** 2).mean()\n\n"
                                                       "    def forward(self, x):")
    result = translate(src, "net.py", "keras")
    messages = [d.message for d in result.stubs]
    assert any(m.startswith("Net.train_step: the model's own training step is not translated") and reason in m
               for m in messages), messages
    assert "NotImplementedError" in result.text  # the stub is in the output, marked


def test_the_reader_records_marks_and_the_keras_printer_spells_them():
    """The torch reader writes no Keras (frontend_ast/torch/own_step.py records the facts):
    tensor functions as marks of ir/tensor_functions.py, the gradient step as statement
    indices over the torch statements kept as written; printers/keras/own_step.py spells them."""
    from transpiler.frontend_ast.torch.frontend import run_torch_frontend
    from transpiler.ir.tensor_functions import TENSOR_FUNCTIONS, marks
    from transpiler.printers.keras import own_step as printer

    body = ("        out = self(x)\n"
            "        loss = torch.mean(torch.square(out - y)) + 0.1 * out.abs().sum(dim=1).mean()")
    fe = run_torch_frontend(_torch_own(body), "net.py")
    (md,) = [m for m in fe.program.models if m.graph.from_torch.own_step]
    own = md.graph.from_torch.own_step
    assert own.names == ["train_step"] and own.trackers == [("tracker", 'name="loss"')]
    (method,) = own.methods
    for target in ("keras", "tf.", "tape", "apply_gradients"):
        assert target not in method.template, target
    assert marks(method.template) == {"mean", "square", "abs", "sum"} <= TENSOR_FUNCTIONS
    lines = method.template.splitlines()
    z, b, s = method.tape
    assert [lines[i + 1].strip() for i in (z, b, s)] == \
        ["self.optimizer.zero_grad()", "loss.backward()", "self.optimizer.step()"]
    text = printer.method_text(method)
    assert "        loss = keras.ops.mean(keras.ops.square(out - y)) + 0.1 * keras.ops.mean(" \
           "keras.ops.sum(keras.ops.abs(out), axis=1))" in text.splitlines()
    assert "    with tf.GradientTape() as tape:" in text.splitlines()
    assert "    grads = tape.gradient(loss, self.trainable_weights)" in text.splitlines()
    assert "zero_grad" not in text and "backward" not in text and ".step()" not in text
    assert printer.trackers(own) == [("tracker", 'keras.metrics.Mean(name="loss")')]
    assert printer.imports(own) == ("import tensorflow as tf",) and printer.imports(None) == ()


def test_every_function_the_reader_maps_is_a_tensor_function():
    """A torch function own_step.py maps to a name outside ir/tensor_functions.py would fail
    while reading (mark() refuses it): every table entry is in the vocabulary."""
    from transpiler.frontend_ast.torch import own_step
    from transpiler.ir.tensor_functions import TENSOR_FUNCTIONS

    names = {*own_step._UNARY.values(), *own_step._REDUCE.values(), *own_step._BINARY.values(),
             "softmax", "log_softmax", "clip", "stop_gradient", *(f"losses.{k}" for k in own_step._LOSS_FUNCTIONS)}
    assert names <= TENSOR_FUNCTIONS, names - TENSOR_FUNCTIONS


def test_a_step_whose_code_reads_as_a_mark_stays_a_marked_stub():
    result = translate(_torch_own('        loss = ((self(x) - y) ** 2).mean()\n        print("$exp(")'),
                       "net.py", "keras")
    assert any("reads as a tensor-function mark" in d.message for d in result.stubs), \
        [d.message for d in result.stubs]


def test_own_train_step_numerics_match_step_by_step():
    """T1's and K1's own steps from the same weights on the same batches: the logged losses
    agree step by step (Keras' Adam in both), and so does test_step after training."""
    import torch  # noqa: F401  (torch before tensorflow in one process)
    from torch_keras_harness import load_source, randomize_torch
    import keras

    from transpiler.weights.torch_source import keras_layer, keras_weights

    t1 = translate(KERAS, "own.py", "pytorch", exact=True)  # (training equivalence: Keras' Adam in T1)
    k1 = translate(t1.text, "own_torch.py", "keras", exact=True)
    tmod, kmod = load_source(t1.text, "own_t1"), load_source(k1.text, "own_k1")
    model, kmodel = tmod.build_model(), kmod.build_model()
    randomize_torch(model, seed=3)
    md = k1.program.models[0]
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    model.optimizer = tmod.KerasAdam(model.parameters(), lr=1e-2, betas=(0.9, 0.999), eps=1e-07)
    kmodel.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2))
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 8)).astype("float32")
    y = rng.integers(0, 3, size=40)
    model.train()
    for start in range(0, 40, 8):
        xb, yb = x[start:start + 8], y[start:start + 8]
        logs_t = model.train_step((torch.from_numpy(xb), torch.from_numpy(yb)))
        logs_k = kmodel.train_step((keras.ops.convert_to_tensor(xb), keras.ops.convert_to_tensor(yb)))
        assert sorted(logs_t) == sorted(logs_k) == ["loss", "penalty"]
        for key in logs_t:
            a, b = float(logs_t[key]), float(keras.ops.convert_to_numpy(logs_k[key]))
            assert abs(a - b) <= 1e-4 * max(abs(a), 1e-6), (start, key, a, b)
    model.eval()
    for tracker in model.metrics:
        tracker.reset_state()
    for tracker in kmodel.metrics:
        tracker.reset_state()
    with torch.no_grad():
        test_t = float(model.test_step((torch.from_numpy(x), torch.from_numpy(y)))["loss"])
    test_k = float(keras.ops.convert_to_numpy(kmodel.test_step((x, y))["loss"]))
    assert abs(test_t - test_k) <= 1e-4 * abs(test_t), (test_t, test_k)


def _checkpoint_round(tmp_path, t1_text: str, x: np.ndarray, seed: int, scale: float = 0.3) -> None:
    """T1 with random weights saved as safetensors → ``transpile --to keras --weights ...
    --weights-out ...``: the Keras model loads the file, agrees with torch in inference mode,
    and the file has the groups Keras' own ``save_weights`` writes for that model."""
    import torch  # noqa: F401  (torch before tensorflow in one process)
    from safetensors.torch import save_file
    from torch_keras_harness import load_source, randomize_torch

    from transpiler.cli import run

    src = tmp_path / "model_torch.py"
    src.write_text(t1_text, encoding="utf-8")
    model = load_source(t1_text, f"t1_weights_{seed}").build_model()
    randomize_torch(model, seed=seed, scale=scale)
    model.eval()
    save_file(model.state_dict(), str(tmp_path / "w.safetensors"))
    out = tmp_path / "model_keras.py"
    assert run([str(src), "--to", "keras", "-o", str(out), "--weights", str(tmp_path / "w.safetensors"),
                "--weights-out", str(tmp_path / "w.weights.h5"), "-q"]) == 0
    kmodel = load_source(out.read_text(encoding="utf-8"), f"k1_weights_{seed}").build_model()
    kmodel.load_weights(str(tmp_path / "w.weights.h5"))
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    assert np.max(np.abs(np.asarray(kmodel(x, training=False)) - expected)) <= 1e-5
    kmodel.save_weights(str(tmp_path / "native.weights.h5"))
    assert _h5_groups(tmp_path / "w.weights.h5") == _h5_groups(tmp_path / "native.weights.h5")


def test_own_train_step_checkpoint_converts_to_the_subclass_layout(tmp_path):
    """The model printed as a subclass for its own train_step: the checkpoint is in the
    subclass layout (a layer whose attribute sorts before ``layers`` at the top; it had been
    the functional layout, which Keras 3.15 happens to load into the subclass too)."""
    t1 = translate(KERAS, "own.py", "pytorch")
    _checkpoint_round(tmp_path, t1.text, np.random.default_rng(2).normal(size=(4, 8)).astype("float32"), 5)


# ---------------------------------------------------------------------------------
# A step that calls the model's submodules (corpus/keras/vae.py's torch translation):
# the Keras model is built of them (frontend_ast/torch/parts)
# ---------------------------------------------------------------------------------
def _vae_t1_k1(exact: bool = False):
    import os

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpus", "keras", "vae.py")
    with open(path, encoding="utf-8") as fh:
        t1 = translate(fh.read(), path, "pytorch", exact=exact)
    return t1, translate(t1.text, "vae_torch.py", "keras", exact=exact)


def test_step_calling_submodules_builds_the_keras_model_of_them():
    t1, k1 = _vae_t1_k1()
    assert "z_mean, z_log_var, z = self.encoder(data)" in t1.text  # (what is read back)
    assert not k1.stubs, [str(d) for d in k1.stubs]
    lines = k1.text.splitlines()
    for line in ["class Encoder(layers.Layer):", "class Decoder(layers.Layer):", "class VAE(keras.Model):",
                 '        self.encoder = Encoder(name="encoder")',
                 "        z_mean, z_log_var, z = self.encoder(inputs, training=training)",
                 "            z_mean, z_log_var, z = self.encoder(data, training=True)",
                 "            reconstruction = self.decoder(z, training=True)",
                 "        grads = tape.gradient(total_loss, self.trainable_weights)",
                 "    vae.fit(x, batch_size=64, epochs=5, verbose=2)"]:
        assert line in lines, line
    assert lines.index("class Encoder(layers.Layer):") < lines.index("class VAE(keras.Model):")


def test_step_calling_submodules_trains_like_torch_step_by_step():
    """T1's VAE and K1's, same weights, batches and noise: every logged loss agrees."""
    import torch  # noqa: F401  (torch before tensorflow in one process)
    from torch_keras_harness import SameNoise, load_source, randomize_torch
    import keras

    from transpiler.weights.torch_source import keras_layer, keras_weights

    t1, k1 = _vae_t1_k1(exact=True)  # (a training-equivalence test: Keras' Adam, written out in T1)
    tmod, kmod = load_source(t1.text, "vae_t1"), load_source(k1.text, "vae_k1")
    model, kmodel = tmod.build_model(), kmod.build_model()
    randomize_torch(model, seed=4, scale=0.1)
    md = k1.program.models[0]
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    model.optimizer = tmod.KerasAdam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-07)
    kmodel.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-3))
    x = tmod.make_digits(48)
    model.train()
    for start in range(0, 48, 16):
        xb = x[start:start + 16]
        noise = SameNoise(start)
        with noise.recording():
            logs_t = model.train_step(torch.from_numpy(xb))
        with noise.replaying():
            logs_k = kmodel.train_step(keras.ops.convert_to_tensor(xb))
        assert sorted(logs_t) == sorted(logs_k) == ["kl_loss", "loss", "reconstruction_loss"]
        for key in logs_t:
            a, b = float(logs_t[key]), float(keras.ops.convert_to_numpy(logs_k[key]))
            assert abs(a - b) <= 1e-4 * max(abs(a), 1e-6), (start, key, a, b)


def test_step_calling_submodules_checkpoint_has_keras_own_layout(tmp_path):
    """``--weights`` for the model built of its submodules: each part a group of its own."""
    t1, _ = _vae_t1_k1()
    _checkpoint_round(tmp_path, t1.text, np.random.default_rng(2).random(size=(4, 64)).astype("float32"), 6, 0.1)


def test_module_level_program_has_the_helpers_before_the_model_is_built():
    """Keras → torch with the training code at module level (no ``main()``): the generated
    ``Mean`` tracker class (which the model's ``__init__`` makes) is defined before the line
    that builds the model (it came after it: NameError when run)."""
    import torch  # noqa: F401

    head, main = KERAS.split("def main():")
    body = main.split('if __name__ == "__main__":')[0]
    src = head + "\n".join(line[4:] for line in body.splitlines())
    t1 = translate(src, "own_module_level.py", "pytorch")
    assert not t1.stubs
    lines = t1.text.splitlines()
    assert lines.index("class Mean:") < lines.index("model = build_model()")
    namespace = {"__name__": "own_module_level"}
    exec(compile(t1.text, "own_module_level_torch.py", "exec"), namespace)  # trains 2 epochs, evaluates
    assert isinstance(namespace["model"], torch.nn.Module)
