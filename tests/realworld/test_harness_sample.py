"""A small sample of the real-world harness in the default run: the machinery itself (stand-in
data planted where Keras reads it, the original running on it under the run's instrumentation,
no network), not translation quality. The whole set is ``pytest -m realworld``."""

import os
import sys

import pytest

from bench.realworld import report, run, standins

KERAS_SET = os.path.join(run.REALWORLD, "keras")
pytestmark = pytest.mark.skipif(not os.path.isdir(KERAS_SET), reason="no ../shared/realworld set here")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return standins.StandInCache(str(tmp_path_factory.mktemp("standins")))


def test_network_is_refused_inside_a_run(tmp_path):
    prog = tmp_path / "net.py"
    prog.write_text("import urllib.request\nurllib.request.urlopen('http://example.org', timeout=5)\n")
    env = run._base_env(str(tmp_path / "home"))
    (tmp_path / "planted.txt").write_text("")
    r = run._execute(sys.executable, "net.py", str(tmp_path), env, "none", {})
    assert r.status == "fails"
    assert "no network" in r.reason and "network blocked" in " ".join(r.record["events"])


def test_sample_original_runs_on_standin_mnist(tmp_path, cache):
    """trainer_pattern.py: keras.datasets.mnist from the planted cache (Keras' own hash check waived
    for it), its two fits capped at 1 epoch of 4 steps, per-batch logs recorded."""
    res = run.run_keras_script(os.path.join(KERAS_SET, "trainer_pattern.py"), str(tmp_path), cache,
                               run_translation=False)
    assert res.translate_rc in (0, 2, 3)  # measured, not asserted: translation quality is not this test's
    assert res.standins == ["mnist"]
    assert res.original.status == "ok", res.original.reason
    events = res.original.record["events"]
    assert "hash check waived for stand-in mnist.npz" in events
    assert [e for e in events if e.startswith("fit #")] == ["fit #1: epochs 1, steps_per_epoch 4",
                                                           "fit #2: epochs 1, steps_per_epoch 4"]
    assert len(res.original.record["logs"]) == 4
    assert {c["kind"] for c in res.changes["original"]} == {"epochs"}
    assert res.outcome in run.OUTCOMES


@pytest.mark.realworld
def test_autoencoder_first_steps_equal(tmp_path, cache):
    """The one keras.io script that translates clean today trains its first 3 steps like Keras."""
    res = run.run_keras_script(os.path.join(KERAS_SET, "autoencoder.py"), str(tmp_path), cache)
    assert res.outcome == "first steps equal", (res.compare, res.translation.reason)


@pytest.mark.realworld
def test_whole_keras_set_is_measured(tmp_path):
    from bench.realworld.cli import main

    out = tmp_path / "realworld.md"
    assert main(["--out", str(out), "--work", str(tmp_path / "work")]) == 0
    assert "| autoencoder.py |" in out.read_text()
