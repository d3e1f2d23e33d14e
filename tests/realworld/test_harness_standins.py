"""The stand-in mechanisms that can go wrong on their own: tensorflow_datasets' table and split
syntax, archives extracted where earlier Keras put them, WAV folders."""

import io
import os
import tarfile
import wave

import numpy as np
import pytest

from bench.realworld import standins


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return standins.StandInCache(str(tmp_path_factory.mktemp("standins")))


def test_tfds_split_syntax_percent_count_and_sum():
    sizes = {"train": 120, "test": 40}
    assert standins.tfds_split_ranges("train", sizes) == [("train", 0, 120)]
    assert standins.tfds_split_ranges("train[:90%]", sizes) == [("train", 0, 108)]
    assert standins.tfds_split_ranges("train[90%:]", sizes) == [("train", 108, 120)]
    assert standins.tfds_split_ranges("train[40%:50%]", sizes) == [("train", 48, 60)]
    assert standins.tfds_split_ranges("train[:10]+test[-5:]", sizes) == [("train", 0, 10), ("test", 35, 40)]
    with pytest.raises(standins.SplitError):
        standins.tfds_split_ranges("validation", sizes)


def test_tfds_examples_have_the_builders_features_and_slices_partition_the_split():
    whole = standins.tfds_examples("tf_flowers", "train")
    head, tail = standins.tfds_examples("tf_flowers", "train[:90%]"), standins.tfds_examples("tf_flowers", "train[90%:]")
    assert whole["image"].dtype == np.uint8 and whole["image"].shape[1:] == (180, 240, 3)
    assert len(head["label"]) + len(tail["label"]) == len(whole["label"]) == standins.TFDS_DATASETS["tf_flowers"].splits["train"]
    np.testing.assert_array_equal(np.concatenate([head["image"], tail["image"]]), whole["image"])
    assert whole["label"].max() < 5
    cyc = standins.tfds_examples("cycle_gan/horse2zebra", "trainA")
    assert cyc["image"].shape[1:] == (256, 256, 3)


def test_tfds_few_shot_standin_repeats_each_used_class():
    ex = standins.tfds_examples("omniglot", "train")
    counts = np.bincount(ex["label"])
    assert (counts[counts > 0] >= 5).all() and "alphabet" in ex  # 5 shots per class need 5 examples


def test_archive_standins_also_extracted_where_earlier_keras_put_them(tmp_path, cache):
    text = ('keras.utils.get_file("news20.tar.gz", "http://www.cs.cmu.edu/afs/cs.cmu.edu/project/theo-20/'
            'www/data/news20.tar.gz", untar=True)\n')
    p = standins.plan(text)
    home = tmp_path / "home" / ".keras"
    cwd = tmp_path / "prog"
    cwd.mkdir()
    cache.plant(p, str(home), str(cwd))
    group = home / "datasets" / "20_newsgroup" / "comp.graphics"
    assert group.is_dir() and (group / "38987").exists()  # the file the program prints by name
    assert (cwd / "datasets" / "20_newsgroup" / "comp.graphics").is_dir()
    assert standins.extract_legacy(str(tmp_path / "plain.csv"), str(tmp_path / "x")) == []


def test_ljspeech_standin_is_a_bz2_tar_of_wavs_and_metadata(cache):
    by_name = {s.filename: s for s in standins.URL_STANDINS}
    with tarfile.open(cache.url_file(by_name["LJSpeech-1.1.tar.bz2"]), "r:bz2") as tar:
        names = tar.getnames()
        meta = tar.extractfile("LJSpeech-1.1/metadata.csv").read().decode().splitlines()
        first = meta[0].split("|")
        wav = tar.extractfile(f"LJSpeech-1.1/wavs/{first[0]}.wav").read()
    assert len(first) == 3 and sum(n.endswith(".wav") for n in names) == len(meta)
    with wave.open(io.BytesIO(wav)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 22050) and w.getnframes() > 0


def test_epoch_cap_leaves_learning_rate_schedule_lengths_alone():
    from bench.realworld import edits

    text, changes = edits.edit("warmup_epochs=15\ndecay_epochs = 85\nepochs = 30\n", {})
    assert text == "warmup_epochs=15\ndecay_epochs = 85\nepochs = 1\n" and [c.line for c in changes] == [3]


def test_census_standin_train_file_holds_every_category_of_the_real_set():
    rows = [line.split(", ") for line in standins._adult("data").decode().splitlines()]
    columns = {"workclass": 1, "education": 3, "marital_status": 5, "occupation": 6, "relationship": 7,
               "race": 8, "gender": 9, "native_country": 13}
    for name, col in columns.items():
        assert {r[col] for r in rows} == set(standins._ADULT_CATS[name]), name
    assert len(standins._ADULT_CATS["native_country"]) == 41  # the largest vocabulary, as in the real file


def test_eeg_and_speaker_standins_have_the_layouts_the_programs_read():
    import csv
    import json

    (text,) = standins._eeg_csv().values()
    rows = list(csv.DictReader(io.StringIO(text.decode())))
    assert {"raw_values", "signal_quality", "label"} <= set(rows[0]) and len(json.loads(rows[0]["raw_values"])) == 512
    assert {"unlabeled", "everyone paired"} <= {r["label"] for r in rows}
    tree = standins._speaker_tree()
    folders = {p.split("/")[1] for p in tree}
    assert {"_background_noise_", "other"} < folders and len(folders) >= 4
    with wave.open(io.BytesIO(next(v for k, v in tree.items() if "/other/" not in k and "noise" not in k))) as w:
        assert w.getframerate() == 16000 and w.getnframes() == 16000


def test_step_cap_covers_iteration_counts_named_iters():
    from bench.realworld import edits

    text, changes = edits.edit("meta_iters = 2000\ninner_iters = 4\nfilters = 64\n", {})
    assert text == "meta_iters = 4\ninner_iters = 4\nfilters = 64\n"
    assert [(c.line, c.kind) for c in changes] == [(1, "steps")]


def test_a_translations_vision_dataset_call_plants_its_keras_dataset():
    """``from torchvision.datasets import MNIST`` then ``MNIST(...)`` (mnist_forward_forward):
    the original's text names no ``datasets.MNIST``; its translation's ``VisionDataset("mnist")``
    reads keras.datasets' mnist.npz, which must be planted (the run went to the network)."""
    from bench.realworld import standins

    p = standins.plan('from torchvision.datasets import MNIST\nMNIST("./data/", train=True)\n'
                      'VisionDataset("mnist", train=True, transform=transform)\n')
    assert p.keras_datasets == ["mnist"]
