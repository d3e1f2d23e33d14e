"""Keras Layer and Model subclasses: interpreted (``__init__``, ``build``, ``call``) into the IR.

Each case transpiles a script defining subclasses, builds the Keras model, maps its
weights into the generated module and compares outputs (≤ 1e-5); what cannot be
translated faithfully (a branch on ``training`` whose two sides differ in shape, a model
whose input shape is never given) must be a reported stub.
"""

from __future__ import annotations

import ast
import os
import re

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow)
import keras
from safetensors.torch import load_file

from harness import check_source, load_source_module, max_error, randomize_keras_weights
from transpiler import verify
from transpiler.translate import translate
from transpiler.weights.convert import keras_to_torch

HEAD = "import keras\nfrom keras import layers\nimport tensorflow as tf\n\n\n"

CONV_BLOCK = HEAD + '''class ConvBlock(layers.Layer):
    def __init__(self, filters, **kwargs):
        super().__init__(**kwargs)
        self.conv = layers.Conv2D(filters, 3, padding="same")
        self.bn = layers.BatchNormalization()

    def call(self, x, training=None):
        return keras.ops.relu(self.bn(self.conv(x), training=training))


class Net(keras.Model):
    def __init__(self, classes=5):
        super().__init__()
        self.block1 = ConvBlock(8)
        self.pool = layers.MaxPooling2D()
        self.block2 = ConvBlock(12)
        self.flatten = layers.Flatten()
        self.head = layers.Dense(classes)

    def call(self, inputs, training=False):
        x = self.pool(self.block1(inputs, training=training))
        x = self.block2(x, training=training)
        return self.head(self.flatten(x))


def build_model():
    model = Net()
    model.build((None, 10, 9, 3))
    return model
'''

BUILD_AND_OPS = HEAD + '''class Residual(layers.Layer):
    def __init__(self, hidden=16, **kwargs):
        super().__init__(**kwargs)
        self.hidden = hidden

    def build(self, input_shape):
        self.inner = layers.Dense(self.hidden, activation="relu")
        self.outer = layers.Dense(input_shape[-1])

    def call(self, x):
        return tf.add(x, self.outer(self.inner(x)))


class Tower(keras.Model):
    def __init__(self, depth=2):
        super().__init__(name="tower")
        self.stem = layers.Dense(6)
        self.blocks = [Residual(10) for _ in range(depth)]
        self.head = layers.Dense(3, activation="softmax")

    def call(self, inputs):
        x = keras.ops.relu(self.stem(inputs))
        for block in self.blocks:
            x = block(x)
        x = keras.ops.multiply(x, x)
        return self.head(keras.ops.concatenate([x, inputs], axis=-1))


def build_model():
    model = Tower()
    model(keras.Input(shape=(7,)))
    return model
'''

MODEL_AS_LAYER = HEAD + '''class Encoder(keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = layers.Dense(8, activation="tanh")
        self.d2 = layers.Dense(4)

    def call(self, x):
        return self.d2(self.d1(x))


def build_model():
    encoder = Encoder()
    inputs = keras.Input(shape=(6,))
    features = encoder(inputs)
    outputs = layers.Dense(2)(layers.Concatenate()([features, inputs]))
    return keras.Model(inputs, outputs)
'''


@pytest.mark.parametrize("source", [CONV_BLOCK, BUILD_AND_OPS, MODEL_AS_LAYER],
                         ids=["conv-block-build", "build-method-and-ops", "model-as-layer"])
def test_subclassed_models_are_numerically_equal(source):
    checked = check_source(source, batch=4)
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5
    assert not checked.translation.stubs


def test_each_layer_class_becomes_a_module_class_with_its_attribute_names():
    result = translate(CONV_BLOCK, "net.py")
    text = result.text
    # the user's Layer class is an nn.Module of the same name, where the Keras class was
    assert text.count("class ConvBlock(nn.Module):") == 1
    assert text.index("class ConvBlock(nn.Module):") < text.index("class Net(nn.Module):")
    # sizes that differ between instances (and the user's constructor arguments) are parameters
    assert "def __init__(self, in_channels, filters):" in text
    assert "self.conv = nn.Conv2d(in_channels, filters, kernel_size=3, padding=1)" in text
    assert "self.bn = nn.BatchNorm2d(filters, eps=0.001, momentum=0.01)" in text
    assert "self.block1 = ConvBlock(3, 8)" in text and "self.block2 = ConvBlock(8, 12)" in text
    assert "x = self.block1(inputs)" in text
    assert "translated into Net, where its call() now runs inline" not in text


def test_state_dict_keys_follow_the_module_tree():
    from transpiler.weights.mapping import torch_plan

    graph = translate(CONV_BLOCK, "net.py").program.models[0].graph
    keys = [e.key for e in torch_plan(graph)]
    assert keys[:2] == ["block1.conv.weight", "block1.conv.bias"]
    assert "block2.bn.running_mean" in keys and "head.weight" in keys
    assert not any(k.startswith("block1_") for k in keys)


def test_attribute_lists_become_module_lists_looped_in_forward():
    text = translate(BUILD_AND_OPS, "t.py").text
    assert "self.blocks = nn.ModuleList([Residual(10) for _ in range(2)])" in text
    assert "for block in self.blocks:\n            x = block(x)" in text
    assert "self.inner = nn.Linear(6, hidden)" in text  # sized in build(), hidden from __init__


def test_a_model_used_as_a_layer_is_a_submodule_with_its_own_names():
    text = translate(MODEL_AS_LAYER, "net.py").text
    assert "self.encoder = Encoder()" in text
    forward = text[text.index("class Encoder"):text.index("class Net")]
    assert "def forward(self, x):" in forward and "inputs" not in forward and "features" not in forward


TRAINING_BRANCHES = HEAD + '''class Jitter(layers.Layer):
    """Scales while training, shifts at inference."""

    def call(self, inputs, training=None):
        if training:
            # a deterministic stand-in for noise
            return inputs * 0.9
        return inputs + 1.0


class Gate(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(units)
        self.extra = layers.Dense(units)

    def call(self, x, training=None):
        h = self.dense(x)
        if not training:
            h = keras.ops.relu(h)
        else:
            scale = keras.ops.sigmoid(self.extra(x))
            h = h * scale
        if training is True:
            h = h - 0.5
        return h * (0.5 if training else 2.0)


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.jitter = Jitter()
        self.gate = Gate(5)
        self.head = layers.Dense(3)

    def call(self, inputs, training=None):
        x = self.jitter(inputs, training=training)
        x = self.gate(x, training=training)
        if training:
            x = keras.ops.tanh(x)
        return self.head(x)


def build_model():
    model = Net()
    model.build((None, 6))
    return model
'''


@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
def test_branches_on_training_are_equal_in_both_modes(training):
    """``if training:`` in call(): the torch module takes the same branch under
    ``model.train()`` / ``model.eval()`` as Keras under training=True/False."""
    checked = check_source(TRAINING_BRANCHES, batch=4, training=training)
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5
    assert not checked.translation.stubs


def test_branches_on_training_become_self_training_blocks():
    text = translate(TRAINING_BRANCHES, "net.py").text
    jitter = text[text.index("class Jitter"):text.index("class Gate")]
    assert "        if self.training:\n            # a deterministic stand-in for noise\n" \
           "            return inputs * 0.9\n        return inputs + 1.0\n" in jitter
    gate = text[text.index("class Gate"):text.index("class Net")]
    # the gate's extra Dense runs only while training: it is called inside the branch
    assert gate.index("if self.training:") < gate.index("self.extra(x)")
    assert "training" not in text.split("def forward(self, inputs):")[-1].split("return")[0].split("if")[0]


@pytest.mark.parametrize("body, reason", [
    ('''class Gated(keras.Model):
    def __init__(self):
        super().__init__()
        self.a = layers.Dense(4)

    def call(self, x, training=False):
        if training:
            x = self.a(x)
        return x


def build_model():
    model = Gated()
    model.build((None, 6))
    return model
''', "the training branch gives"),
    ('''class Gated(keras.Model):
    def __init__(self):
        super().__init__()
        self.a = layers.Dense(4)

    def call(self, x, training=False):
        return self.a(x) * training


def build_model():
    model = Gated()
    model.build((None, 6))
    return model
''', "neither a tensor nor a number known statically"),
    ('''class Lazy(keras.Model):
    def __init__(self):
        super().__init__()
        self.d = layers.Dense(3)

    def call(self, x):
        return self.d(x)


def build_model():
    return Lazy()
''', "input shape is never given"),
], ids=["training-branch-changes-shape", "training-as-a-value", "never-built"])
def test_untranslatable_subclasses_are_reported(body, reason):
    result = translate(HEAD + body, "case.py")
    assert not result.program.models
    assert any(reason in d.message for d in result.stubs), [str(d) for d in result.diagnostics]


ADD_WEIGHT = HEAD + '''class ScaleShift(layers.Layer):
    """Learned per-channel scale and shift, made with add_weight in build()."""

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="scale")
        self.shift = self.add_weight(shape=(input_shape[-1],), initializer="zeros", trainable=False)

    def call(self, x):
        return keras.ops.add(keras.ops.multiply(x, self.scale), self.shift)


class Gain(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.gain = self.add_weight(shape=(1,), initializer="random_normal")

    def call(self, x):
        return x * self.gain


def build_model():
    inputs = keras.Input(shape=(9, 8, 3))
    x = layers.Conv2D(4, 3, padding="same")(inputs)
    x = ScaleShift()(x)
    x = layers.MaxPooling2D()(x)
    x = Gain()(x)
    x = layers.Flatten()(x)
    x = layers.Dense(6)(x)
    x = ScaleShift()(x)
    return keras.Model(inputs, layers.Dense(2)(x))
'''


def test_add_weight_becomes_an_nn_parameter():
    text = translate(ADD_WEIGHT, "net.py").text
    assert "self.scale = nn.Parameter(torch.empty(4))" in text
    assert "self.shift = nn.Parameter(torch.empty(4), requires_grad=False)" in text  # trainable=False
    assert "self.gain = Gain()" in text and "x = x * self.gain" in text
    # per-channel weights broadcast over the last axis: channels-last there, and said so
    assert "# channels-last here: a lower-rank operand broadcasts" in text
    assert "nn.init.ones_(self.scale)" in text and "nn.init.normal_(self.gain, 0.0, 0.05)" in text
    checked = check_source(ADD_WEIGHT, batch=4)
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5


SCALAR_WEIGHT = '''
import keras
from keras import layers, ops


class ScaledDense(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform")
        self.scale = self.add_weight(shape=(), initializer="ones", name="scale")

    def call(self, inputs):
        return self.scale * ops.matmul(inputs, self.w)


def build_model():
    inputs = keras.Input(shape=(8,))
    return keras.Model(inputs, ScaledDense(4)(inputs))
'''


def test_scalar_add_weight_is_a_zero_dim_parameter():
    """``add_weight(shape=())`` → ``torch.empty(())``: ``torch.empty()`` raises a TypeError."""
    text = translate(SCALAR_WEIGHT, "net.py").text
    assert "self.scale = nn.Parameter(torch.empty(()))" in text
    checked = check_source(SCALAR_WEIGHT, batch=4)
    assert checked.keras_params == checked.torch_params == 8 * 4 + 1
    assert max_error(checked) <= 1e-5


def _checkpoint_roundtrip(source: str, tmp_path, seed: int) -> float:
    """Keras model of ``source`` with random weights → .weights.h5 → safetensors → the
    generated module: the largest output difference."""
    result = translate(source, "net.py")
    graph = result.program.models[0].graph
    keras.backend.clear_session()
    kmodel = load_source_module(source).build_model()
    verify.ensure_built(kmodel, graph)
    randomize_keras_weights(kmodel, seed)
    ckpt = str(tmp_path / "net.weights.h5")
    kmodel.save_weights(ckpt)
    out = str(tmp_path / "net.safetensors")
    keras_to_torch(graph, ckpt, out)
    tmodel = verify.load_generated(result.text).build_model()
    tmodel.load_state_dict(load_file(out), strict=True)
    inputs = verify.random_inputs(graph, 3, 0)
    return max(c.max_abs for c in verify.run_both(kmodel, tmodel, graph, inputs))


def test_add_weight_checkpoint_converts(tmp_path):
    """Keras saves a layer's own weights under layers/<name>/vars/<i>, trainable first."""
    assert _checkpoint_roundtrip(ADD_WEIGHT, tmp_path, 3) <= 1e-5


def test_subclassed_checkpoint_converts(tmp_path):
    """A subclassed model's .weights.h5 keeps layers under attribute paths (block1/conv)."""
    assert _checkpoint_roundtrip(CONV_BLOCK, tmp_path, 2) <= 1e-5


def test_corpus_subclass_scripts_have_no_stubs():
    root = os.path.join(os.path.dirname(__file__), "..", "corpus", "keras")
    for name in ("subclassed_cnn", "custom_layers", "siamese_encoder"):
        with open(os.path.join(root, f"{name}.py")) as fh:
            result = translate(fh.read(), f"{name}.py")
        assert len(result.program.models) == 1 and not result.stubs, name


def test_report_lists_constructs_and_the_rate(tmp_path, capsys):
    from transpiler.cli import run

    src = tmp_path / "gated.py"
    src.write_text(BUILD_AND_OPS + '''

class Gated(keras.Model):
    def __init__(self):
        super().__init__()
        self.a = layers.Dense(4)

    def call(self, x, training=False):
        if training:
            x = self.a(x)
        return x


def build_gated():
    model = Gated()
    model.build((None, 6))
    return model
''')
    report = tmp_path / "report.md"
    assert run([str(src), "--to", "pytorch", "-o", str(tmp_path / "o.py"), "--report", str(report)]) == 0
    err = capsys.readouterr().err
    text = report.read_text()
    done, total = (int(x) for x in re.search(r"(\d+)/(\d+) constructs translated", text).groups())
    assert total - done == 2  # the Gated class and its builder's failing branch
    assert f"{done}/{total} constructs translated" in err
    assert "| **manual** class Gated(keras.Model): |" in text
    assert "`self.blocks_0_inner = nn.Linear(6, 10)`" in text
    assert run([str(src), "--to", "pytorch", "-o", str(tmp_path / "o.py"), "--strict", "-q"]) == 3


# ---------------------------------------------------------------------------------
# Subclassed models built by their first call on data: shapes of run-time arrays
# ---------------------------------------------------------------------------------
PROGRAMS = os.path.join(os.path.dirname(__file__), "programs")


def test_tf_quickstart_for_experts_translates_completely():
    """TensorFlow's "quickstart for experts": a subclassed model never built explicitly,
    called first inside a @tf.function GradientTape step on batches of mnist[..., tf.newaxis]."""
    path = os.path.join(PROGRAMS, "tf_quickstart_experts.py")
    with open(path) as fh:
        result = translate(fh.read(), path)
    assert not result.stubs, [str(d) for d in result.stubs]
    (md,) = result.program.models
    assert md.class_name == "MyModel"
    assert md.graph.inputs[0].shape == (None, 1, 28, 28)  # channels-first
    text = result.text
    # no TensorFlow in the code (comments and strings may name it: the MNIST file's URL does)
    tree = ast.parse(text)
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "tensorflow" not in imported and "tf" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "x_train = x_train[..., None].astype" in text
    assert "self.d1 = nn.Linear(21632, 128)" in text


@pytest.mark.parametrize("expr, shape", [
    ("np.random.rand(64, 8, 3)", (64, 8, 3)),
    ("np.random.randn(10, 4).astype('float32') * 2.0", (10, 4)),
    ("np.random.normal(0, 1, size=(6, 5))", (6, 5)),
    ("np.random.default_rng(0).random((7, 2))", (7, 2)),
    ("np.random.randint(0, 9, size=(12, 30))", (12, 30)),
    ("np.zeros((5, 28, 28)).reshape(-1, 28, 28, 1)", (5, 28, 28, 1)),
    ("np.expand_dims(np.ones((5, 6)), -1)", (5, 6, 1)),
    ("np.ones((100, 6))[:40, ..., None]", (40, 6, 1)),
])
def test_array_shapes_are_tracked(expr, shape):
    from transpiler.frontend_ast.keras.frontend import ArrayVal, KerasFrontend

    frontend = KerasFrontend(f"import numpy as np\nx = {expr}\n", "a.py")
    frontend.run()
    value = frontend.globals.vars["x"]
    assert isinstance(value, ArrayVal) and value.shape == shape


def test_fit_on_data_builds_a_subclassed_model():
    source = HEAD + '''import numpy as np


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(16, activation="relu")
        self.out = layers.Dense(3)

    def call(self, x):
        return self.out(self.hidden(x))


x = np.random.rand(128, 20).astype("float32")
y = np.random.randint(0, 3, size=(128,))
model = Net()
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x, y, epochs=1, batch_size=32)
'''
    result = translate(source, "fit.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "self.hidden = nn.Linear(20, 16)" in result.text


def test_add_weight_golden_case_is_numerically_equal():
    path = os.path.join(os.path.dirname(__file__), "golden", "custom_layer_add_weight", "input.py")
    with open(path) as fh:
        checked = check_source(fh.read(), batch=4)
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5
    assert not checked.translation.stubs


MODELS_AS_LAYERS = HEAD + '''def build_model():
    enc_in = keras.Input(shape=(12,))
    h = layers.Dense(16, activation="relu")(enc_in)
    encoder = keras.Model(enc_in, layers.Dense(8)(h), name="encoder")
    head = keras.Sequential([layers.Dense(8, activation="relu"), layers.Dense(3)], name="head")
    a = keras.Input(shape=(12,))
    b = keras.Input(shape=(12,))
    merged = layers.Concatenate()([encoder(a), encoder(b)])
    return keras.Model([a, b], head(merged))
'''


def test_functional_and_sequential_models_used_as_layers_are_submodules():
    text = translate(MODELS_AS_LAYERS, "net.py").text
    assert "class Encoder(nn.Module):" in text and "class Head(nn.Module):" in text
    assert "self.encoder = Encoder()" in text and "self.head = Head()" in text
    # called twice, one module: shared weights
    assert "self.encoder(a)" in text and "self.encoder(b)" in text
    checked = check_source(MODELS_AS_LAYERS, batch=4)
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5


SEQUENTIAL_OF_CUSTOM = HEAD + '''class ConvBlock(layers.Layer):
    def __init__(self, filters, **kwargs):
        super().__init__(**kwargs)
        self.conv = layers.Conv2D(filters, 3, padding="same")
        self.bn = layers.BatchNormalization()

    def call(self, x):
        return keras.ops.relu(self.bn(self.conv(x)))


def build_model():
    return keras.Sequential([
        keras.Input(shape=(12, 10, 3)),
        ConvBlock(8),
        layers.MaxPooling2D(),
        ConvBlock(16),
        layers.GlobalAveragePooling2D(),
        layers.Dense(4),
    ])


def build_other():
    inputs = keras.Input(shape=(12, 10, 3))
    return keras.Model(inputs, layers.Flatten()(ConvBlock(8)(ConvBlock(8)(inputs))))
'''


def test_custom_layers_in_a_sequential_and_one_class_for_two_models():
    text = translate(SEQUENTIAL_OF_CUSTOM, "net.py").text
    assert text.count("class ConvBlock(nn.Module):") == 1  # both models use it
    assert "self.conv_block = ConvBlock(3, 8)" in text and "self.conv_block2 = ConvBlock(8, 16)" in text
    checked = check_source(SEQUENTIAL_OF_CUSTOM, batch=3)
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5


CUSTOM_STEP_NEEDS_KERAS = HEAD + '''import numpy as np


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.out = layers.Dense(1)

    def call(self, x):
        return self.out(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(y=y, y_pred=self(x, training=True))
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_weights), self.trainable_weights))
        return {"loss": loss}


def build_model():
    model = Net()
    model(keras.Input(shape=(4,)))
    return model


model = build_model()
model.compile(optimizer="adam", loss="mse")
model.fit(np.zeros((8, 4)), np.zeros((8, 1)), epochs=1)
'''


def test_train_step_that_needs_keras_is_a_marked_stub():
    """``self.compute_loss`` has no torch counterpart: the method and the fit() that runs
    it are reported, the model itself is translated."""
    result = translate(CUSTOM_STEP_NEEDS_KERAS, "net.py")
    messages = [d.message for d in result.stubs]
    assert any("train_step(): self.compute_loss" in m for m in messages), messages
    assert any("fit()" in m for m in messages), messages
    assert "class Net(nn.Module)" in result.text and "def train_step" not in result.text


def test_train_step_becomes_a_method_run_by_fit_train_step():
    text = translate(open(os.path.join(os.path.dirname(__file__), "golden", "custom_train_step",
                                       "input.py")).read(), "input.py").text
    method = text[text.index("    def train_step(self, data):"):text.index("def build_model")]
    assert "self.optimizer.zero_grad()" in method and "loss.backward()" in method
    assert "self.optimizer.step()" in method and "GradientTape" not in method and "tape.gradient" not in method
    assert "training=" not in method
    assert "self.loss_tracker = Mean(name=\"loss\")" in text
    assert "model.optimizer = torch.optim.SGD(" in text
    assert "fit_train_step(model, x, y, epochs=3, batch_size=32)" in text


LAYER_ATTRIBUTES = os.path.join(os.path.dirname(__file__), "programs", "custom_step_layer_attributes.py")
LAYER_ATTRIBUTES_STEP = "pred = self.out(keras.ops.relu(self.model(x, training=True)))"


@pytest.mark.parametrize("old, new, reason", [
    # a ReLU layer is F.relu in forward: no self.relu module
    (LAYER_ATTRIBUTES_STEP, "pred = self.out(self.relu(self.model(x, training=True)))",
     "self.relu (its layer is folded into forward's code in torch: no module attribute)"),
    # read, not called: the folded layer is still missing
    (LAYER_ATTRIBUTES_STEP, "act = self.relu\n            pred = self.out(act(self.model(x)))",
     "self.relu (its layer is folded into forward's code in torch: no module attribute)"),
    # nn.Linear without the layer's activation: forward applies torch.tanh after it
    ("self.model = layers.Dense(4)", 'self.model = layers.Dense(4, activation="tanh")',
     "self.model (its torch module leaves the layer's tanh activation to forward's code)"),
], ids=["folded-call", "folded-read", "fused-activation"])
def test_train_step_reading_what_the_module_lacks_is_a_marked_stub(old, new, reason):
    """Every ``self.<name>`` the translated step reads must exist on the printed module and
    compute what the Keras layer does; otherwise the step is a marked stub naming it (not a
    program that dies with AttributeError in fit, or trains another model)."""
    with open(LAYER_ATTRIBUTES) as fh:
        source = fh.read()
    assert source.count(old) == 1
    result = translate(source.replace(old, new), "net.py")
    messages = [d.message for d in result.stubs]
    assert any(m.startswith(f"Net.train_step(): {reason}") for m in messages), messages
    assert any("fit()" in m for m in messages), messages
    assert "class Net(nn.Module)" in result.text and "def train_step" not in result.text


def test_train_step_reading_a_number_init_sets_keeps_it_on_the_module():
    """A plain number the Keras ``__init__`` sets (no layer, no tracker) was missing from the
    torch module, so the step was a stub; now the module sets it and the step reads it."""
    with open(LAYER_ATTRIBUTES) as fh:
        source = fh.read()
    result = translate(source.replace(LAYER_ATTRIBUTES_STEP,
                                      "pred = self.out(keras.ops.relu(self.model(x))) * self.gain"), "net.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "        self.gain = 1.0" in result.text and "def train_step" in result.text
    assert "* self.gain" in result.text


def test_train_step_calls_a_renamed_layer_by_its_torch_name(capsys):
    """``self.model`` (a name nn.Module reserves) is printed as ``self.model_layer``; the
    step calls it by that name, and the whole program runs (tests/test_training_equivalence.py
    compares its losses with Keras')."""
    with open(LAYER_ATTRIBUTES) as fh:
        result = translate(fh.read(), "custom_step_layer_attributes.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    method = result.text[result.text.index("    def train_step(self, data):"):result.text.index("def build_model")]
    assert "self.model_layer = nn.Linear(3, 4)" in result.text
    assert "self.out(torch.relu(self.model_layer(x)))" in method and "self.model(" not in method
    namespace = {"__name__": "generated"}
    exec(compile(result.text, "generated.py", "exec"), namespace)
    namespace["main"]()
    assert capsys.readouterr().out.startswith("Epoch 1/2 - loss: ")


def test_compute_loss_calling_super_is_a_marked_stub():
    """``super().compute_loss(...)`` is Keras' compiled loss: no torch counterpart here."""
    source = CUSTOM_STEP_NEEDS_KERAS.replace("    def train_step(self, data):", '''    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return super().compute_loss(x, y, y_pred, sample_weight) * 2.0

    def unused(self, data):''')
    result = translate(source, "net.py")
    assert any("super()" in d.message for d in result.stubs), [str(d) for d in result.stubs]
    assert any("fit()" in d.message for d in result.stubs), [str(d) for d in result.stubs]


FUNCTIONAL_PARTS = HEAD + '''from keras import ops


class Sampling(layers.Layer):
    def call(self, inputs, training=None):
        z_mean, z_log_var = inputs
        if not training:
            return z_mean
        return z_mean + ops.exp(0.5 * z_log_var) * keras.random.normal(ops.shape(z_mean))


def build_encoder(latent_dim=2):
    inputs = keras.Input(shape=(12,))
    x = layers.Dense(8, activation="relu")(inputs)
    z_mean = layers.Dense(latent_dim, name="z_mean")(x)
    z_log_var = layers.Dense(latent_dim, name="z_log_var")(x)
    z = Sampling()([z_mean, z_log_var])
    return keras.Model(inputs, [z_mean, z_log_var, z], name="encoder")


def build_decoder(latent_dim=2):
    latent_inputs = keras.Input(shape=(latent_dim,))
    x = layers.Dense(8, activation="relu")(latent_inputs)
    return keras.Model(latent_inputs, layers.Dense(12, activation="sigmoid")(x), name="decoder")


class VAE(keras.Model):
    def __init__(self, encoder, decoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder

    def call(self, inputs):
        z_mean, z_log_var, z = self.encoder(inputs)
        return self.decoder(z)


def build_model():
    vae = VAE(build_encoder(), build_decoder())
    vae(keras.Input(shape=(12,)))
    return vae
'''


def test_models_from_other_builders_are_submodules_with_their_own_modules():
    """Keras' VAE example: Functional encoder/decoder from builder functions, passed to a
    Model subclass. They become submodules (the encoder keeps its Sampling module)."""
    checked = check_source(FUNCTIONAL_PARTS, batch=4)
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5
    assert not checked.translation.stubs
    text = checked.translation.text
    vae = text[text.index("class VAE(nn.Module)"):]
    assert "self.encoder = Encoder_2()" in vae and "z_mean, z_log_var, z = self.encoder(inputs)" in vae
    assert text.count("class Sampling(nn.Module)") == 1 and "Sampling_2" not in text


def test_a_subclass_that_builds_itself_in_init_is_read():
    """``self(keras.Input(shape=...), training=...)`` in the model's own ``__init__`` (as the
    torch → Keras printer writes a subclass) gives the input shape: the model is read, with
    its training branch, and computes the same numbers in both modes."""
    source = '''import keras
from keras import layers


class Net(keras.Model):
    def __init__(self, name="Net", **kwargs):
        super().__init__(name=name, **kwargs)
        self.fc = layers.Dense(4, name="fc")
        self.scale = layers.Rescaling(0.5, name="scale")
        self.out = layers.Dense(2, name="out")
        x = keras.Input(shape=(6,), name="x")
        self(x, training=True)
        self(x, training=False)

    def call(self, x, training=None):
        h = self.fc(x)
        if training:
            h = self.scale(h)
        return self.out(h)


def build_model():
    return Net()
'''
    for training in (False, True):
        checked = check_source(source, training=training)
        assert max_error(checked) <= 1e-5, training
        assert checked.keras_params == checked.torch_params
        assert not checked.translation.stubs
    assert "if self.training:" in translate(source, "net.py").text
