"""tf.strings calls (unicode_split, reduce_join, lower, regex_replace, ...) and tf.transpose /
tf.squeeze in the functions a tf.data pipeline maps (Keras -> PyTorch): the runtime's functions
(runtime/torch/text.py) give TensorFlow's strings, the printer's table
(printers/torch/data_strings.py) spells each call with them, and a keras.io captcha-OCR-like
pipeline (read, decode, resize, transpose each image; label characters through a StringLookup;
a dict element) translates without a stub and yields tf.data's batches."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import torch

from transpiler.runtime.torch import text


@pytest.fixture(scope="module")
def tf():
    import tensorflow  # (a test requirement: a missing TensorFlow fails here, never skips)

    return tensorflow


def _strs(value):
    """TensorFlow's or the runtime's strings as a list (or one str) of Python str."""
    if hasattr(value, "numpy") and not isinstance(value, str):
        value = value.numpy()
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str):
        return str(value)
    return [_strs(v) for v in value]


WORDS = np.array(["Hello <br />World!", "  MiXeD case\t", "a,b,,c", "Ünïcode ÄB"])


def test_lower_upper_strip_equal_tensorflow(tf):
    assert _strs(text.strings_lower(WORDS)) == _strs(tf.strings.lower(WORDS))
    assert _strs(text.strings_upper(WORDS)) == _strs(tf.strings.upper(WORDS))
    assert _strs(text.strings_strip(WORDS)) == _strs(tf.strings.strip(WORDS))
    assert _strs(text.strings_lower("ABC")) == _strs(tf.strings.lower("ABC")) == "abc"


@pytest.mark.parametrize("pattern,rewrite,replace_global", [
    ("<br />", " ", True), ("[%s]" % "!,", "", True), ("(\\w)(\\w)", "\\2\\1", True), ("a", "X", False)])
def test_regex_replace_equals_tensorflow(tf, pattern, rewrite, replace_global):
    ours = text.strings_regex_replace(WORDS, pattern, rewrite, replace_global=replace_global)
    theirs = tf.strings.regex_replace(WORDS, pattern, rewrite, replace_global=replace_global)
    assert _strs(ours) == _strs(theirs)


def test_unicode_split_and_reduce_join_equal_tensorflow(tf):
    for word in ["ab12", "Ünï", ""]:
        assert _strs(text.strings_unicode_split(word)) == _strs(tf.strings.unicode_split(word, "UTF-8"))
    rows = np.array([["a", "b", "c"], ["d", "e", "f"]])
    assert _strs(text.strings_reduce_join(rows)) == _strs(tf.strings.reduce_join(rows)) == "abcdef"
    assert _strs(text.strings_reduce_join(rows, axis=-1, separator="-")) == \
        _strs(tf.strings.reduce_join(rows, axis=-1, separator="-"))
    assert _strs(text.strings_reduce_join(rows, axis=0)) == _strs(tf.strings.reduce_join(rows, axis=0))
    # a scalar's .numpy() is its bytes, as an eager string tensor's
    joined = text.strings_reduce_join(np.array(["x", "y"]))
    assert joined.numpy() == tf.strings.reduce_join(["x", "y"]).numpy() == b"xy"


def test_to_number_and_length_equal_tensorflow(tf):
    numbers = np.array(["1.5", "-2", "3e2"])
    np.testing.assert_array_equal(text.strings_to_number(numbers).numpy(), tf.strings.to_number(numbers).numpy())
    ints = np.array([["1", "22"], ["-3", "4"]])
    ours = text.strings_to_number(ints, torch.int64)
    assert ours.dtype == torch.int64
    np.testing.assert_array_equal(ours.numpy(), tf.strings.to_number(ints, tf.int64).numpy())
    np.testing.assert_array_equal(text.strings_length(WORDS).numpy(), tf.strings.length(WORDS).numpy())


@pytest.mark.parametrize("sep, maxsplit", [(None, -1), (",", -1), (",", 1), ("b", -1)])
def test_split_to_tensor_and_to_number_equal_tensorflow(tf, sep, maxsplit):
    """tf.strings.split of one string (a vector) and of a batch (ragged rows, which to_tensor()
    pads with "" or 0 as TensorFlow does), and to_number of ragged rows (keras.io movielens:
    ``tf.strings.to_number(tf.strings.split(ratings, ","), tf.float32).to_tensor()``)."""
    for word in WORDS:
        assert _strs(text.strings_split(word, sep, maxsplit)) == _strs(tf.strings.split(word, sep, maxsplit))
    ours = text.strings_split(WORDS, sep, maxsplit)
    theirs = tf.strings.split(WORDS, sep, maxsplit)
    assert [_strs(row) for row in ours] == _strs(theirs.to_list())
    assert _strs(ours.to_tensor()) == _strs(theirs.to_tensor())
    numbers = np.array(["1,2.5,3", "4", "-1,0"])
    ours = text.strings_to_number(text.strings_split(numbers, ","), torch.float32).to_tensor()
    theirs = tf.strings.to_number(tf.strings.split(numbers, ","), tf.float32).to_tensor()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.dtype == torch.float32


def _translated(source: str) -> str:
    import libcst as cst

    from transpiler.printers.torch import loss_functions

    module = cst.parse_module(source)
    fn = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    new, _ = loss_functions.translate_function(fn, loss_functions.module_aliases(module), lambda *a: "")
    return cst.Module([]).code_for_node(new)


def test_strings_and_transpose_are_spelled_with_the_runtime():
    out = _translated('''import tensorflow as tf
def f(x, label, s):
    x = tf.transpose(x, perm=[1, 0, 2])
    y = tf.transpose(x)
    z = tf.squeeze(x, axis=-1)
    chars = tf.strings.unicode_split(label, input_encoding="UTF-8")
    s = tf.strings.regex_replace(tf.strings.lower(s), "<br />", " ")
    return x, y, z, tf.strings.reduce_join(chars, axis=-1, separator=" "), tf.strings.to_number(s, tf.int32)
''')
    assert "x = torch.as_tensor(x).permute(*[1, 0, 2])" in out
    assert "y = torch.as_tensor(x).permute(*reversed(range(torch.as_tensor(x).dim())))" in out
    assert "z = torch.as_tensor(x).squeeze(-1)" in out
    assert "chars = strings_unicode_split(label)" in out
    assert 's = strings_regex_replace(strings_lower(s), "<br />", " ")' in out
    assert 'strings_reduce_join(chars, axis=-1, separator=" ")' in out
    assert "strings_to_number(s, torch.int32)" in out and "tf." not in out
    namespace = {"torch": torch, **{h: getattr(text, h) for h in ("strings_unicode_split", "strings_regex_replace",
                                                                     "strings_lower", "strings_reduce_join",
                                                                     "strings_to_number")}}
    exec(out, namespace)
    x, y, z, joined, number = namespace["f"](np.zeros((2, 3, 1), np.float32), "ab", "12")
    assert tuple(x.shape) == (3, 2, 1) and tuple(y.shape) == (1, 2, 3) and tuple(z.shape) == (3, 2)
    assert joined == "a b" and int(number) == 12


@pytest.mark.parametrize("call", ['tf.strings.unicode_split(s, "UTF-16-BE")', 'tf.strings.lower(s, encoding="utf-8")',
                                  "tf.strings.to_number(s, tf.string)", "tf.transpose(s, conjugate=True)"])
def test_strings_calls_without_a_torch_meaning_are_untranslatable(call):
    from transpiler.printers.torch import loss_functions

    with pytest.raises(loss_functions.Untranslatable):
        _translated(f"import tensorflow as tf\ndef f(s):\n    return {call}\n")


OCR_PROGRAM = '''
import os
from glob import glob
import numpy as np
import keras
from keras import layers
import tensorflow as tf

characters = sorted(set("ab12"))
char_to_num = layers.StringLookup(vocabulary=list(characters), mask_token=None)
num_to_char = layers.StringLookup(vocabulary=char_to_num.get_vocabulary(), mask_token=None, invert=True)


def encode_sample(img_path, label):
    img = tf.io.read_file(img_path)
    img = tf.io.decode_png(img, channels=1)
    img = tf.image.convert_image_dtype(img, tf.float32)
    img = tf.image.resize(img, [6, 10])
    img = tf.transpose(img, perm=[1, 0, 2])
    label = char_to_num(tf.strings.unicode_split(label, input_encoding="UTF-8"))
    return {"image": img, "label": label}


def decode_label(ids):
    return tf.strings.reduce_join(num_to_char(ids)).numpy().decode("utf-8")


paths = sorted(glob(os.path.join(os.environ["IMAGES_DIR"], "*.png")))
labels = np.array([os.path.basename(p).split(".")[0].split("_")[1] for p in paths])
ds = tf.data.Dataset.from_tensor_slices((paths, labels)).map(encode_sample).batch(4)

image = keras.Input(shape=(10, 6, 1), name="image", dtype="float32")
x = layers.Conv2D(2, 3, padding="same", activation="relu")(image)
x = layers.Reshape((10, 12))(x)
out = layers.Dense(len(char_to_num.get_vocabulary()) + 1, activation="softmax")(x)
model = keras.Model(image, out)

if __name__ == "__main__":
    for batch in ds:
        print("batch", tuple(batch["image"].shape), [decode_label(row) for row in batch["label"]])
        print("out", tuple(model(batch["image"]).shape))
'''
LABELS = ["ab12", "ba21", "1a2b", "22aa", "b1b1", "a2a2"]


@pytest.fixture()
def captcha_dir(tmp_path, monkeypatch):
    from PIL import Image

    folder = tmp_path / "captchas"
    folder.mkdir()
    rng = np.random.RandomState(0)
    for i, label in enumerate(LABELS):  # (several sizes: the map resizes them)
        pixels = rng.randint(0, 256, (7 + i % 2, 11 + i % 3)).astype(np.uint8)
        Image.fromarray(pixels, mode="L").save(folder / f"{i:02d}_{label}.png")
    monkeypatch.setenv("IMAGES_DIR", str(folder))
    return folder


def test_captcha_pipeline_of_dicts_yields_tf_data_batches_and_runs(tf, captcha_dir, tmp_path):
    from transpiler import verify
    from transpiler.translate import translate

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
    from harness import load_source_module

    result = translate(OCR_PROGRAM, "ocr_case.py")
    assert not result.stubs, [d.message for d in result.stubs]
    generated = verify.load_generated(result.text)
    original = load_source_module(OCR_PROGRAM)
    ours, theirs = list(generated.ds), list(original.ds)
    assert len(ours) == len(theirs) == 2
    for o, t in zip(ours, theirs):
        # the images in the model's layout (channels first), the labels' ids as Keras gives them
        np.testing.assert_allclose(o["image"].numpy(), t["image"].numpy().transpose(0, 3, 1, 2), atol=1e-6)
        np.testing.assert_array_equal(o["label"].numpy(), t["label"].numpy())
        assert [generated.decode_label(r) for r in o["label"]] == [original.decode_label(r) for r in t["label"]]
    assert [generated.decode_label(r) for o in ours for r in o["label"]] == LABELS
    out = tmp_path / "ocr_case_torch.py"
    out.write_text(result.text)
    run = subprocess.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "batch (4, 1, 10, 6) ['ab12', 'ba21', '1a2b', '22aa']" in run.stdout
    assert "out (2, 10, 6)" in run.stdout
