"""tf.io.read_file / decode_png / decode_jpeg / decode_image, tf.audio.decode_wav and
tf.image.rgb_to_yuv / yuv_to_rgb in the functions a tf.data pipeline maps (Keras -> PyTorch):
the runtime's functions (runtime/torch/image_ops.py) give TensorFlow's numbers on files
written here (PIL, wave), and the printer's table (printers/torch/data_image_ops.py) spells
each call with them."""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest

import torch

from transpiler.runtime.torch import image_ops
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


def _png(mode, size=(7, 5), seed=0, **save):
    from PIL import Image

    rng = np.random.RandomState(seed)
    bands = {"L": 1, "RGB": 3, "RGBA": 4, "LA": 2, "P": 1}[mode]
    pixels = rng.randint(0, 256, (size[1], size[0], bands)).astype(np.uint8)
    image = Image.fromarray(pixels[..., 0] if bands == 1 else pixels, mode="L" if mode == "P" else mode)
    if mode == "P":
        image = image.convert("RGB").quantize(colors=16)
    buffer = io.BytesIO()
    image.save(buffer, format=save.pop("format", "PNG"), **save)
    return buffer.getvalue()


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "P", "LA"])
@pytest.mark.parametrize("channels", [0, 1, 3, 4])
def test_decode_png_equals_tensorflow(tf, mode, channels):
    data = _png(mode)
    theirs = tf.io.decode_png(data, channels=channels).numpy()
    ours = image_ops.io_decode_image(data, channels=channels)
    if mode == "P" and channels == 4:
        # (TensorFlow's alpha for a 4-bit palette without transparency is 15, libpng's filler
        # cut to the palette's bit depth; opaque, 255, here)
        theirs = theirs.copy()
        assert (theirs[..., 3] == 15).all()
        theirs[..., 3] = 255
    assert ours.dtype == torch.uint8 and tuple(ours.shape) == theirs.shape
    if channels == 1 and mode not in ("L", "LA"):
        # (colour to luma: libpng's and PIL's integer weights round a few pixels apart)
        assert np.abs(ours.numpy().astype(int) - theirs.astype(int)).max() <= 1
    else:
        np.testing.assert_array_equal(ours.numpy(), theirs)


@pytest.mark.parametrize("channels", [0, 3, 1])
def test_decode_jpeg_equals_tensorflows_accurate_dct(tf, channels):
    """PIL's libjpeg decodes with the accurate integer DCT: TensorFlow's pixels with
    dct_method="INTEGER_ACCURATE"; its default (the fast DCT) is a few units off."""
    data = _png("RGB", size=(64, 48), format="JPEG", quality=90)
    ours = image_ops.io_decode_image(data, channels=channels).numpy()
    accurate = tf.io.decode_jpeg(data, channels=channels, dct_method="INTEGER_ACCURATE").numpy()
    np.testing.assert_array_equal(ours, accurate)
    fast = tf.io.decode_jpeg(data, channels=channels).numpy()
    assert ours.shape == fast.shape and np.abs(ours.astype(int) - fast.astype(int)).mean() < 2


def test_decode_image_to_float_equals_tensorflow(tf):
    data = _png("RGB")
    theirs = tf.io.decode_image(data, channels=3, dtype=tf.float32).numpy()
    ours = image_ops.io_decode_image(data, channels=3, dtype=torch.float32).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-7)


def test_read_file_gives_the_bytes(tmp_path, tf):
    path = tmp_path / "a.png"
    path.write_bytes(_png("RGB"))
    assert image_ops.io_read_file(str(path)) == tf.io.read_file(str(path)).numpy()
    assert image_ops.io_read_file(str(path).encode()) == path.read_bytes()
    assert image_ops.io_read_file(np.array([str(path)])[0]) == path.read_bytes()


def _wav(channels, frames=50, rate=8000):
    rng = np.random.RandomState(channels)
    samples = rng.randint(-32768, 32767, (frames, channels)).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())
    return buffer.getvalue()


@pytest.mark.parametrize("channels,desired_channels,desired_samples",
                         [(1, -1, -1), (2, -1, -1), (1, 1, 30), (1, 2, 80), (2, 1, 50)])
def test_decode_wav_equals_tensorflow(tf, channels, desired_channels, desired_samples):
    data = _wav(channels)
    audio, rate = tf.audio.decode_wav(data, desired_channels, desired_samples)
    ours, our_rate = image_ops.audio_decode_wav(data, desired_channels, desired_samples)
    assert ours.dtype == torch.float32 and int(our_rate) == int(rate) == 8000
    np.testing.assert_array_equal(ours.numpy(), audio.numpy())


def test_rgb_to_yuv_and_back_equal_tensorflow(tf):
    images = np.random.RandomState(0).rand(2, 4, 5, 3).astype(np.float32)
    yuv = tf.image.rgb_to_yuv(images).numpy()
    np.testing.assert_allclose(image_ops.image_rgb_to_yuv(torch.from_numpy(images)).numpy(), yuv, atol=1e-6)
    np.testing.assert_allclose(image_ops.image_yuv_to_rgb(torch.from_numpy(yuv)).numpy(),
                               tf.image.yuv_to_rgb(yuv).numpy(), atol=1e-6)


def test_mapped_function_reading_files_is_spelled_with_the_runtime():
    """The printer's table: each call of a mapped function becomes the runtime's."""
    import libcst as cst

    from transpiler.printers.torch import loss_functions

    source = '''import tensorflow as tf
def load(path, wav_path):
    image = tf.io.read_file(path)
    image = tf.image.decode_png(image, channels=3)
    other = tf.io.decode_jpeg(tf.io.read_file(path), channels=1)
    audio, rate = tf.audio.decode_wav(tf.io.read_file(wav_path), 1, 16000)
    return tf.image.rgb_to_yuv(tf.cast(image, tf.float32) / 255.0), other, audio
'''
    module = cst.parse_module(source)
    fn = module.body[1]
    new, _ = loss_functions.translate_function(fn, loss_functions.module_aliases(module), lambda *a: "")
    text = cst.Module([]).code_for_node(new)
    assert "image = io_decode_image(image, channels=3)" in text
    assert "other = io_decode_image(io_read_file(path), channels=1)" in text
    assert "audio, rate = audio_decode_wav(io_read_file(wav_path), desired_channels=1, desired_samples=16000)" \
        in text
    assert "image_rgb_to_yuv(" in text and "tf." not in text


def test_decode_jpeg_with_other_options_is_untranslatable():
    import libcst as cst

    from transpiler.printers.torch import loss_functions

    module = cst.parse_module("import tensorflow as tf\ndef f(x):\n    return tf.io.decode_jpeg(x, dct_method='INTEGER_FAST')\n")
    with pytest.raises(loss_functions.Untranslatable):
        loss_functions.translate_function(module.body[1], loss_functions.module_aliases(module), lambda *a: "")


PATHS_PROGRAM = '''
import os
from glob import glob
import numpy as np
import keras
from keras import layers
import tensorflow as tf


def read_image(path):
    image = tf.io.read_file(path)
    image = tf.io.decode_png(image, channels=3)
    return tf.image.resize(image, [8, 8]) / 255.0


def load(path, label):
    return read_image(path), label


paths = sorted(glob(os.path.join(os.environ["IMAGES_DIR"], "*.png")))
labels = np.arange(len(paths)) % 2
ds = tf.data.Dataset.from_tensor_slices((paths, labels)).map(load).batch(4, drop_remainder=True)

if __name__ == "__main__":
    model = keras.Sequential([keras.Input((8, 8, 3)), layers.Conv2D(2, 3), layers.GlobalAveragePooling2D(),
                              layers.Dense(2, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(ds, epochs=1)
    print("batches", len(list(ds)))
'''


@pytest.fixture()
def images_dir(tmp_path, monkeypatch):
    folder = tmp_path / "images"
    folder.mkdir()
    for i in range(10):  # (several sizes: the map resizes them)
        (folder / f"{i:02d}.png").write_bytes(_png("RGB", size=(9 + i % 3, 7 + i % 2), seed=i))
    monkeypatch.setenv("IMAGES_DIR", str(folder))
    return folder


def test_pipeline_of_paths_mapped_by_a_file_reader_yields_tf_data_batches(tf, images_dir, tmp_path):
    """from_tensor_slices((paths, labels)).map(f).batch(n, drop_remainder=True), f reading and
    decoding each file through another script function: the loader keeps the paths as str and
    yields tf.data's batches (in the model's layout); the translated program trains on it."""
    import os
    import subprocess
    import sys

    from transpiler import verify
    from transpiler.translate import translate

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
    from harness import load_source_module

    result = translate(PATHS_PROGRAM, "paths_case.py")
    assert not result.stubs, [d.message for d in result.stubs]
    assert "io_read_file(path)" in result.text and "io_decode_image(image, channels=3)" in result.text
    generated = verify.load_generated(result.text)
    original = load_source_module(PATHS_PROGRAM)
    ours = [(x.numpy(), y.numpy()) for x, y in generated.ds]
    theirs = [(x.numpy(), y.numpy()) for x, y in original.ds]
    assert len(ours) == len(theirs) == 2
    for (ox, oy), (tx, ty) in zip(ours, theirs):
        np.testing.assert_allclose(ox, tx.transpose(0, 3, 1, 2), rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(oy, ty)
    out = tmp_path / "paths_case_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "batches 2" in run.stdout


def test_random_crop_offsets_and_set_shape_in_a_mapped_function_run_in_torch():
    """keras.io MIRNet's crop: ``tf.random.uniform(shape=(), maxval=size - crop + 1,
    dtype=tf.int32)`` becomes torch.randint over [0, maxval) (the expression kept whole, not
    ``rand() * size - crop + 1``), ``x.set_shape([...])`` a ``pass`` (nothing to compute); the
    translated function runs and crops inside the image."""
    import libcst as cst

    from transpiler.printers.torch import loss_functions

    source = '''import tensorflow as tf
CROP = 4
def random_crop(image):
    shape = tf.shape(image)[:2]
    w = tf.random.uniform(shape=(), maxval=shape[1] - CROP + 1, dtype=tf.int32)
    h = tf.random.uniform(shape=(), minval=0, maxval=shape[0] - CROP + 1, dtype=tf.int32)
    scale = tf.random.uniform((2,), minval=1.0, maxval=CROP + 1.0)
    cropped = image[h : h + CROP, w : w + CROP]
    cropped.set_shape([CROP, CROP, 3])
    return cropped, scale
'''
    module = cst.parse_module(source)
    new, _ = loss_functions.translate_function(module.body[2], loss_functions.module_aliases(module), lambda *a: "")
    text = cst.Module([]).code_for_node(new)
    assert "torch.randint(0, int(shape[1] - CROP + 1), (), dtype=torch.int32)" in text
    assert "torch.rand((2,)) * ((CROP + 1.0) - 1.0) + 1.0" in text
    assert "pass  # TensorFlow's set_shape()" in text and ".set_shape(" not in text
    namespace = {"torch": torch, "CROP": 4}
    exec(text, namespace)
    image = torch.arange(6 * 9 * 3).reshape(6, 9, 3)
    torch.manual_seed(0)
    for _ in range(20):
        cropped, scale = namespace["random_crop"](image)
        assert tuple(cropped.shape) == (4, 4, 3)
        assert bool(((scale >= 1.0) & (scale < 5.0)).all())
