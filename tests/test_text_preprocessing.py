"""The runtime's text and lookup layers (runtime/torch/text.py) and text_dataset_from_directory
(runtime/torch/directories.py) compute what Keras computes: vocabularies in Keras' order,
ids, encodings and inverted lookups, compared with Keras' own layers on the same data."""

from __future__ import annotations

import os

import numpy as np
import pytest

import torch  # noqa: F401  (torch before TensorFlow in one process)

from transpiler.runtime.torch import directories, text

keras = pytest.importorskip("keras")

TEXTS = ["The cat sat on the mat.", "the DOG sat!!  on a log", "A cat, a dog; and   THE bird?",
         "Ünïcode ÄB and tabs\there", "dog dog dog", "", "it's well-known: x-ray (rare)"]


def _vocab(layer):
    return [v.item() if isinstance(v, np.generic) else v for v in layer.get_vocabulary()]


def _same(ours, theirs):
    theirs = np.asarray(theirs)
    ours = ours.numpy() if isinstance(ours, torch.Tensor) else np.asarray(ours)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    if theirs.dtype.kind in "SO":
        theirs = np.vectorize(lambda b: b.decode("utf-8") if isinstance(b, bytes) else b, otypes=[object])(theirs)
        assert ours.tolist() == theirs.tolist()
    else:
        np.testing.assert_allclose(ours.astype(np.float64), theirs.astype(np.float64), rtol=1e-6, atol=1e-7)


TV_CASES = [dict(), dict(max_tokens=8), dict(output_sequence_length=4), dict(output_sequence_length=12),
            dict(standardize="lower"), dict(standardize=None, split="character", output_sequence_length=10),
            dict(standardize="strip_punctuation"), dict(ngrams=2, max_tokens=30),
            dict(output_mode="multi_hot"), dict(output_mode="count", max_tokens=10),
            dict(output_mode="tf_idf"), dict(output_mode="tf_idf", ngrams=(1, 3), max_tokens=20, pad_to_max_tokens=True),
            dict(output_mode="multi_hot", max_tokens=12, pad_to_max_tokens=True)]


@pytest.mark.parametrize("config", TV_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_text_vectorization_adapt_and_call_equal_keras(config):
    ours, theirs = text.TextVectorization(**config), keras.layers.TextVectorization(**config)
    ours.adapt(TEXTS)
    theirs.adapt(TEXTS)
    assert ours.get_vocabulary() == _vocab(theirs)
    assert ours.get_vocabulary(include_special_tokens=False) == [
        v.item() if isinstance(v, np.generic) else v for v in theirs.get_vocabulary(include_special_tokens=False)]
    assert ours.vocabulary_size() == theirs.vocabulary_size()
    batch = np.array(TEXTS[:3] + ["unseen words only", "the the the cat"])
    _same(ours(batch), theirs(batch))
    _same(ours(batch[:, None]), theirs(batch[:, None]))  # (n, 1) strings, as keras.Input(shape=(1,)) takes them
    if config.get("output_mode", "int") == "int":
        _same(ours("the cat"), theirs("the cat"))  # one string


def test_text_vectorization_adapts_on_batches_and_numpy_and_fixed_vocabulary():
    batches = [np.array(TEXTS[i:i + 2]) for i in range(0, len(TEXTS), 2)]
    ours, theirs = text.TextVectorization(max_tokens=9), keras.layers.TextVectorization(max_tokens=9)
    ours.adapt(iter(batches))
    import tensorflow as tf

    theirs.adapt(tf.data.Dataset.from_tensor_slices(np.array(TEXTS)).batch(2))
    assert ours.get_vocabulary() == _vocab(theirs)
    fixed = ["cat", "dog", "the"]
    ours = text.TextVectorization(vocabulary=fixed, output_sequence_length=5)
    theirs = keras.layers.TextVectorization(vocabulary=fixed, output_sequence_length=5)
    assert ours.get_vocabulary() == _vocab(theirs)
    _same(ours(np.array(TEXTS)), theirs(np.array(TEXTS)))
    with pytest.raises(ValueError):
        ours.adapt(TEXTS)  # (Keras refuses to adapt a layer with a given vocabulary)


def test_custom_standardize_function_is_called_on_the_strings():
    def standardize(batch):
        return np.char.replace(np.char.lower(batch.astype(str)), "<br />", " ")

    ours = text.TextVectorization(standardize=standardize, output_sequence_length=6)
    ours.adapt(["A<br />b c", "b C d"])
    assert ours.get_vocabulary() == ["", "[UNK]", "c", "b", "d", "a"]
    assert ours(["a b<br />z"]).tolist() == [[5, 3, 1, 0, 0, 0]]


STRING_VOCAB = ["cat", "dog", "bird", "ünï"]
LOOKUP_CASES = [dict(), dict(mask_token=""), dict(num_oov_indices=0), dict(mask_token="", oov_token="?"),
                dict(output_mode="one_hot"), dict(output_mode="multi_hot"), dict(output_mode="count", mask_token=""),
                dict(output_mode="multi_hot", max_tokens=8, pad_to_max_tokens=True),
                dict(output_mode="tf_idf", idf_weights=[0.5, 1.0, 2.0, 3.0])]


@pytest.mark.parametrize("config", LOOKUP_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_string_lookup_with_vocabulary_equals_keras(config):
    ours = text.StringLookup(vocabulary=STRING_VOCAB, **config)
    theirs = keras.layers.StringLookup(vocabulary=STRING_VOCAB, **config)
    assert ours.get_vocabulary() == _vocab(theirs) and ours.vocabulary_size() == theirs.vocabulary_size()
    known = np.array([["cat", "bird"], ["ünï", "dog"]])
    _same(ours(known), theirs(known))
    _same(ours(known[:, 0]), theirs(known[:, 0]))
    if config.get("num_oov_indices", 1):
        mixed = np.array([["cat", "fish"], ["", "dog"]])
        _same(ours(mixed), theirs(mixed))
    else:
        with pytest.raises(ValueError, match="num_oov_indices=0"):
            ours(np.array(["fish"]))


@pytest.mark.parametrize("config", [dict(), dict(mask_token=""), dict(num_oov_indices=2, oov_token="#")],
                         ids=["default", "mask", "two_oov"])
def test_string_lookup_invert_equals_keras(config):
    if config.get("num_oov_indices", 1) > 1:
        with pytest.raises(NotImplementedError, match="FarmHash"):
            text.StringLookup(vocabulary=STRING_VOCAB, **config)
        return
    ours = text.StringLookup(vocabulary=STRING_VOCAB, invert=True, **config)
    theirs = keras.layers.StringLookup(vocabulary=STRING_VOCAB, invert=True, **config)
    ids = np.array([[0, 1, 2], [3, 4, 5], [6, 9, 1]])
    assert ours.get_vocabulary() == _vocab(theirs)
    _same(ours(ids), theirs(ids))
    _same(ours(torch.as_tensor(ids)), theirs(ids))


@pytest.mark.parametrize("config", [dict(), dict(max_tokens=4), dict(mask_token="", num_oov_indices=0),
                                    dict(output_mode="multi_hot"), dict(output_mode="tf_idf")],
                         ids=["default", "max_tokens", "mask_no_oov", "multi_hot", "tf_idf"])
def test_string_lookup_adapt_equals_keras(config):
    rng = np.random.RandomState(0)
    words = np.array(["a", "b", "c", "dd", "é", "B", "[UNK]"])
    data = words[rng.randint(0, len(words), (40, 3))]
    ours, theirs = text.StringLookup(**config), keras.layers.StringLookup(**config)
    ours.adapt(data)
    theirs.adapt(data)
    assert ours.get_vocabulary() == _vocab(theirs)
    if config.get("output_mode") == "tf_idf":
        np.testing.assert_allclose(ours.lookup.idf_weights if hasattr(ours, "lookup") else ours.idf_weights,
                                   np.asarray(theirs.idf_weights), rtol=1e-6)
    probe = data[:5] if config.get("num_oov_indices", 1) else np.where(data[:5] == "[UNK]", "a", data[:5])
    _same(ours(probe), theirs(probe))
    if not config.get("num_oov_indices", 1):
        with pytest.raises(ValueError, match="num_oov_indices=0"):
            ours(data[:5])  # (Keras' assertion fails on the OOV token too)
    ours.adapt(data[:, 0])  # a vector: one token per row
    theirs.adapt(data[:, 0])
    assert ours.get_vocabulary() == _vocab(theirs)


INT_CASES = [dict(), dict(mask_token=0), dict(num_oov_indices=3), dict(num_oov_indices=2, mask_token=0),
             dict(output_mode="one_hot"), dict(output_mode="count", max_tokens=5)]


@pytest.mark.parametrize("config", INT_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_integer_lookup_equals_keras(config):
    rng = np.random.RandomState(1)
    data = rng.choice([3, 1, 2, 2, 10, 10, 3, 7, 0, 42], (30, 2))
    ours, theirs = text.IntegerLookup(**config), keras.layers.IntegerLookup(**config)
    ours.adapt(data)
    theirs.adapt(data)
    assert ours.get_vocabulary() == _vocab(theirs) and ours.vocabulary_size() == theirs.vocabulary_size()
    probe = np.array([[3, 0], [5, 10], [11, 42], [-4, 7]])
    _same(ours(probe), theirs(probe))
    given = [5, 7, 9]
    ours, theirs = text.IntegerLookup(vocabulary=given, **config), keras.layers.IntegerLookup(vocabulary=given, **config)
    _same(ours(probe), theirs(probe))
    if config.get("output_mode", "int") == "int":
        inv_ours = text.IntegerLookup(vocabulary=given, invert=True, **config)
        inv_theirs = keras.layers.IntegerLookup(vocabulary=given, invert=True, **config)
        ids = np.array([0, 1, 2, 3, 4, 5, 8])
        _same(inv_ours(ids), inv_theirs(ids))


def _write_text_tree(root):
    rng = np.random.RandomState(3)
    for name in ("neg", "pos", "zzz_extra"):
        os.makedirs(root / name / "sub", exist_ok=True)
        for i in range(7):
            folder = root / name / ("sub" if i % 3 == 0 else "")
            words = " ".join(rng.choice(["good", "bad", "film", "plot", "ok"], rng.randint(2, 9)))
            (folder / f"{name}_{i:02d}.txt").write_text(f"{words} #{i}", encoding="utf-8")
        (root / name / "notes.md").write_text("not a text sample")


@pytest.mark.parametrize("kwargs", [dict(shuffle=False, batch_size=4),
                                    dict(validation_split=0.3, subset="training", seed=11, batch_size=5),
                                    dict(validation_split=0.3, subset="validation", seed=11, batch_size=5,
                                         label_mode="categorical", max_length=9),
                                    dict(class_names=["pos", "neg"], label_mode="binary", shuffle=False)],
                         ids=["ordered", "training", "validation", "class_names"])
def test_text_dataset_from_directory_equals_keras(tmp_path, kwargs):
    _write_text_tree(tmp_path)
    ours = directories.text_dataset_from_directory(str(tmp_path), verbose=False, **kwargs)
    theirs = keras.utils.text_dataset_from_directory(str(tmp_path), verbose=False, **kwargs)
    assert ours.class_names == theirs.class_names
    if kwargs.get("shuffle", True):
        # the same files in the split (Keras then reshuffles them through a buffer at every pass)
        ours_pairs = sorted((t, tuple(np.asarray(y).reshape(-1).tolist())) for x, y in ours for t, y in zip(x, y))
        theirs_pairs = sorted((t.decode(), tuple(np.asarray(y).reshape(-1).tolist()))
                              for x, y in theirs for t, y in zip(x.numpy(), y.numpy()))
        assert ours_pairs == theirs_pairs
        return
    batches = list(ours)
    for (x, y), (kx, ky) in zip(batches, theirs, strict=True):
        assert x.tolist() == [t.decode() for t in kx.numpy()]
        np.testing.assert_array_equal(y.numpy(), ky.numpy())


def test_text_dataset_both_subsets_split_like_keras(tmp_path):
    _write_text_tree(tmp_path)
    train, val = directories.text_dataset_from_directory(str(tmp_path), validation_split=0.25, subset="both",
                                                         seed=5, verbose=False)
    ktrain, kval = keras.utils.text_dataset_from_directory(str(tmp_path), validation_split=0.25, subset="both",
                                                           seed=5, verbose=False)
    assert len(train.file_paths) == 16 and len(val.file_paths) == 5
    for x, y in val:  # (validation: not shuffled again, the same batches)
        kx, ky = next(iter(kval))
        assert x.tolist() == [t.decode() for t in kx.numpy()] and y.tolist() == ky.numpy().tolist()
    assert sorted(t for x, _ in train for t in x) == sorted(t.decode() for x, _ in ktrain for t in x.numpy())
