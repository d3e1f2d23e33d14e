"""``tensorflow_datasets.load`` → ``tfds.data_source`` in a torch pipeline (frontend_ast/keras/
data_tfds.py, printers/torch/data_sources.py, runtime/torch/tfds_data.py).

Nothing is downloaded: a fake ``tensorflow_datasets`` module (records of images of several
sizes with int64 labels, tfds' split slicing on a list) stands in for tfds in both programs;
its ``load`` gives tf.data what tfds.load gives, its ``data_source`` the same records as numpy
(what tfds.data_source gives). The generated pipeline yields tf.data's batches."""

from __future__ import annotations

import os
import re
import sys
import types

import numpy as np
import pytest

import torch  # noqa: F401  (imported before TensorFlow)

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = '''
import keras
from keras import layers
import tensorflow as tf
import tensorflow_datasets as tfds

tfds.disable_progress_bar()
(train_ds, validation_ds), info = tfds.load(
    "fake_images",
    split=["train[:75%]", tfds.Split.TEST],
    as_supervised=True,
    with_info=True,
)
num_classes = info.features["label"].num_classes


def preprocess_dataset(image, label):
    image = tf.image.resize(image, (6, 6))
    label = tf.one_hot(label, depth=3)
    return (image, label)


train_ds = (
    train_ds.map(preprocess_dataset, num_parallel_calls=tf.data.AUTOTUNE)
    .batch(4)
    .prefetch(tf.data.AUTOTUNE)
)


def make_preprocess(size):
    def _pp(image, label):
        if size > 6:
            image = tf.image.resize(image, (size, size))
        else:
            image = tf.image.resize(image, (6, 6))
        return image, tf.one_hot(label, depth=3)

    return _pp


validation_ds = validation_ds.map(make_preprocess(4)).batch(4)
plain = tfds.load("fake_images", split="train[75%:]")

if __name__ == "__main__":
    model = keras.Sequential([keras.Input((6, 6, 3)), layers.Conv2D(4, 3), layers.GlobalAveragePooling2D(),
                              layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    model.fit(train_ds, validation_data=validation_ds, epochs=1)
    print("classes", num_classes, "batches", len(list(train_ds)))
'''


def _records(split):
    rng = np.random.RandomState(0 if split == "train" else 1)
    count = 12 if split == "train" else 5
    return [{"image": rng.randint(0, 256, (5 + i % 3, 7 - i % 2, 3)).astype(np.uint8),
             "label": np.int64(i % 3)} for i in range(count)]


def _slice(split):
    """tfds' split slicing, enough for the test: "train", "train[:75%]", "train[75%:]"."""
    found = re.fullmatch(r"(\w+)(?:\[(\d*)%?:(\d*)%?\])?", split)
    name, start, stop = found.groups()
    records = _records(name)
    n = len(records)
    return records[(int(start) * n // 100 if start else 0):(int(stop) * n // 100 if stop else n)]


FAKE_TFDS = '''
import re, types
import numpy as np
Split = types.SimpleNamespace(TRAIN="train", TEST="test", VALIDATION="validation")
''' + "\n".join(__import__("inspect").getsource(f) for f in (_records, _slice)) + '''
class _Info:
    supervised_keys = ("image", "label")
    features = {"label": types.SimpleNamespace(num_classes=3)}
    splits = {"train": types.SimpleNamespace(num_examples=12)}
def builder(name, data_dir=None, try_gcs=False):
    return types.SimpleNamespace(info=_Info())
def data_source(name, split=None, data_dir=None, download=True, try_gcs=False):
    assert name == "fake_images"
    return [_slice(s) for s in split] if isinstance(split, list) else _slice(split)
def disable_progress_bar():
    pass
def load(name, split=None, as_supervised=False, with_info=False, **kwargs):
    import tensorflow as tf
    def one(s):
        records = _slice(s)
        def gen():
            for r in records:
                yield (r["image"], r["label"]) if as_supervised else dict(r)
        image = tf.TensorSpec((None, None, 3), tf.uint8)
        label = tf.TensorSpec((), tf.int64)
        spec = (image, label) if as_supervised else {"image": image, "label": label}
        return tf.data.Dataset.from_generator(gen, output_signature=spec)
    made = [one(s) for s in split] if isinstance(split, list) else one(split)
    return (made, _Info()) if with_info else made
'''


@pytest.fixture()
def fake_tfds(tmp_path, monkeypatch):
    """The fake module, importable in this process and in a subprocess (its folder)."""
    folder = tmp_path / "fake"
    (folder / "tensorflow_datasets").mkdir(parents=True)
    (folder / "tensorflow_datasets" / "__init__.py").write_text(FAKE_TFDS)
    module = types.ModuleType("tensorflow_datasets")
    exec(FAKE_TFDS, module.__dict__)
    monkeypatch.setitem(sys.modules, "tensorflow_datasets", module)
    return folder


@pytest.fixture(scope="module")
def translated():
    return translate(PROGRAM, "tfds_case.py")


def test_tfds_load_translates_to_data_source_without_stub(translated):
    stubs = [str(d) for d in translated.program.diagnostics if d.severity == "stub"]
    assert not stubs, stubs
    text = translated.text
    assert 'load_tfds(\n    "fake_images", split=["train[:75%]", "test"], as_supervised=True, with_info=True\n)' \
        in text
    assert "tfds.data_source(" in text and "import tensorflow\n" not in text and "tfds.Split" not in text


def test_tfds_pipeline_yields_tf_data_batches(translated, fake_tfds):
    """Mapped (resize of images of several sizes, one-hot labels; a function a script function
    made: ``.map(make_preprocess(4))``) and batched: tf.data's
    batches, in the model's layout; the unsupervised split: dicts of the features."""
    pytest.importorskip("tensorflow")
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import load_source_module

    from transpiler import verify

    generated = verify.load_generated(translated.text)
    original = load_source_module(PROGRAM)
    assert generated.num_classes == 3
    for name, count in (("train_ds", 3), ("validation_ds", 2)):
        ours = [(x.numpy(), y.numpy()) for x, y in getattr(generated, name)]
        theirs = [(x.numpy(), y.numpy()) for x, y in getattr(original, name)]
        assert len(ours) == len(theirs) == count
        for (ox, oy), (tx, ty) in zip(ours, theirs):
            np.testing.assert_allclose(ox, tx.transpose(0, 3, 1, 2), rtol=1e-6, atol=1e-4)
            np.testing.assert_array_equal(oy, ty)
    ours, theirs = list(generated.plain), list(original.plain.as_numpy_iterator())
    assert [sorted(d) for d in ours] == [["image", "label"]] * 3 == [sorted(d) for d in theirs]
    for o, t in zip(ours, theirs):
        assert o["image"].dtype == torch.uint8 and o["label"].dtype == torch.int64
        np.testing.assert_array_equal(o["image"].numpy(), t["image"])
        assert int(o["label"]) == int(t["label"])

def test_tfds_program_runs(translated, fake_tfds, tmp_path):
    import subprocess

    out = tmp_path / "tfds_case_torch.py"
    out.write_text(translated.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(fake_tfds)})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "classes 3 batches 3" in run.stdout


def test_tfds_load_without_split_stays_a_stub_naming_the_dataset():
    source = PROGRAM.replace('plain = tfds.load("fake_images", split="train[75%:]")',
                             'plain = tfds.load("fake_images")["train"]')
    stubs = [str(d) for d in translate(source, "tfds_case.py").program.diagnostics if d.severity == "stub"]
    assert any("tensorflow_datasets.load('fake_images')" in s for s in stubs), stubs


def test_tfds_shuffle_files_draws_a_new_order_per_pass():
    from transpiler.runtime.torch.pipelines import ElementPipeline

    records = list(range(50))
    pipe = ElementPipeline.from_records(records, lambda r: torch.tensor(r), shuffle=True)
    torch.manual_seed(0)
    first, second = [int(x) for x in pipe], [int(x) for x in pipe]
    assert sorted(first) == sorted(second) == records and first != second and first != records
    assert [int(x) for x in ElementPipeline.from_records(records, torch.tensor)] == records
    assert pipe.cardinality() == 50 and pipe.batch(8).cardinality() == 7
