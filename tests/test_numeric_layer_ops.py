"""Numeric tests (Keras vs generated torch, same weights and inputs) for tensor ops inside
custom layers' ``call()`` as keras.io programs write them: TensorFlow NumPy (``tnp.matmul``,
``tnp.maximum``), tensors of rank above 5 (involution's and sub-pixel's rank-6 reshapes).

Each case is a tiny functional model run through ``harness.check_source`` (random Keras
weights mapped into the torch module with strict ``load_state_dict``): max |keras - torch|
<= 1e-5 and equal parameter counts.
"""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from test_numeric_real_model_ops import check  # noqa: F401  (the shared fixture: max error <= 1e-5, same parameter count)
from transpiler.translate import translate

HEADER = ("import keras\nimport tensorflow as tf\nimport tensorflow.experimental.numpy as tnp\n"
          "from keras import layers, ops\n\n\n")


def model_source(*body: str, classes: str = "") -> str:
    return HEADER + classes + "def build_model():\n" + "".join(f"    {line}\n" for line in body)


TNP_DENSE = '''class TNPDense(keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(name="weights", shape=(input_shape[1], self.units),
                                 initializer="random_normal", trainable=True)
        self.bias = self.add_weight(name="bias", shape=(self.units,), initializer="zeros", trainable=True)

    def call(self, inputs):
        outputs = tnp.maximum(tnp.matmul(inputs, self.w) + self.bias, 0.0)
        return {tail}


'''


@pytest.mark.parametrize("tail", ["outputs", "tnp.square(outputs) - tnp.mean(outputs, axis=1, keepdims=True)"],
                         ids=["matmul_maximum", "square_mean"])
def test_tensorflow_numpy_ops_in_a_layer(check, tail):
    """keras.io's tensorflow_numpy_models: TensorFlow NumPy functions are NumPy's, as keras.ops'
    of the same name: ``tnp.matmul``/``tnp.maximum`` in a layer's call() translate (they were
    stubs: "not translated yet: class TNPDense")."""
    checked = check(model_source("inp = keras.Input(shape=(5,))", "out = TNPDense(4)(inp)",
                                 "return keras.Model(inp, out)", classes=TNP_DENSE.replace("{tail}", tail)))
    assert "tnp" not in checked.translation.text.split("class TNPDense", 1)[1].split("def build_model", 1)[0]


def test_tensorflow_numpy_function_without_a_numpy_twin_stays_a_stub():
    """A tnp name that is not one of keras.ops' NumPy functions is not guessed at."""
    src = model_source("inp = keras.Input(shape=(5,))", "out = TNPDense(4)(inp)", "return keras.Model(inp, out)",
                       classes=TNP_DENSE.replace("{tail}", "tnp.nanmean(outputs, axis=1, keepdims=True)"))
    result = translate(src, "case.py")
    assert any(d.severity == "stub" and "TNPDense" in d.message for d in result.program.diagnostics), \
        [d.message for d in result.program.diagnostics]


DEPTH_TO_SPACE = '''class DepthToSpace(layers.Layer):
    def __init__(self, block_size):
        super().__init__()
        self.block_size = block_size

    def call(self, input):
        batch, height, width, depth = ops.shape(input)
        depth = depth // (self.block_size**2)
        x = ops.reshape(input, [batch, height, width, self.block_size, self.block_size, depth])
        x = ops.transpose(x, [0, 1, 3, 2, 4, 5])
        x = ops.reshape(x, [batch, height * self.block_size, width * self.block_size, depth])
        return x


'''


def test_rank6_reshape_and_transpose_in_a_layer(check):
    """keras.io's super_resolution_sub_pixel DepthToSpace (static sizes here): a rank-6 tensor
    has no feature-map layout; it stays in Keras' axis order (was "no layout for rank 6")."""
    check(model_source("inp = keras.Input(shape=(5, 7, 3))", 'x = layers.Conv2D(8, 3, padding="same")(inp)',
                       "out = DepthToSpace(2)(x)", "return keras.Model(inp, out)", classes=DEPTH_TO_SPACE))


SHIFT = '''class Shift(layers.Layer):
    def __init__(self, num_div):
        super().__init__()
        self.num_div = num_div

    def build(self, input_shape):
        self.H = input_shape[1]
        self.W = input_shape[2]
        self.C = input_shape[3]

    def get_shift_pad(self, x, mode):
        if mode == "left":
            offset_height, offset_width, target_height, target_width = 0, 0, 0, 1
        elif mode == "right":
            offset_height, offset_width, target_height, target_width = 0, 1, 0, 1
        elif mode == "up":
            offset_height, offset_width, target_height, target_width = 0, 0, 1, 0
        else:
            offset_height, offset_width, target_height, target_width = 1, 0, 1, 0
        crop = tf.image.crop_to_bounding_box(x, offset_height=offset_height, offset_width=offset_width,
                                             target_height=self.H - target_height,
                                             target_width=self.W - target_width)
        return tf.image.pad_to_bounding_box(crop, offset_height=offset_height, offset_width=offset_width,
                                            target_height=self.H, target_width=self.W)

    def call(self, x):
        x_splits = tf.split(x, num_or_size_splits=self.C // self.num_div, axis=-1)
        x_splits[0] = self.get_shift_pad(x_splits[0], mode="left")
        x_splits[1] = self.get_shift_pad(x_splits[1], mode="right")
        x_splits[2] = self.get_shift_pad(x_splits[2], mode="up")
        x_splits[3] = self.get_shift_pad(x_splits[3], mode="down")
        return tf.concat(x_splits, axis=-1)


'''


@pytest.mark.parametrize("conv_first", [False, True], ids=["on_input", "on_feature_map"])
def test_crop_and_pad_to_bounding_box_shift_in_a_layer(check, conv_first):
    """keras.io's ShiftViT shift: tf.split, tf.image.crop_to_bounding_box and
    pad_to_bounding_box per piece, tf.concat (was "crop_to_bounding_box on tensors is not
    supported yet"); after a conv the pieces are channels-first feature maps in torch."""
    body = ['x = layers.Conv2D(10, 1)(inp)' if conv_first else "x = inp", "out = Shift(2)(x)",
            "return keras.Model(inp, out)"]
    checked = check(model_source("inp = keras.Input(shape=(5, 7, 10))", *body, classes=SHIFT))
    assert "F.pad(" in checked.translation.text  # (no module attribute: the class declares none)


def test_crop_to_a_box_outside_the_images_is_a_stub():
    src = model_source("inp = keras.Input(shape=(5, 7, 3))",
                       "out = tf.image.crop_to_bounding_box(inp, 1, 0, 5, 7)", "return keras.Model(inp, out)")
    result = translate(src, "case.py")
    assert any(d.severity == "stub" and "leaves the 5x7 images" in d.message for d in result.program.diagnostics), \
        [d.message for d in result.program.diagnostics]


COLOR_AFFINE = '''class ColorAffine(layers.Layer):
    def __init__(self, brightness=0.0, jitter=0.0):
        super().__init__()
        self.brightness = brightness
        self.jitter = jitter

    def call(self, images, training=True):
        if training:
            batch_size = tf.shape(images)[0]
            brightness_scales = 1 + tf.random.uniform((batch_size, 1, 1, 1), minval=-self.brightness,
                                                      maxval=self.brightness)
            jitter_matrices = tf.random.uniform((batch_size, 1, 3, 3), minval=-self.jitter, maxval=self.jitter)
            color_transforms = tf.eye(3, batch_shape=[batch_size, 1]) * brightness_scales + jitter_matrices
            images = tf.clip_by_value(tf.matmul(images, color_transforms), 0, 1)
        return images


'''

MIX = '''class Mix(layers.Layer):
    def call(self, x):
        eye = tf.eye(3, num_columns=4, batch_shape=[tf.shape(x)[0]])
        return tf.matmul(x, eye * 0.5 + 0.25)


'''


def test_eye_per_sample_in_a_layer(check):
    """``tf.eye(rows, num_columns, batch_shape=[batch, ...])``: an identity matrix per sample
    (was "an operand is neither a tensor nor a number")."""
    checked = check(model_source("inp = keras.Input(shape=(5, 3))", "out = Mix()(inp)", "return keras.Model(inp, out)",
                                 classes=MIX))
    assert "torch.eye(3, 4" in checked.translation.text


def test_random_color_affine_in_training_with_no_randomness_is_the_identity():
    """keras.io's SimCLR RandomColorAffine in training mode with brightness = jitter = 0: the
    per-sample identity transform, clipped to [0, 1], as in Keras."""
    import numpy as np
    import torch as t
    from harness import load_source_module
    from transpiler import verify

    src = model_source("inp = keras.Input(shape=(6, 5, 3))", 'x = layers.Conv2D(3, 1)(inp)',
                       "out = ColorAffine(0.0, 0.0)(x, training=True)", "return keras.Model(inp, out)",
                       classes=COLOR_AFFINE)
    result = translate(src, "case.py")
    assert not result.stubs, result.stubs
    generated = verify.load_generated(result.text)
    kmodel = load_source_module(src).build_model()
    tmodel = generated.build_model()
    md = result.program.models[0]
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    tmodel.train()
    x = np.random.default_rng(0).uniform(-1, 2, (2, 6, 5, 3)).astype("float32")
    want = np.asarray(kmodel(x, training=True))
    got = tmodel(t.from_numpy(x.transpose(0, 3, 1, 2))).detach().numpy()  # (matmul's output: Keras' order)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_eye_without_a_batch_size_is_a_stub_naming_why():
    """A static identity matrix would be a constant of the model (not supported): a marked stub."""
    src = model_source("inp = keras.Input(shape=(5, 3))", "out = tf.matmul(inp, tf.eye(3))",
                       "return keras.Model(inp, out)")
    result = translate(src, "case.py")
    assert any(d.severity == "stub" and "batch_shape must start with the batch size" in d.message
               for d in result.program.diagnostics), [d.message for d in result.program.diagnostics]


INVOLUTION = '''class Involution(layers.Layer):
    def __init__(self, channel, groups, k, stride):
        super().__init__()
        self.channel, self.groups, self.k, self.stride = channel, groups, k, stride

    def build(self, input_shape):
        _, height, width, channels = input_shape
        height, width = height // self.stride, width // self.stride
        self.pool = layers.AveragePooling2D(self.stride, self.stride, padding="same") if self.stride > 1 \\
            else tf.identity
        self.gen = keras.Sequential([layers.Conv2D(self.channel // 2, 1), layers.BatchNormalization(),
                                     layers.ReLU(), layers.Conv2D(self.k * self.k * self.groups, 1)])
        self.kernel_reshape = layers.Reshape((height, width, self.k * self.k, 1, self.groups))
        self.patches_reshape = layers.Reshape((height, width, self.k * self.k, channels // self.groups, self.groups))
        self.out_reshape = layers.Reshape((height, width, channels))

    def call(self, x):
        kernel = self.kernel_reshape(self.gen(self.pool(x)))
        patches = tf.image.extract_patches(images=x, sizes=[1, self.k, self.k, 1],
                                           strides=[1, self.stride, self.stride, 1], rates=[1, 1, 1, 1],
                                           padding="SAME")
        out = tf.reduce_sum(tf.multiply(kernel, self.patches_reshape(patches)), axis=3)
        return self.out_reshape(out), kernel


'''


def test_involution_rank6_kernels(check):
    """keras.io's involution: rank-6 kernels and patches multiplied and summed over the window
    (was "Reshape: no layout for rank 6"), stride 1 and 2."""
    check(model_source("inp = keras.Input(shape=(8, 6, 4))", "x, _ = Involution(4, 2, 3, 1)(inp)",
                       "x = layers.ReLU()(x)", "out, _ = Involution(4, 1, 3, 2)(x)", "return keras.Model(inp, out)",
                       classes=INVOLUTION))
