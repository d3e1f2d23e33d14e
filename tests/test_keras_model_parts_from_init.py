"""Subclassed Keras models whose parts come from ``__init__`` the way real keras.io programs
write them (deit.py: a ViT whose distilled variant extends it):

* ``tf.Variable(tf.zeros(shape))`` / ``tf.Variable(tf.random.normal(...))`` made in ``__init__``
  are the model's weights (what ``add_weight`` would make);
* ``super().__init__(**kwargs)`` of the script's own base class runs that class's ``__init__``
  (the layers the subclass uses are made there);
* ``if not training or self.regular_training:`` with the other side a static bool is a test
  on the mode, and an ``elif training:`` inside a branch on the mode is decided there;
* ``[x for x in tf.linspace(0.0, 0.1, n)]`` drop rates are static float32 numbers, so
  ``block(drop_prob) if drop_prob else x`` is decided;
* a model first called on ``tf.ones((2, 16, 16, 3))`` is built from that shape;
* a builder read on its own whose ``name=`` is its parameter is translated (it crashed).
"""

from __future__ import annotations

import struct

import pytest
import torch  # noqa: F401  (before TensorFlow)

from harness import check_source, max_error
from transpiler import verify
from transpiler.translate import translate

HEADER = "import keras\nimport numpy as np\nimport tensorflow as tf\nfrom keras import layers\n\n\n"

DISTILLED = HEADER + '''class Base(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.proj = layers.Dense(8)
        initial_value = tf.zeros((1, 1, 8))
        self.cls_token = tf.Variable(initial_value=initial_value, trainable=True, name="cls")
        self.pos = tf.Variable(tf.zeros((1, 5, 8)), name="pos")
        self.head = layers.Dense(3)


class Distilled(Base):
    def __init__(self, regular_training=False, **kwargs):
        super().__init__(**kwargs)
        self.regular_training = regular_training
        self.dist_token = tf.Variable(tf.random.normal((1, 1, 8), stddev=0.02), name="dist")
        self.pos = tf.Variable(tf.zeros((1, 6, 8)), name="pos")
        self.head_dist = layers.Dense(3)

    def call(self, inputs, training=False):
        n = tf.shape(inputs)[0]
        x = self.proj(inputs)
        cls_token = tf.cast(tf.tile(self.cls_token, (n, 1, 1)), x.dtype)
        dist_token = tf.tile(self.dist_token, (n, 1, 1))
        x = tf.concat([cls_token, dist_token, x], axis=1)
        x = self.pos + x
        a, b = self.head(x[:, 0]), self.head_dist(x[:, 1])
        if not training or self.regular_training:
            return (a + b) / 2
        elif training:
            return a - b


def build_model():
    model = Distilled()
    model.build((None, 4, 5))
    return model
'''


@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
def test_variables_base_init_and_joined_mode_test_match_keras(training):
    """The tokens and position embedding made with tf.Variable are parameters Keras' weights
    load into; the base class's Dense layers exist; both modes take Keras' branch."""
    checked = check_source(DISTILLED, batch=4, training=training)
    assert not checked.translation.stubs, checked.translation.text
    # Keras 3 does not track a tf.Variable (not among its weights): the torch module holds them
    # as non-trainable parameters, cls (1, 1, 8) + dist (1, 1, 8) + pos (1, 6, 8)
    assert checked.keras_params + 8 + 8 + 48 == checked.torch_params, checked.translation.text
    assert max_error(checked) <= 1e-5


def test_variables_start_as_their_initial_values():
    """tf.Variable: untracked by Keras 3, never trained (requires_grad=False, said in a
    warning); keras.Variable: a trainable weight."""
    result = translate(DISTILLED, "distilled.py")
    text = result.text
    assert "self.cls_token = nn.Parameter(torch.empty(1, 1, 8), requires_grad=False)" in text
    assert "self.pos = nn.Parameter(torch.empty(1, 6, 8), requires_grad=False)" in text  # (the subclass's)
    assert any("not tracked by Keras" in d.message for d in result.program.diagnostics)
    text = translate(DISTILLED.replace('tf.Variable(tf.zeros((1, 6, 8)), name="pos")',
                                       'keras.Variable(keras.ops.zeros((1, 6, 8)), name="pos")'), "d.py").text
    assert "self.pos = nn.Parameter(torch.empty(1, 6, 8))\n" in text
    assert "torch.empty(1, 5, 8)" not in text
    assert "nn.init.zeros_(self.cls_token)" in text
    init = text[text.index("def reset_parameters"):]
    assert "dist_token" in init and "0.02" in init, init


def test_mode_test_joined_with_a_deciding_flag_is_not_read_as_the_mode():
    """``not training or True`` holds in both modes: never turned into a branch on the mode."""
    source = DISTILLED.replace("def __init__(self, regular_training=False", "def __init__(self, regular_training=True")
    result = translate(source, "distilled.py")
    assert result.stubs, "a test decided by a static flag must not become a branch on the mode"


LINSPACE = HEADER + '''class Scale(layers.Layer):
    def __init__(self, p, **kwargs):
        super().__init__(**kwargs)
        self.p = p

    def call(self, x):
        return x * (1 - self.p)


def block(drop_prob: float, name: str) -> keras.Model:
    inp = layers.Input((8,))
    x = layers.Dense(8)(inp)
    x = Scale(drop_prob)(x) if drop_prob else x
    return keras.Model(inp, x, name=name)


class Net(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        dpr = [x for x in tf.linspace(0.0, 0.1, 3)]
        self.blocks = [block(drop_prob=dpr[i], name=f"b{i}") for i in range(3)]
        self.head = layers.Dense(2)

    def call(self, inputs):
        x = inputs
        for b in self.blocks:
            x = b(x)
        return self.head(x)


model = Net()
model.compile(loss="mse", optimizer="adam")
model.fit(np.zeros((4, 8)), np.zeros((4, 2)), epochs=1)
'''


def test_tf_linspace_drop_rates_decide_the_condition_as_float32():
    result = translate(LINSPACE, "linspace.py")
    assert not [s for s in result.stubs if "condition" in str(s)], result.stubs
    text = result.text
    f32 = [struct.unpack("f", struct.pack("f", v))[0] for v in (0.05, 0.1)]
    assert f"x * {1 - f32[0]!r}" in text and f"x * {1 - f32[1]!r}" in text, text
    b0 = text[text.index("class B0"):text.index("class B1")]
    assert "Scale" not in b0  # drop_prob 0.0: no Scale in the first block


DUMMY_CALL = HEADER + '''class Net(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.projection = keras.Sequential([layers.Conv2D(8, 4, strides=4), layers.Reshape((16, 8))])
        self.head = layers.Dense(2)

    def call(self, inputs):
        x = self.projection(inputs)
        return self.head(x[:, 0])


net = Net()
out = net({maker}((2, 16, 16, 3)))
'''


@pytest.mark.parametrize("maker", ["tf.ones", "tf.zeros", "keras.ops.ones", "tf.random.normal",
                                   "keras.random.uniform"])
def test_a_first_call_on_a_dummy_tensor_builds_the_model(maker):
    """The Sequential inside has no input shape: only the call on a (2, 16, 16, 3) tensor
    builds the model (Keras builds it there)."""
    result = translate(DUMMY_CALL.format(maker=maker), "dummy.py")
    assert "Input ``inputs``: (N, 3, 16, 16) float32, channels-first." in result.text, result.text
    module = verify.load_generated(result.text.split("\nnet = Net()")[0] + "\n")
    out = module.Net()(torch.ones(2, 3, 16, 16))
    assert tuple(out.shape) == (2, 2)


BUILDER_NAMED_BY_ITS_CALLER = HEADER + '''def block(rate, name):
    inp = layers.Input((8,))
    x = layers.Dense(8)(inp)
    x = layers.Dropout(0.1)(x)
    return keras.Model(inp, x, name=name)
'''


def test_builder_whose_model_name_is_a_parameter_translates():
    """Read on its own (never called), ``name=name`` is not a string: the class is named
    as any unnamed model's (this was an internal error: 'Unknown' object has no attribute 'replace')."""
    result = translate(BUILDER_NAMED_BY_ITS_CALLER, "blocks.py")
    assert "class Net(nn.Module):" in result.text and "def block(rate, name):" in result.text
    assert not result.stubs


def test_builder_called_only_from_a_translated_class_goes_with_it():
    """``block()`` is called (once per block) only in Net.__init__, whose translation replaces
    it: no code the output keeps calls it, so it is no stub ("builds another model at each
    call"), and the program runs."""
    result = translate(LINSPACE, "linspace.py")
    assert not result.stubs, [str(s) for s in result.stubs]
    assert "def block(" not in result.text
    module = verify.load_generated(result.text)
    assert sum(p.numel() for p in module.model.parameters()) == 3 * (8 * 8 + 8) + 8 * 2 + 2


UNIT_NORM = HEADER + '''def build_model():
    inp = keras.Input(shape={shape})
    x = {before}
    out = layers.UnitNormalization(axis={axis})(x)
    return keras.Model(inp, out)
'''


@pytest.mark.parametrize("shape, before, axis", [
    ((6,), "layers.Dense(5)(inp)", -1),
    ((7, 6, 3), "layers.Conv2D(4, 3)(inp)", -1),  # channels: dim=1 of the channels-first map
    ((7, 6, 3), "layers.Conv2D(4, 3)(inp)", [1, 2]),  # each channel's map over the spatial axes
    ((5, 6), "layers.Dense(4)(inp)", (1, 2)),
    ((6,), "layers.Dense(5)(inp) * 0.0", -1),  # zero vectors: Keras' epsilon keeps them zero
], ids=["dense", "conv_channels", "conv_spatial", "sequence_both", "zeros"])
def test_unit_normalization_matches_keras(shape, before, axis):
    checked = check_source(UNIT_NORM.format(shape=shape, before=before, axis=axis), batch=4)
    assert "F.normalize(" in checked.translation.text
    assert not checked.translation.stubs
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5


HOLLOW_HELPER = HEADER + '''def mlp(x, units):
    for u in units:
        x = layers.Dense(u)(x)
    return x


def block(name):
    inp = layers.Input((8,))
    x = mlp(inp, [16, 8])
    return keras.Model(inp, x, name=name)


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.blocks = [block(f"b{i}") for i in range(2)]

    def call(self, inputs, training=False):
        x = inputs
        for b in self.blocks:
            x = b(x)
        if training:
            return x, x
        return x


model = Net()
out = model(np.zeros((2, 8)))
'''


def test_helper_of_a_stubbed_per_call_builder_is_never_left_hollow():
    """``block()`` builds a model at each call and becomes a stub (Net cannot be translated:
    its branches return different structures); the helper it inlined is then not kept with
    its layer statements dropped (it was: ``for u in units: pass``, a silent no-op)."""
    result = translate(HOLLOW_HELPER, "hollow.py")
    assert result.stubs
    assert "for u in units:\n        pass" not in result.text, result.text
    if "def mlp(" in result.text:
        body = result.text.split("def mlp(", 1)[1].split("\ndef ", 1)[0]
        assert "raise NotImplementedError" in body or "Dense" in body, body
