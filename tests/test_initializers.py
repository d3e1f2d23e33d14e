"""Keras' default initializers are reproduced in the generated reset_parameters() under
--exact; without it the module keeps torch's own initialisation, except for the weights whose
initializer the program chose."""

from __future__ import annotations

import math

import pytest
import torch

from transpiler import verify
from transpiler.translate import translate

HEADER = "import keras\nfrom keras import layers\n\n\ndef build_model():\n"


def build(body: str, exact: bool = True):
    result = translate(HEADER + body, "case.py", exact=exact)
    torch.manual_seed(0)
    return verify.load_generated(result.text).build_model(), result.text


def test_default_output_keeps_torch_initialisation_and_the_chosen_initializers():
    """Idiomatic default: no reset_parameters for Keras' defaults (torch's kaiming_uniform(a=sqrt(5))
    bound 1/sqrt(fan_in) and its uniform bias stand, reported as a numeric difference), but an
    initializer the program chose is the program's meaning and is kept."""
    body = ("    x = keras.Input(shape=(300,))\n"
            "    y = layers.Dense(200, name='plain')(x)\n"
            "    return keras.Model(x, layers.Dense(4, kernel_initializer='zeros', name='chosen')(y))\n")
    module, text = build(body, exact=False)
    bound = 1 / math.sqrt(300)
    assert module.plain.weight.abs().max() <= bound and module.plain.weight.abs().max() > 0.9 * bound
    assert torch.count_nonzero(module.plain.bias) > 0  # torch's uniform bias, not Keras' zeros
    assert torch.count_nonzero(module.chosen.weight) == 0
    assert "nn.init.xavier_uniform_(self.plain.weight)" not in text
    differences = translate(HEADER + body, "case.py").differences
    assert any(d.startswith("initial weights: torch's default initialisation") for d in differences)
    assert translate(HEADER + body, "case.py", exact=True).differences == []


def test_dense_and_conv_use_glorot_uniform_and_zero_bias():
    module, text = build(
        "    x = keras.Input(shape=(10, 10, 8))\n"
        "    y = layers.Conv2D(16, 3, name='conv')(x)\n"
        "    y = layers.GlobalAveragePooling2D()(y)\n"
        "    return keras.Model(x, layers.Dense(300, name='head')(y))\n")
    conv_bound = math.sqrt(6 / (8 * 9 + 16 * 9))
    dense_bound = math.sqrt(6 / (16 + 300))
    assert module.conv.weight.abs().max() <= conv_bound
    assert module.conv.weight.abs().max() > 0.9 * conv_bound
    assert module.head.weight.abs().max() <= dense_bound
    assert module.head.weight.abs().max() > 0.9 * dense_bound
    assert torch.count_nonzero(module.conv.bias) == 0 and torch.count_nonzero(module.head.bias) == 0
    assert "xavier_uniform_" in text


def test_depthwise_uses_keras_fans_not_torch_fans():
    module, _ = build(
        "    x = keras.Input(shape=(10, 10, 32))\n"
        "    return keras.Model(x, layers.DepthwiseConv2D(3, depth_multiplier=2, name='dw')(x))\n")
    bound = math.sqrt(6 / ((32 + 2) * 9))  # Keras: fan_in = 9 * 32, fan_out = 9 * 2
    w = module.dw.weight
    assert w.abs().max() <= bound and w.abs().max() > 0.9 * bound


def test_lstm_orthogonal_recurrent_kernel_and_unit_forget_bias():
    module, _ = build(
        "    x = keras.Input(shape=(5, 6))\n"
        "    return keras.Model(x, layers.LSTM(8, name='lstm')(x))\n")
    w_hh = module.lstm.weight_hh_l0.detach()
    assert torch.allclose(w_hh.T @ w_hh, torch.eye(8), atol=1e-5)
    b = module.lstm.bias_ih_l0.detach()
    assert torch.all(b[8:16] == 1) and torch.count_nonzero(b[:8]) == 0 and torch.count_nonzero(b[16:]) == 0
    assert torch.count_nonzero(module.lstm.bias_hh_l0) == 0
    bound = math.sqrt(6 / (6 + 32))
    assert module.lstm.weight_ih_l0.abs().max() <= bound


def test_embedding_uniform_005_and_prelu_zero():
    module, _ = build(
        "    x = keras.Input(shape=(5,), dtype='int32')\n"
        "    y = layers.Embedding(100, 16, name='emb')(x)\n"
        "    return keras.Model(x, layers.PReLU(name='act')(y))\n")
    w = module.emb.weight
    assert w.abs().max() <= 0.05 and w.abs().max() > 0.04
    assert torch.count_nonzero(module.act) == 0


@pytest.mark.parametrize("initializer, check", [
    ("he_uniform", lambda w: w.abs().max() <= math.sqrt(6 / 20)),
    ("zeros", lambda w: torch.count_nonzero(w) == 0),
    ("ones", lambda w: torch.all(w == 1)),
])
def test_user_initializers_are_reproduced(initializer, check):
    module, _ = build(
        "    x = keras.Input(shape=(20,))\n"
        f"    return keras.Model(x, layers.Dense(50, kernel_initializer='{initializer}', name='fc')(x))\n")
    assert check(module.fc.weight.detach())


@pytest.mark.parametrize("units", [4, 5, 7])
def test_builder_called_with_other_arguments_builds_that_model(units):
    """A builder parameter is a constructor argument of the generated module (no "transpile again"
    guard): other arguments give the model Keras would build for them, sizes derived from the
    parameter included, with Keras' initializer bounds for the new fans."""
    result = translate(
        "import keras\nfrom keras import layers\n\n\n"
        "def build_model(units=4):\n"
        "    return keras.Sequential([keras.Input(shape=(3,)), layers.Dense(units, activation='relu'),\n"
        "                             layers.Dense(units * 2)])\n", "case.py")
    assert "is translated for" not in result.text
    module = verify.load_generated(result.text)
    torch.manual_seed(0)
    model = module.build_model(units=units)
    assert (model.fc1.in_features, model.fc1.out_features) == (3, units)
    assert (model.fc2.in_features, model.fc2.out_features) == (units, 2 * units)
    assert model.fc2.weight.abs().max() <= math.sqrt(6 / (units + 2 * units))
    x = torch.randn(2, 3)
    with torch.no_grad():
        for layer in (model.fc1, model.fc2):   # non-zero biases, so the check sees them
            layer.bias.uniform_(-1, 1)
        expected = torch.relu(x @ model.fc1.weight.T + model.fc1.bias) @ model.fc2.weight.T + model.fc2.bias
        out = model(x)
    assert out.shape == (2, 2 * units)
    torch.testing.assert_close(out, expected)
    assert module.build_model().fc2.out_features == 8   # the default stays the user's


@pytest.mark.parametrize("layer, check", [
    ("layers.Embedding(100, 16, embeddings_initializer='zeros', name='emb')",
     lambda w: torch.count_nonzero(w) == 0),
    ("layers.Embedding(100, 16, 'ones', name='emb')", lambda w: torch.all(w == 1)),  # by position
    ("layers.Embedding(100, 16, embeddings_initializer='uniform', name='emb')",
     lambda w: 0.04 < w.abs().max() <= 0.05),
])
def test_embedding_initializer_is_reproduced(layer, check):
    """An initializer the layer's signature declares (Embedding's, by keyword or position) is
    reproduced, not refused as an unsupported argument."""
    module, _ = build(
        "    x = keras.Input(shape=(5,), dtype='int32')\n"
        f"    return keras.Model(x, {layer}(x))\n")
    assert check(module.emb.weight.detach())


@pytest.mark.parametrize("initializer, check", [
    ("keras.initializers.RandomNormal(stddev=2.0)", lambda w: 1.8 < float(w.std()) < 2.2),
    ("keras.initializers.RandomNormal(5.0, 0.01)", lambda w: abs(float(w.mean()) - 5.0) < 0.01),  # by position
    ("keras.initializers.RandomUniform(minval=1.0, maxval=1.5)", lambda w: bool(((w >= 1.0) & (w <= 1.5)).all())),
    ("keras.initializers.TruncatedNormal(stddev=0.1, seed=3)", lambda w: float(w.abs().max()) <= 0.2),
    ("keras.initializers.Constant(0.25)", lambda w: bool((w == 0.25).all())),
    ("keras.initializers.Zeros()", lambda w: torch.count_nonzero(w) == 0),
])
def test_initializer_objects_with_their_arguments_are_reproduced(initializer, check):
    """An initializer written as an object (``RandomNormal(stddev=2.0)``) draws what its
    arguments say, on a layer's weight and on a custom layer's own weight (add_weight)."""
    module, _ = build(
        "    x = keras.Input(shape=(40,))\n"
        f"    return keras.Model(x, layers.Dense(50, kernel_initializer={initializer}, name='fc')(x))\n")
    assert check(module.fc.weight.detach())
    result = translate(
        "import keras\nfrom keras import layers\n\n\nclass Scale(layers.Layer):\n"
        "    def build(self, input_shape):\n"
        f"        self.w = self.add_weight(shape=(40, 50), initializer={initializer}, name='w')\n\n"
        "    def call(self, x):\n        return x @ self.w\n\n\n"
        "def build_model():\n    x = keras.Input(shape=(40,))\n    return keras.Model(x, Scale(name='scale')(x))\n",
        "case.py")
    assert not any("not reproduced" in d.message for d in result.diagnostics), [str(d) for d in result.diagnostics]
    model = verify.load_generated(result.text).build_model()
    assert check(next(p for p in model.parameters() if p.shape == (40, 50)).detach())


def test_an_initializer_not_reproduced_falls_back_to_the_keras_default_with_a_warning():
    result = translate(HEADER + "    x = keras.Input(shape=(5,), dtype='int32')\n"
                       "    init = keras.initializers.Identity(gain=2.0)\n"
                       "    return keras.Model(x, layers.Embedding(9, 4, embeddings_initializer=init)(x))\n",
                       "case.py")
    assert "nn.init.uniform_(self.embedding1.weight, -0.05, 0.05)" in result.text
    assert any("embeddings_initializer" in d.message and "uniform used" in d.message
               for d in result.diagnostics), [str(d) for d in result.diagnostics]


@pytest.mark.parametrize("initializer, scale, mode, dist", [
    ("he_normal", 2.0, "in", "normal"),
    ("glorot_normal", 1.0, "avg", "normal"),
    ("lecun_normal", 1.0, "in", "normal"),
    ("lecun_uniform", 1.0, "in", "uniform"),
])
@pytest.mark.parametrize("layer, name, fans", [
    ("layers.Dense(400, kernel_initializer='INIT', name='w')", "w.weight", (60, 400)),
    ("layers.Conv1D(300, 5, kernel_initializer='INIT', name='w')", "w.weight", (5 * 60, 5 * 300)),
])
def test_variance_scaling_initializers_by_name(initializer, scale, mode, dist, layer, name, fans):
    """kernel_initializer='he_normal' (ResNets) was reported as not reproduced and drew
    glorot_uniform: Keras' truncated normal (or uniform) with the Keras weight's fans."""
    module, text = build("    x = keras.Input(shape=(12, 60))\n"
                         f"    return keras.Model(x, {layer.replace('INIT', initializer)}(x))\n")
    w = dict(module.named_parameters())[name].detach()
    fan = fans[0] if mode == "in" else sum(fans) / 2
    if dist == "normal":
        std = math.sqrt(scale / fan) / 0.87962566103423978
        assert float(w.abs().max()) <= 2 * std  # truncated at two standard deviations
        assert abs(float(w.std()) - std * 0.87962566103423978) < 0.05 * std  # the truncated normal's std
    else:
        limit = math.sqrt(3 * scale / fan)
        assert 0.98 * limit < float(w.abs().max()) <= limit
    assert "trunc_normal_" in text or "uniform_" in text


@pytest.mark.parametrize("args", ["0.5, mode='fan_avg', distribution='uniform'", "2.0",
                                  "scale=3.0, mode='fan_out', distribution='untruncated_normal'",
                                  "1e-10, 'fan_avg', 'uniform'"])
@pytest.mark.parametrize("layer, weight", [("layers.Dense(300, kernel_initializer=INIT, name='w')(x)", "w.weight"),
                                           ("layers.Reshape((20, 20, 1))(x)\n    y = layers.Conv2D(64, 3, "
                                            "kernel_initializer=INIT, name='w')(y)", "w.weight")])
def test_variance_scaling_returned_by_a_helper_draws_like_keras(args, layer, weight):
    """keras.io ddpm's ``kernel_init(scale)`` returns ``VarianceScaling(scale, mode="fan_avg",
    distribution="uniform")``: the Keras weight's fans decide the bound (or the standard
    deviation), so the torch weight draws what Keras draws."""
    import keras

    source = ("import keras\nfrom keras import layers\n\n\ndef kernel_init(scale):\n"
              "    return keras.initializers.VarianceScaling(SCALE)\n\n\n"
              "def build_model():\n    x = keras.Input(shape=(400,))\n    y = LAYER\n"
              "    return keras.Model(x, y)\n").replace("LAYER", layer.replace("INIT", "kernel_init(1.0)")) \
        .replace("SCALE", args)
    result = translate(source, "case.py")
    assert not any("not reproduced" in d.message for d in result.diagnostics), [str(d) for d in result.diagnostics]
    torch.manual_seed(0)
    module = verify.load_generated(result.text).build_model()
    ours = module.get_submodule(weight.split(".")[0]).weight.detach().numpy()
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)  # noqa: S102  (the test's own source)
    keras.utils.set_random_seed(0)
    theirs = namespace["build_model"]().get_layer("w").kernel.numpy()
    assert ours.size == theirs.size
    assert abs(ours.std() / theirs.std() - 1) < 0.05, (ours.std(), theirs.std())
    assert abs(abs(ours).max() / abs(theirs).max() - 1) < 0.15, (abs(ours).max(), abs(theirs).max())
