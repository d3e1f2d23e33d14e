"""The real-world harness's own parts, without running any program: the edits it may make in its
copies, the stand-in files (in the format Keras' loaders read), the loss bookkeeping."""

import gzip
import json
import io
import os
import pickle
import tarfile
import zipfile

import numpy as np
import pytest

from bench.realworld import edits, report, run, standins


def test_edits_cap_epochs_and_steps_and_record_each_line():
    text = ("EPOCHS = 100\nnum_epochs: int = 7\nepoch = 0\nlr = 1e-3\n"
            "model.fit(x, y, epochs=20, steps_per_epoch=500, batch_size=32)\n"
            "for epoch in range(50):\n    pass\n# epochs = 30\n")
    out, changes = edits.edit(text, {})
    assert out.splitlines() == ["EPOCHS = 1", "num_epochs: int = 1", "epoch = 0", "lr = 1e-3",
                                "model.fit(x, y, epochs=1, steps_per_epoch=4, batch_size=32)",
                                "for epoch in range(1):", "    pass", "# epochs = 30"]
    assert [(c.line, c.kind) for c in changes] == [(1, "epochs"), (2, "epochs"), (5, "epochs+steps"),
                                                   (6, "epochs")]


def test_edits_leave_everything_else_alone():
    text = "learning_rate_epochs = 3.5\nx = keras.layers.Dense(64)\ntimesteps = 1000\nwarmup_epoch = 1\n"
    out, changes = edits.edit(text, {})
    assert out == text and changes == []


def test_edits_point_urls_at_standins_and_drop_hashes():
    text = 'p = get_file("f.csv", origin="https://x.org/heart.csv", file_hash="' + "ab" * 32 + '")\n'
    out, changes = edits.edit(text, {"https://x.org/heart.csv": "file:///tmp/heart.csv"})
    assert out == 'p = get_file("f.csv", origin="file:///tmp/heart.csv", file_hash=None)\n'
    assert changes[0].kind == "data+hash"


def test_per_step_undoes_keras_running_means():
    losses = [0.9, 0.5, 0.7, 0.1]
    means = [sum(losses[: k + 1]) / (k + 1) for k in range(4)]
    assert np.allclose(run.per_step([{"loss": m} for m in means]), losses)


def test_compare_losses_tells_equal_from_different():
    assert run.compare_losses([1.0, 2.0, 3.0], [1.0, 2.0, 3.00001])[0]
    ok, text = run.compare_losses([1.0, 2.0, 3.0], [1.0, 2.0, 3.01])
    assert not ok and "3.3e-03" in text
    assert not run.compare_losses([1.0, 2.0], [1.0, 2.0])[0]  # fewer than 3 steps: not equal


def test_plan_finds_keras_datasets_and_known_urls():
    p = standins.plan('from keras.datasets import mnist\n(x, y), _ = keras.datasets.cifar10.load_data()\n'
                      'df = pd.read_csv("http://storage.googleapis.com/download.tensorflow.org/data/heart.csv")\n'
                      'u = "https://example.org/unknown.bin"\n')
    assert p.keras_datasets == ["mnist", "cifar10"]
    assert [s.filename for s in p.urls.values()] == ["heart.csv"]
    assert p.unknown_urls == ["https://example.org/unknown.bin"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return standins.StandInCache(str(tmp_path_factory.mktemp("standins")))


def test_mnist_and_fashion_standins_have_keras_layouts(cache):
    (path,) = cache.keras_dataset("mnist")
    with np.load(path) as d:
        # the real count: programs slice it by count (siamese_contrastive: x_train[:30000], [30000:])
        assert d["x_train"].shape == (60000, 28, 28) and d["x_train"].dtype == np.uint8
        assert d["y_test"].shape == (standins.N_MNIST_TEST,)
    files = {os.path.basename(p): p for p in cache.keras_dataset("fashion_mnist")}
    with gzip.open(files["train-images-idx3-ubyte.gz"]) as fh:
        images = np.frombuffer(fh.read(), np.uint8, offset=16)
    with gzip.open(files["train-labels-idx1-ubyte.gz"]) as fh:
        labels = np.frombuffer(fh.read(), np.uint8, offset=8)
    assert images.reshape(len(labels), 28, 28).shape == (standins.N_FASHION_TRAIN, 28, 28)


def test_cifar100_standin_is_the_archive_keras_extracts(cache):
    (path,) = cache.keras_dataset("cifar100")
    assert path.endswith("cifar-100-python-target_archive")
    with tarfile.open(path) as tar:
        batch = pickle.load(tar.extractfile("cifar-100-python/train"), encoding="bytes")
    assert batch[b"data"].shape == (standins.N_TRAIN, 3072) and max(batch[b"fine_labels"]) < 100


def test_url_standins_have_their_formats(cache):
    by_name = {s.filename: s for s in standins.URL_STANDINS}
    heart = open(cache.url_file(by_name["heart.csv"])).read().splitlines()
    assert heart[0].split(",")[-1] == "target" and len(heart) == 304
    with zipfile.ZipFile(cache.url_file(by_name["spa-eng.zip"])) as zf:
        line = zf.read("spa-eng/spa.txt").decode().splitlines()[0]
    assert line.count("\t") == 1
    arr = np.load(cache.url_file(by_name["mnist_test_seq.npy"]))
    assert arr.shape[0] == 20 and arr.shape[2:] == (64, 64)


def test_report_counts_and_section_replacement(tmp_path):
    res = run.Result(script="keras/a.py", direction="keras", translate_rc=0, parses=True, pure=True)
    res.original.status, res.translation.status = "ok", "ok"
    res.compare, res.outcome = "equal: max rel err 1e-08", "first steps equal"
    bad = run.Result(script="keras/b.py", direction="keras", translate_rc=2, translate_error="boom")
    bad.outcome = run.classify(bad)
    assert bad.outcome == "translate failed"
    c = report.counts([res, bad], "keras")
    assert (c["clean (translated without stub)"], c["transpiler failures"], c["first steps equal"]) == (1, 1, 1)
    path = str(tmp_path / "rw.md")
    report.write(path, [res, bad], "keras", 60.0, 1)
    report.write(path, [bad], "keras", 60.0, 1)  # a rerun replaces its section, once
    text = open(path).read()
    assert text.count("realworld:keras:begin") == 1 and "| a.py |" not in text and "| b.py |" in text


@pytest.mark.skipif(not os.path.isdir(os.path.join(run.REALWORLD, "torch")), reason="no ../shared/realworld set here")
def test_every_torch_program_file_belongs_to_a_program_with_an_entry():
    from bench.realworld import torch_direction

    base = os.path.join(run.REALWORLD, "torch")
    folders = {torch_direction._folder(name) for name in torch_direction.PROGRAMS}
    for dirpath, _, files in os.walk(base):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                assert any(path.startswith(folder + os.sep) for folder in folders), path
    for name, (entry, _, pre) in torch_direction.PROGRAMS.items():
        for rel in [entry, *pre]:
            assert os.path.exists(os.path.join(torch_direction._folder(name), rel)), (name, rel)


def test_relative_path_standins_land_beside_the_program(tmp_path, cache):
    p = standins.plan("train = datasets.MNIST('../data', train=True, download=True)\n")
    assert [f.name for f in p.files] == ["data/MNIST/", "../data/MNIST/"]
    prog = tmp_path / "work" / "prog"
    prog.mkdir(parents=True)
    cache.plant(p, str(tmp_path / "keras_home"), str(prog))
    raw = tmp_path / "work" / "data" / "MNIST" / "raw"
    with open(raw / "train-labels-idx1-ubyte", "rb") as fh:
        header = fh.read(8)
    assert header[:4] == b"\x00\x00\x08\x01" and int.from_bytes(header[4:], "big") == standins.N_MNIST_TRAIN
    assert (prog / "data" / "MNIST" / "raw" / "t10k-images-idx3-ubyte").exists()


@pytest.mark.skipif(not os.path.isdir(os.path.join(run.REALWORLD, "keras")),
                    reason="reads the original autoencoder.py from ../shared/realworld")
def test_recover_rebuilds_a_result_from_the_work_folder_and_log(tmp_path):
    import json as _json

    from bench.realworld import recover

    folder = tmp_path / "keras" / "autoencoder"
    (folder / "original").mkdir(parents=True)
    (folder / "transpile.err").write_text("a.py:3: stub: thing\nwrote x (1 model, 1 stub)\n")
    (folder / "autoencoder_torch.py").write_text("import torch\n")
    (folder / "original" / "run.err").write_text("Traceback:\nValueError: bad shape\n")
    (folder / "original" / "record.json").write_text(_json.dumps({"logs": [{"loss": 1.0}], "events": []}))
    log = tmp_path / "log"
    log.write_text("keras/autoencoder.py: stubs  (original fails 12.5s: ValueError: bad shape; "
                   "translation not run: 1 stubs) \n")
    (res,) = recover.recover(str(tmp_path), str(log))
    assert (res.stubs, res.models, res.translate_rc, res.parses) == (1, 1, 0, True)
    assert (res.original.status, res.original.secs, res.original.reason) == ("fails", 12.5, "ValueError: bad shape")
    assert res.standins == ["mnist"] and res.outcome == "stubs"


def test_one_run_of_both_directions_writes_both_sections_and_a_diffable_json(tmp_path):
    from bench.realworld import cli

    k = run.Result(script="keras/a.py", direction="keras", translate_rc=0, parses=True, pure=True)
    k.original.status, k.original.secs, k.translation.status = "ok", 12.3, "ok"
    k.compare = "not compared: converted, not loaded"
    k.outcome = run.classify(k)
    t = run.Result(script="torch/prog", direction="torch", translate_rc=0, stubs=3, parses=True, pure=True)
    t.original.status, t.original.reason = "fails", "ModuleNotFoundError: No module named 'torchtext'"
    t.compare, t.outcome = run.compare(t), run.classify(t)
    md = str(tmp_path / "realworld.md")
    cli._write(md, [t, k], 60.0, 2)
    first = (tmp_path / "realworld.json").read_text()
    k.original.secs = 99.9  # a time moves with the load: the JSON does not carry it
    cli._write(md, [t, k], 61.0, 2)
    assert (tmp_path / "realworld.json").read_text() == first
    data = json.loads(first)
    assert data["keras"]["scripts"]["keras/a.py"]["translated without stub"] is True
    assert data["torch"]["scripts"]["torch/prog"] == {
        "translated without stub": False, "translate": "no: 3 stubs (0 models)", "original": "fails",
        "original reason": "ModuleNotFoundError: No module named 'torchtext'", "translation": "not run",
        "translation reason": "", "first 3 steps": "not compared: 3 stubs", "weights": "",
        "outcome": "stubs", "harness changes": "none"}
    text = open(md).read()
    assert "realworld:keras:begin" in text and "realworld:torch:begin" in text
    assert "| prog | no: 3 stubs (0 models) | fails 0.0s: ModuleNotFoundError" in text


def test_kept_original_runs_are_reused_only_under_the_same_key(tmp_path, monkeypatch):
    from bench.realworld import cache

    monkeypatch.setenv("RW_CACHE_DIR", str(tmp_path / "cache"))
    k = cache.key({"a.py": "print(1)\n"}, run._python_main(), [], ["mnist"], {})
    assert k != cache.key({"a.py": "print(2)\n"}, run._python_main(), [], ["mnist"], {})
    assert k != cache.key({"a.py": "print(1)\n"}, run._python_main(), ["--epochs", "1"], ["mnist"], {})
    assert k != cache.key({"a.py": "print(1)\n"}, run._python_main(), [], [], {})
    weights = tmp_path / "w.h5"
    weights.write_bytes(b"initial")
    r = run.Run(status="ok", secs=3.0, record={"losses": [1.0], "weights_saved": {"path": str(weights)}})
    assert cache.load(k, str(tmp_path / "dest.h5")) is None
    cache.store(k, r, str(weights))
    got = cache.load(k, str(tmp_path / "dest.h5"))
    assert got.cached and got.record["losses"] == [1.0] and got.status == "ok"
    assert got.record["weights_saved"]["path"] == str(tmp_path / "dest.h5")
    assert (tmp_path / "dest.h5").read_bytes() == b"initial"
    timeout_key = k[::-1]
    cache.store(timeout_key, run.Run(status="timeout", secs=300.0), str(weights))
    assert cache.load(timeout_key, str(tmp_path / "d2.h5")) is None  # the machine's load, not the program's
    monkeypatch.setitem(cache.SETTINGS, "enabled", False)
    assert cache.load(k, str(tmp_path / "dest.h5")) is None


@pytest.mark.skipif(not os.path.isdir(os.path.join(run.REALWORLD, "keras")), reason="no ../shared/realworld set here")
def test_kept_runs_seeded_from_an_earlier_runs_json_and_work(tmp_path, monkeypatch):
    from dataclasses import asdict

    from bench.realworld import cache

    monkeypatch.setenv("RW_CACHE_DIR", str(tmp_path / "cache"))
    work = tmp_path / "work"
    folder = work / "keras" / "keras__autoencoder"
    folder.mkdir(parents=True)
    (folder / "initial.weights.h5").write_bytes(b"w0")
    res = run.Result(script="keras/autoencoder.py", direction="keras", standins=["mnist"])
    res.original = run.Run(status="ok", secs=30.0, python=run._python_main(),
                           record={"logs": [{"loss": 0.7}], "weights_saved": {"path": "/old/initial.weights.h5"}})
    (tmp_path / "r.json").write_text(json.dumps({"secs": 1, "jobs": 1, "results": [asdict(res)]}))
    assert cache.seed(str(tmp_path / "r.json"), str(work)) == 1
    with open(os.path.join(run.REALWORLD, "keras", "autoencoder.py")) as fh:
        k = cache.key({"autoencoder.py": fh.read()}, run._python_main(), [], ["mnist"], {})
    got = cache.load(k, str(tmp_path / "again.h5"))
    assert got.record["logs"] == [{"loss": 0.7}] and (tmp_path / "again.h5").read_bytes() == b"w0"
