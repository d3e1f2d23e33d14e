"""The checkpoint flags and ``transpile verify`` from the command line, as a user runs them."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch  # before TensorFlow (see conftest.py)
import keras
from safetensors.torch import load_file

from harness import load_source_module, randomize_keras_weights
from transpiler import verify
from transpiler.cli import run
from corpus_sample import sampled  # (every other case; the rest under -m corpus_all)

ROOT = os.path.dirname(os.path.dirname(__file__))
CORPUS = os.path.join(ROOT, "corpus", "keras")
CORPUS_NAMES = sorted(f[:-3] for f in os.listdir(CORPUS) if f.endswith(".py"))


def keras_model(path: str, seed: int = 0):
    with open(path) as fh:
        source = fh.read()
    keras.backend.clear_session()
    model = load_source_module(source).build_model()
    randomize_keras_weights(model, seed)
    return model


@pytest.fixture
def work(tmp_path):
    shutil.copy(os.path.join(CORPUS, "mnist_cnn.py"), tmp_path / "mnist_cnn.py")
    model = keras_model(str(tmp_path / "mnist_cnn.py"))
    model.save_weights(str(tmp_path / "w.weights.h5"))
    return tmp_path, model


def _generated(path):
    with open(path) as fh:
        return verify.load_generated(fh.read())


def test_weights_default_output_loaded_by_the_script(work, capsys):
    tmp, kmodel = work
    src, out = str(tmp / "mnist_cnn.py"), str(tmp / "out.py")
    assert run([src, "--to", "pytorch", "-o", out, "--weights", str(tmp / "w.weights.h5")]) == 0
    err = capsys.readouterr().err
    assert "out.safetensors" in err and "Traceback" not in err
    text = open(out).read()
    assert "model.load_state_dict(load_file(CONVERTED_WEIGHTS))" in text
    assert '"out.safetensors"' in text
    tmodel = _generated(out).build_model()
    state = load_file(str(tmp / "out.safetensors"))
    assert set(state) == set(tmodel.state_dict())
    tmodel.load_state_dict(state, strict=True)
    from transpiler.translate import translate

    graph = translate(open(src).read(), src).program.models[0].graph
    inputs = verify.random_inputs(graph, 4, 0)
    assert max(c.max_abs for c in verify.run_both(kmodel, tmodel, graph, inputs)) <= 1e-4


def test_weights_out_pt(work):
    tmp, _ = work
    out = str(tmp / "out.py")
    assert run([str(tmp / "mnist_cnn.py"), "--to", "pytorch", "-o", out, "--weights",
                str(tmp / "w.weights.h5"), "--weights-out", str(tmp / "sub.pt"), "-q"]) == 0
    assert "torch.load(CONVERTED_WEIGHTS, weights_only=True)" in open(out).read()
    _generated(out).build_model().load_state_dict(torch.load(str(tmp / "sub.pt"), weights_only=True), strict=True)


def test_weights_translate_the_script_once(work, monkeypatch):
    """``--weights`` decides which model loads the checkpoint while the script is translated
    (cli_weights.WeightsPlan): one translation, one printing (and formatting) of the script,
    not a plain one and another with the link; the output is the one the explicit link gives."""
    import transpiler.translate as tr

    tmp, _ = work
    src, out = str(tmp / "mnist_cnn.py"), str(tmp / "out.py")
    real_translate, real_print = tr.translate, tr.print_torch_script
    translations, printed = [], []
    monkeypatch.setattr(tr, "translate", lambda *a, **k: translations.append(a[1]) or real_translate(*a, **k))
    monkeypatch.setattr(tr, "print_torch_script", lambda *a, **k: printed.append(1) or real_print(*a, **k))
    assert run([src, "--to", "pytorch", "-o", out, "--weights", str(tmp / "w.weights.h5"), "-q"]) == 0
    assert translations == [src] and len(printed) == 1
    source = open(src).read()
    model = real_translate(source, src).program.models[0].class_name
    link = {"model": model, "path": "out.safetensors", "source": "w.weights.h5"}
    assert open(out).read() == real_translate(source, src, load_weights=link).text


def test_torch_checkpoint_back_to_keras(work):
    tmp, kmodel = work
    src, out = str(tmp / "mnist_cnn.py"), str(tmp / "out.py")
    assert run([src, "--to", "pytorch", "-o", out, "-q"]) == 0
    tmodel = _generated(out).build_model()
    pt = str(tmp / "trained.pt")
    torch.save(tmodel.state_dict(), pt)
    back = str(tmp / "back.weights.h5")
    assert run([src, "--to", "pytorch", "-o", out, "--weights", pt, "--weights-out", back, "-q"]) == 0
    fresh = keras_model(src, seed=5)
    fresh.load_weights(back)
    from transpiler.translate import translate

    graph = translate(open(src).read(), src).program.models[0].graph
    inputs = verify.random_inputs(graph, 4, 0)
    assert max(c.max_abs for c in verify.run_both(fresh, tmodel, graph, inputs)) <= 1e-4


def test_torch_checkpoint_needs_a_keras_output_name(work, capsys):
    tmp, _ = work
    pt = str(tmp / "x.pt")
    torch.save({"a": torch.zeros(1)}, pt)
    assert run([str(tmp / "mnist_cnn.py"), "--to", "pytorch", "-o", str(tmp / "o.py"), "--weights", pt]) == 2
    assert "--weights-out NAME.weights.h5" in capsys.readouterr().err


def test_mismatch_exit_2_nothing_written(work, capsys):
    tmp, _ = work
    other = tmp / "mlp.py"
    shutil.copy(os.path.join(CORPUS, "mlp_regression.py"), other)
    out = tmp / "o.py"
    assert run([str(other), "--to", "pytorch", "-o", str(out), "--weights", str(tmp / "w.weights.h5")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "layer" in err
    assert not out.exists() and not (tmp / "o.safetensors").exists()


@pytest.mark.parametrize("content", [b"", b"\x89HDF\r\n\x1a\n" + b"\0" * 64, b"junk junk junk"])
def test_bad_checkpoint_exit_2(work, capsys, content):
    tmp, _ = work
    bad = tmp / "bad.weights.h5"
    bad.write_bytes(content)
    assert run([str(tmp / "mnist_cnn.py"), "--to", "pytorch", "-o", str(tmp / "o.py"), "--weights", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("transpile: error:") and "Traceback" not in err
    assert not (tmp / "o.py").exists()


def test_pickle_payload_never_runs(work, capsys):
    tmp, _ = work
    marker = tmp / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    evil = tmp / "evil.pt"
    with open(evil, "wb") as fh:
        pickle.dump({"conv2d.weight": Payload()}, fh)
    code = run([str(tmp / "mnist_cnn.py"), "--to", "pytorch", "-o", str(tmp / "o.py"), "--weights", str(evil),
                "--weights-out", str(tmp / "b.weights.h5")])
    assert code == 2 and not marker.exists()
    assert "refused" in capsys.readouterr().err


def test_weights_flags_refused_in_directory_mode(work, capsys):
    tmp, _ = work
    assert run([str(tmp), "--to", "pytorch", "--weights", str(tmp / "w.weights.h5")]) == 2
    assert run([str(tmp / "mnist_cnn.py"), "--to", "pytorch", "--weights-out", "x.safetensors"]) == 2


def test_trace_weights_start_from_the_keras_initial_weights(work):
    tmp, _ = work
    src, out = str(tmp / "mnist_cnn.py"), str(tmp / "out.py")
    proc = subprocess.run([sys.executable, "-m", "transpiler", src, "--to", "pytorch", "-o", out,
                           "--trace-weights"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "initial weights of the Keras model" in proc.stderr
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    with open(src) as fh:
        kmodel = load_source_module(fh.read()).build_model()
    tmodel = _generated(out).build_model()
    tmodel.load_state_dict(load_file(str(tmp / "out.safetensors")), strict=True)
    from transpiler.translate import translate

    graph = translate(open(src).read(), src).program.models[0].graph
    expected = verify.map_keras_weights(graph, kmodel)
    for key, value in tmodel.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), expected[key].numpy(), err_msg=key)


def test_trace_weights_reports_a_failing_builder(tmp_path, capsys):
    src = tmp_path / "broken.py"
    src.write_text("import keras\nfrom keras import layers\n\n\ndef build_model():\n"
                   "    inp = keras.Input(shape=(4,))\n    out = layers.Dense(2)(inp)\n"
                   "    raise RuntimeError('the user builder fails')\n    return keras.Model(inp, out)\n")
    code = run([str(src), "--to", "pytorch", "-o", str(tmp_path / "o.py"), "--trace-weights"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "the user builder fails" in err and not (tmp_path / "o.py").exists()


#: corpus models verify cannot build yet, with the reason (strict xfail)
VERIFY_UNBUILT = {"data_sized_blocks": "verify calls build_model() with keyword names of the run-time sizes "
                                       "(len_vocab) the builder does not take",
                  "text_lookup_classifier": "verify calls build_model() with keyword names of the run-time sizes "
                                            "(vectorize_layer_vocabulary_size) the builder does not take"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sampled([pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=VERIFY_UNBUILT[n]))
                                          if n in VERIFY_UNBUILT else n for n in CORPUS_NAMES], every=4))
def test_verify_report_on_every_corpus_model(name, tmp_path, capsys):
    src = os.path.join(CORPUS, f"{name}.py")
    out = str(tmp_path / "out.py")
    assert run([src, "--to", "pytorch", "-o", out, "-q"]) == 0
    capsys.readouterr()
    keras.backend.clear_session()
    code = run(["verify", src, out, "--steps", "0", "--batches", "2"])
    report = capsys.readouterr().out
    assert code == 0, report
    assert "max abs err" in report and "FAIL" not in report and " pass" in report


def test_verify_with_checkpoint_and_training_steps(work, capsys):
    tmp, _ = work
    src, out = str(tmp / "mnist_cnn.py"), str(tmp / "out.py")
    assert run([src, "--to", "pytorch", "-o", out, "-q"]) == 0
    capsys.readouterr()
    keras.backend.clear_session()
    assert run(["verify", src, out, "--weights", str(tmp / "w.weights.h5"), "--steps", "3"]) == 0
    report = capsys.readouterr().out
    assert "weights from" in report and "keras loss" in report and "training: pass" in report


def test_verify_fails_on_a_wrong_module(work, capsys):
    tmp, _ = work
    src, out = str(tmp / "mnist_cnn.py"), str(tmp / "out.py")
    assert run([src, "--to", "pytorch", "-o", out, "-q"]) == 0
    text = open(out).read().replace("F.relu(", "torch.tanh(", 1)
    assert text != open(out).read()
    with open(out, "w") as fh:
        fh.write(text)
    capsys.readouterr()
    keras.backend.clear_session()
    assert run(["verify", src, out, "--steps", "0"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_verify_bad_usage(tmp_path, capsys):
    assert run(["verify", str(tmp_path / "nope.py"), str(tmp_path / "o.py")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_verify_exact_trains_the_flagged_program(tmp_path, capsys):
    """``--exact --verify``: the training comparison trains the program that
    was written (KerasEmbedding, KerasAdam), which follows raw Keras to float64 rounding."""
    import re

    src, out = os.path.join(CORPUS, "text_cnn.py"), str(tmp_path / "out.py")
    keras.backend.clear_session()
    assert run([src, "--to", "pytorch", "-o", out, "-q", "--exact", "--verify"]) == 0
    report = capsys.readouterr().out
    assert "KerasEmbedding(" in open(out).read()
    assert "training: pass" in report, report
    largest = float(re.search(r"largest relative difference ([0-9.e+-]+)\)", report).group(1))
    assert largest <= 1e-12, report
