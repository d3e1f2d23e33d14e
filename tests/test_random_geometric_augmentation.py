"""Keras' RandomRotation, RandomZoom and RandomTranslation in the generated PyTorch module:
in training the same transforms as Keras given the same uniform draws (verify_training's
SameUniformDraws pairs Keras' n-th ``random.uniform`` with the n-th ``torch.rand``), the
identity at inference. They were the identity in training too (keras.io's eanet trained on
unaugmented images, reported as a warning).

The resampling is TensorFlow's ImageProjectiveTransformV3 (Keras' TensorFlow backend):
``runtime/torch/augment.py`` reproduces it bit for bit on float32 images.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch  # before TensorFlow (see conftest.py)
import keras

from test_numeric_ops import after_conv, build_pair, layer_model, run_training_mode
from transpiler.runtime.torch.augment import keras_affine_transform
from transpiler.translate import translate
from transpiler.verify_training import SameUniformDraws, run_both

RTOL = 1e-4


@pytest.mark.parametrize("fill_mode", ["reflect", "constant", "nearest", "wrap"])
@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
@pytest.mark.parametrize("channels_last", [True, False])
def test_affine_transform_equals_tensorflow_resampling(fill_mode, interpolation, channels_last):
    """Transforms that rotate, scale and shift well outside the image (every fill-mode branch:
    coordinates below 0 and beyond twice the size) give Keras' pixels exactly."""
    rng = np.random.RandomState(0)
    images = rng.uniform(0, 255, size=(4, 7, 9, 2)).astype("float32")
    for _ in range(4):
        t = rng.uniform(-1, 1, size=(4, 8)).astype("float32")
        t[:, [2, 5]] *= 25
        t[:, [0, 4]] += 1
        t[:, 6:] = 0
        want = keras.ops.convert_to_numpy(keras.ops.image.affine_transform(
            images, t, interpolation=interpolation, fill_mode=fill_mode, fill_value=3.0))
        x = torch.from_numpy(images if channels_last else images.transpose(0, 3, 1, 2).copy())
        got = keras_affine_transform(x, torch.from_numpy(t), interpolation, fill_mode, 3.0,
                                     channels_last=channels_last).numpy()
        got = got if channels_last else got.transpose(0, 2, 3, 1)
        np.testing.assert_array_equal(got, want)


LAYERS = [
    "RandomRotation(0.2)",
    'RandomRotation((-0.1, 0.3), fill_mode="constant", fill_value=2.0, interpolation="nearest")',
    "RandomZoom(0.3)",
    'RandomZoom((-0.3, 0.2), (0.1, 0.4), fill_mode="nearest")',
    "RandomTranslation(0.2, 0.3)",
    'RandomTranslation((-0.2, 0.1), 0.25, fill_mode="wrap")',
]


#: (by default each layer and each place once, tests/corpus_sample.py each_value; the rest under
#: ``-m matrix_all``)
@pytest.mark.each_value("matrix_all")
@pytest.mark.parametrize("where", ["input", "conv"])
@pytest.mark.parametrize("layer", LAYERS)
def test_geometric_augmentation_in_training_equals_keras_given_the_same_draws(layer, where):
    """On the input (channels-last in both) and after a conv (a channels-first map in torch):
    Keras' training-mode output, layer for layer, from the same uniform stream."""
    src = layer_model((8, 10, 3), f"layers.{layer}") if where == "input" else after_conv((8, 10, 3),
                                                                                         f"layers.{layer}", 3)
    kmodel, tmodel, graph = build_pair(src)
    assert "keras_random_" in translate(src, "case.py").text
    x = np.random.RandomState(1).uniform(0, 5, size=(6, 8, 10, 3)).astype("float32")
    draws = SameUniformDraws(kmodel)
    assert draws.active
    with draws:
        k = np.asarray(kmodel(x, training=True))
        t = run_training_mode(tmodel, graph, x)
    draws.check()
    assert draws.drawn["keras"] >= 1
    np.testing.assert_allclose(t, k, rtol=1e-5, atol=1e-4)
    tmodel.eval()
    assert not np.allclose(k, np.asarray(kmodel(x, training=False)), atol=1e-3)  # (it did transform)


def test_geometric_augmentation_is_no_longer_reported_as_dropped():
    src = after_conv((8, 10, 3), "layers.RandomZoom(0.2)")
    result = translate(src, "case.py")
    assert not any("dropped" in d.message for d in result.program.diagnostics)
    assert "if self.training:" in result.text and "keras_random_zoom(" in result.text
    assert "def keras_random_zoom(" in result.text and "def keras_affine_transform(" in result.text


AUGMENTED = '''
import numpy as np
import keras
from keras import layers

augmentation = keras.Sequential(
    [
        layers.RandomFlip("horizontal"),
        layers.RandomRotation(factor=0.1),
        layers.RandomContrast(factor=0.1),
        layers.RandomZoom(height_factor=0.2, width_factor=0.2),
    ],
    name="augmentation",
)


def build_model():
    inputs = keras.Input(shape=(12, 12, 3))
    x = augmentation(inputs)
    x = layers.Conv2D(6, 3, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(4, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def main():
    rng = np.random.RandomState(0)
    x = rng.uniform(0, 255, (64, 12, 12, 3)).astype("float32")
    y = rng.randint(0, 4, (64,))
    model = build_model()
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=16, epochs=1)


if __name__ == "__main__":
    main()
'''


def test_eanet_style_augmentation_trains_like_keras(tmp_path):
    """eanet's augmentation Sequential (RandomFlip, RandomRotation, RandomContrast, RandomZoom)
    in front of a small model: the first 3 training losses equal Keras' (before, rotation and
    zoom were the identity in torch and the losses differed)."""
    path = tmp_path / "augmented.py"
    path.write_text(AUGMENTED)
    k, t = run_both(str(path), exact=True, steps=3)
    assert len(k) == 3 and np.all(np.isfinite(k))
    np.testing.assert_allclose(t, k, rtol=RTOL)
