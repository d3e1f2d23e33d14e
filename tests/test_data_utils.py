"""Keras' data utilities (keras.utils.get_file, load_img, img_to_array, array_to_img, save_img,
pad_sequences) become the runtime's functions of the same arguments (runtime/torch/images.py,
sequences.py, downloads.py), compared with Keras on synthetic data. Nothing is downloaded:
get_file is handed file:// URLs of files the test writes."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)


def _no_keras_import(text: str) -> bool:
    return not re.search(r"^\s*(import|from)\s+(keras|tensorflow)\b", text, re.M)


# -- pad_sequences -----------------------------------------------------------------------------------------------

PAD_ARGS = [{}, {"maxlen": 3}, {"maxlen": 3, "truncating": "post"}, {"padding": "post", "value": -1},
            {"maxlen": 6, "padding": "post", "truncating": "post", "dtype": "float32", "value": 0.5}]


@pytest.mark.parametrize("kwargs", PAD_ARGS, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()) or "default")
def test_pad_sequences_matches_keras(kwargs):
    keras = pytest.importorskip("keras")
    from transpiler.runtime.torch.sequences import pad_sequences

    sequences = [[1, 2, 3, 4, 5], [], [7], [8, 9, 10]]
    ours, theirs = pad_sequences(sequences, **kwargs), keras.utils.pad_sequences(sequences, **kwargs)
    assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)


def test_pad_sequences_of_vectors_matches_keras():
    keras = pytest.importorskip("keras")
    from transpiler.runtime.torch.sequences import pad_sequences

    sequences = [np.ones((2, 3)), np.arange(12.0).reshape(4, 3)]
    ours, theirs = pad_sequences(sequences, maxlen=3, dtype="float32"), \
        keras.utils.pad_sequences(sequences, maxlen=3, dtype="float32")
    assert ours.shape == theirs.shape == (2, 3, 3) and np.array_equal(ours, theirs)


# -- images ------------------------------------------------------------------------------------------------------


@pytest.fixture
def png(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.RandomState(0)
    path = tmp_path / "img.png"
    Image.fromarray(rng.randint(0, 256, (9, 13, 3)).astype("uint8"), "RGB").save(path)
    return path


LOAD_ARGS = [{}, {"color_mode": "grayscale"}, {"color_mode": "rgba"}, {"target_size": (5, 7)},
             {"target_size": (6, 4), "interpolation": "bilinear"},
             {"target_size": (4, 4), "interpolation": "bicubic", "keep_aspect_ratio": True}]


@pytest.mark.parametrize("kwargs", LOAD_ARGS, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()) or "default")
def test_load_img_and_img_to_array_match_keras(png, kwargs):
    keras = pytest.importorskip("keras")
    from transpiler.runtime.torch.images import img_to_array, load_img

    ours, theirs = img_to_array(load_img(str(png), **kwargs)), keras.utils.img_to_array(keras.utils.load_img(str(png), **kwargs))
    assert ours.dtype == theirs.dtype == np.float32 and ours.shape == theirs.shape and np.array_equal(ours, theirs)
    first = img_to_array(load_img(png, **kwargs), data_format="channels_first")
    assert np.array_equal(first, keras.utils.img_to_array(keras.utils.load_img(png, **kwargs),
                                                          data_format="channels_first"))


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_array_to_img_and_save_img_match_keras(tmp_path, channels):
    pytest.importorskip("PIL.Image")
    keras = pytest.importorskip("keras")
    from transpiler.runtime.torch.images import array_to_img, save_img

    x = np.random.RandomState(channels).uniform(-3, 5, (6, 5, channels)).astype("float32")
    assert np.array_equal(np.asarray(array_to_img(x)), np.asarray(keras.utils.array_to_img(x)))
    assert np.array_equal(np.asarray(array_to_img(x, scale=False)), np.asarray(keras.utils.array_to_img(x, scale=False)))
    save_img(tmp_path / "ours.png", x)
    keras.utils.save_img(tmp_path / "theirs.png", x)
    assert (tmp_path / "ours.png").read_bytes() == (tmp_path / "theirs.png").read_bytes()


# -- translation -------------------------------------------------------------------------------------------------

SCRIPT = '''import os
import numpy as np
import keras
from keras.utils import load_img, img_to_array

path = keras.utils.get_file(origin=ORIGIN, fname="pics", untar=True)
image = load_img(os.path.join(path, "top", "img.png"), target_size=(4, 6))
array = img_to_array(image)
batch = keras.utils.pad_sequences([[1, 2], [3]], maxlen=3)
print(array.shape, float(array.sum()), batch.tolist())
'''


def test_data_utilities_translate_in_place_and_run_as_keras_runs(tmp_path):
    """get_file (an archive, extracted), load_img/img_to_array and pad_sequences: no stub, no
    Keras import, and the generated program prints what the original prints."""
    Image = pytest.importorskip("PIL.Image")
    pytest.importorskip("keras")
    import tarfile

    (tmp_path / "top").mkdir()
    Image.fromarray(np.arange(8 * 10 * 3, dtype="uint8").reshape(8, 10, 3), "RGB").save(tmp_path / "top" / "img.png")
    with tarfile.open(tmp_path / "pics.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "top", arcname="top")
    source = SCRIPT.replace("ORIGIN", repr((tmp_path / "pics.tar.gz").as_uri()))
    result = translate(source, "p.py")
    assert not result.stubs, result.stubs
    assert _no_keras_import(result.text)
    for name in ("get_file(", "load_img(", "img_to_array(", "pad_sequences("):
        assert f"def {name}" in result.text
    (tmp_path / "original.py").write_text(source)
    (tmp_path / "translated.py").write_text(result.text)
    pil = os.path.dirname(os.path.dirname(Image.__file__))
    outputs = []
    for name, home in (("original.py", "KERAS_HOME"), ("translated.py", "TRANSPILED_DATA_HOME")):
        env = dict(os.environ, **{home: str(tmp_path / f"cache-{name}")}, PYTHONPATH=pil)
        os.makedirs(env[home])
        run = program_runner.run([sys.executable, name], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        outputs.append(run.stdout.strip().splitlines()[-1])
    assert outputs[0] == outputs[1]


# -- tensorflow_datasets.load ------------------------------------------------------------------------------------

TFDS_SCRIPT = '''import tensorflow_datasets as tfds

tfds.disable_progress_bar()
dataset_name = "oxford_flowers102"
(ds,) = tfds.load(dataset_name, split=["train"], shuffle_files=True)
train, val = tfds.load("tf_flowers", split=["train[:90%]", "train[90%:]"], as_supervised=True)


def unlabelled():
    return tfds.load("stl10", split="unlabelled", as_supervised=True).batch(4)
'''


def test_tfds_load_becomes_data_source_loader_or_a_stub_naming_the_dataset():
    """tensorflow_datasets (which imports TensorFlow) never stays in the output as a module import
    (the runtime imports it inside load_tfds: tfds.data_source needs no TensorFlow):
    a load the program runs becomes the runtime's ``load_tfds`` (tfds.data_source, no
    TensorFlow: tests/test_tfds_data.py), one in a function the script never calls stays a
    marked stub naming the dataset and the torchvision class that provides it."""
    result = translate(TFDS_SCRIPT, "p.py")
    assert not re.search(r"^(import|from)\s+tensorflow_datasets\b", result.text, re.M)
    messages = sorted(d.message for d in result.stubs)
    assert len(messages) == 1, messages
    assert "'stl10'" in messages[0] and "torchvision.datasets.STL10" in messages[0]
    assert '(ds,) = load_tfds(dataset_name, split=["train"], shuffle_files=True)' in result.text
    assert "train, val = load_tfds(" in result.text
    assert "raise NotImplementedError" in result.text  # inside the function: the call raises
    assert "# tfds.disable_progress_bar(): nothing to do" in result.text  # not a stub
    compile(result.text, "p_torch.py", "exec")
