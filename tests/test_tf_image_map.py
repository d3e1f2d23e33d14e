"""tf.image calls in functions a tf.data pipeline maps (printers/torch/data_image_ops.py →
runtime/torch/image_ops.py): each computes what TensorFlow computes on the same image (the
random ones: a draw of the same kind), and a script whose pipelines map such functions
translates with no stub into a program that trains."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import torch

from transpiler.runtime.torch import image_ops
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_SCRIPT = os.path.join(ROOT, "corpus", "keras", "image_map_pipeline.py")


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


def _image(shape=(7, 9, 3), dtype="uint8", seed=0):
    return np.random.RandomState(seed).randint(0, 256, shape).astype(dtype)


@pytest.mark.parametrize("shape,size,method", [((7, 9, 3), (12, 5), "bilinear"), ((7, 9, 3), (3, 4), "bilinear"),
                                               ((2, 7, 9, 3), (10, 11), "nearest"), ((7, 9, 3), (7, 9), "bilinear"),
                                               ((2, 6, 6, 1), (3, 9), "bilinear")])
def test_resize_equals_tensorflow(tf, shape, size, method):
    image = _image(shape)
    ours = image_ops.image_resize(torch.as_tensor(image), size, method=method)
    theirs = tf.image.resize(image, size, method=method).numpy()
    assert ours.numpy().dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-5, atol=1e-3)


def test_convert_dtype_and_grayscale_equal_tensorflow(tf):
    image = _image()
    ours = image_ops.image_convert_dtype(torch.as_tensor(image), torch.float32).numpy()
    np.testing.assert_allclose(ours, tf.image.convert_image_dtype(image, tf.float32).numpy(), rtol=1e-6)
    floats = image.astype("float32") / 255
    assert np.array_equal(image_ops.image_convert_dtype(torch.as_tensor(floats), torch.float32).numpy(), floats)
    np.testing.assert_allclose(image_ops.image_rgb_to_grayscale(torch.as_tensor(floats)).numpy(),
                               tf.image.rgb_to_grayscale(floats).numpy(), rtol=1e-5, atol=1e-6)
    assert np.array_equal(image_ops.image_rgb_to_grayscale(torch.as_tensor(image)).numpy(),
                          tf.image.rgb_to_grayscale(image).numpy())
    with pytest.raises(ValueError, match="int64"):  # (never a silent division by int64's maximum)
        image_ops.image_convert_dtype(torch.as_tensor(image.astype("int64")), torch.float32)


def test_random_ops_draw_what_tensorflow_draws(tf):
    torch.manual_seed(0)
    image = torch.as_tensor(_image((5, 6, 3)))
    flipped = {bool(torch.equal(image_ops.image_random_flip_left_right(image), image.flip(1))) for _ in range(40)}
    assert flipped == {True, False}  # each image mirrored left-right, or not
    assert np.array_equal(image.flip(1).numpy(), tf.image.flip_left_right(image.numpy()).numpy())
    batch = torch.as_tensor(_image((16, 4, 4, 3)))
    out = image_ops.image_random_flip_up_down(batch)
    per_image = [torch.equal(o, b.flip(0)) or torch.equal(o, b) for o, b in zip(out, batch)]
    assert all(per_image) and not torch.equal(out, batch) and not torch.equal(out, batch.flip(1))
    crops = set()
    for _ in range(30):
        crop = image_ops.image_random_crop(image, (3, 4, 3))
        assert crop.shape == (3, 4, 3)
        spots = [(i, j) for i in range(3) for j in range(3) if torch.equal(image[i:i + 3, j:j + 4], crop)]
        assert spots
        crops.add(spots[0])
    assert len(crops) > 3


def test_image_map_script_translates_without_stub_and_runs(tmp_path, tf):
    source = open(CORPUS_SCRIPT, encoding="utf-8").read()
    result = translate(source, CORPUS_SCRIPT)
    stubs = [str(d) for d in result.program.diagnostics if d.severity == "stub"]
    assert not stubs, stubs
    assert "image_resize(" in result.text and "import tensorflow" not in result.text
    out = tmp_path / "image_map_pipeline_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "accuracy" in run.stdout
    # the deterministic map, as generated, against TensorFlow's on the same element
    from transpiler import verify

    generated = verify.load_generated(result.text)
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import load_source_module

    original = load_source_module(source)
    image = _image((16, 16, 3))
    ours, _ = generated.preprocess_test_image(torch.as_tensor(image.astype("int64")).to(torch.uint8), 1)
    theirs, _ = original.preprocess_test_image(tf.constant(image), 1)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
