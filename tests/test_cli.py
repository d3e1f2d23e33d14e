"""The command line: outputs, exit codes, messages, and never touching the source."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from transpiler.cli import default_output, run

MODEL = '''\
import keras
from keras import layers


def build_model():
    # a tiny classifier
    return keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3, activation="softmax")])


def main():
    model = build_model()
    model.fit([[0.0] * 4], [0])


if __name__ == "__main__":
    main()
'''


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(MODEL)
    return path


def test_default_output_is_beside_the_source():
    assert default_output("a/train.py", "pytorch") == "a/train_torch.py"


def test_writes_default_output_and_says_where(script, capsys):
    assert run([str(script), "--to", "pytorch"]) == 0
    out = script.with_name("train_torch.py")
    assert out.exists()
    assert f"wrote {out}" in capsys.readouterr().err


def test_source_is_never_modified(script):
    before = script.read_bytes()
    run([str(script), "--to", "pytorch", "-o", str(script.with_name("out.py"))])
    assert script.read_bytes() == before


def test_refuses_to_overwrite_the_source(script, capsys):
    assert run([str(script), "--to", "pytorch", "-o", str(script)]) == 2
    assert "overwrite the source" in capsys.readouterr().err
    assert script.read_text() == MODEL


def test_stubs_are_listed_with_file_and_line(script, capsys):
    run([str(script), "--to", "pytorch", "-o", str(script.with_name("out.py"))])
    err = capsys.readouterr().err
    assert f"{script}:12:" in err and "model.fit" in err


def test_strict_exits_3_when_stubs_were_needed(script):
    assert run([str(script), "--to", "pytorch", "-o", str(script.with_name("out.py")), "--strict"]) == 3


def test_strict_exits_0_without_stubs(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(MODEL.split("\n\ndef main")[0] + "\n")
    assert run([str(path), "--to", "pytorch", "-o", str(tmp_path / "o.py"), "--strict"]) == 0


@pytest.mark.parametrize(
    "content, message",
    [
        (b"x = (\n", "syntax error"),
        (b"", "empty"),
        (b"\xff\xfe\x00bad", "not UTF-8"),
        (b"import numpy as np\nprint(np.ones(3))\n", "no Keras model"),
    ],
    ids=["syntax", "empty", "not-utf8", "no-model"],
)
def test_bad_input_exits_2_with_a_message_and_no_output(tmp_path, capsys, content, message):
    path = tmp_path / "bad.py"
    path.write_bytes(content)
    out = tmp_path / "out.py"
    assert run([str(path), "--to", "pytorch", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists()


def test_syntax_error_names_line_and_column(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text("import keras\n\ndef build_model(:\n    pass\n")
    assert run([str(path), "--to", "pytorch"]) == 2
    assert f"{path}:3:" in capsys.readouterr().err


def test_missing_file_exits_2(tmp_path, capsys):
    assert run([str(tmp_path / "nope.py"), "--to", "pytorch"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_translator_failure_is_an_internal_error_message_not_a_traceback(script, capsys, monkeypatch):
    import transpiler.translate

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(transpiler.translate, "translate", broken)
    assert run([str(script), "--to", "pytorch"]) == 2
    err = capsys.readouterr().err
    assert f"transpile: internal error while translating {script}: RuntimeError: boom" in err
    assert "please report it with the script." in err and "Traceback" not in err


def test_unknown_target_is_a_usage_error(script):
    assert run([str(script), "--to", "jax"]) == 2


EMBEDDING_MODEL = """\
import keras
from keras import layers


def build_model():
    return keras.Sequential([keras.Input(shape=(5,), dtype="int32"), layers.Embedding(20, 4),
                             layers.GlobalAveragePooling1D(), layers.Dense(1)])


if __name__ == "__main__":
    model = build_model()
    model.compile(optimizer="rmsprop", loss="mse")
"""


TORCH_TRAINING = """\
import numpy as np
import torch
import torch.nn as nn

INPUT_SHAPE = (6,)


def build_model():
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def main():
    x = torch.from_numpy(np.random.RandomState(0).randn(16, 6).astype("float32"))
    y = torch.from_numpy(np.arange(16) % 3)
    model = build_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("flag", ["--exact", "--keras-exact-updates"])
def test_exact_flag_to_pytorch(tmp_path, flag, capsys):
    """--exact (and its deprecated alias): Keras' per-occurrence embedding updates, optimizer
    classes and initializers in the generated code (tests/test_training_equivalence.py measures
    them); without it torch's own optimizer and initialisation, and the report lines say what
    that changes."""
    src = tmp_path / "emb.py"
    src.write_text(EMBEDDING_MODEL)
    assert run([str(src), "--to", "pytorch", "-o", str(tmp_path / "exact.py"), flag]) == 0
    err = capsys.readouterr().err
    assert ("deprecated" in err) is (flag == "--keras-exact-updates")
    assert "numeric difference" not in err
    assert run([str(src), "--to", "pytorch", "-o", str(tmp_path / "plain.py")]) == 0
    err = capsys.readouterr().err
    exact, plain = (tmp_path / "exact.py").read_text(), (tmp_path / "plain.py").read_text()
    assert "KerasEmbedding(20, 4)" in exact and "class KerasRMSprop(KerasOptimizer):" in exact
    assert "reset_parameters" in exact
    assert "KerasEmbedding" not in plain and "nn.Embedding(20, 4)" in plain
    assert "torch.optim.RMSprop(" in plain and "reset_parameters" not in plain
    for what in ("RMSprop: torch divides by sqrt(v) + eps", "Embedding under an adaptive optimizer",
                 "initial weights: torch's default initialisation"):
        assert f"numeric difference: {what}" in err, err
    assert run([str(src), "--to", "pytorch", "-o", str(tmp_path / "exact.py"), flag, "--check"]) == 0
    assert run([str(src), "--to", "pytorch", "-o", str(tmp_path / "exact.py"), "--check"]) == 1


def test_exact_flag_to_keras(tmp_path, capsys):
    """--exact to Keras: torch's initializers and optimizer arithmetic (torch_kernel_init(),
    TorchAdam); without it Keras' own, and the numeric differences listed in the report."""
    src = tmp_path / "net.py"
    src.write_text(TORCH_TRAINING)
    report = tmp_path / "report.md"
    assert run([str(src), "--to", "keras", "-o", str(tmp_path / "plain.py"), "--report", str(report)]) == 0
    err = capsys.readouterr().err
    plain = (tmp_path / "plain.py").read_text()
    assert "keras.optimizers.Adam(" in plain and "TorchAdam" not in plain and "torch_kernel_init" not in plain
    assert "numeric difference: Adam/AdamW: Keras adds epsilon" in err, err
    assert "numeric difference: initial weights: Keras' default initializers" in err, err
    text = report.read_text()
    assert "## Numeric differences from the source" in text and "Adam/AdamW: Keras adds epsilon" in text
    assert run([str(src), "--to", "keras", "-o", str(tmp_path / "exact.py"), "--exact",
                "--report", str(report)]) == 0
    err = capsys.readouterr().err
    exact = (tmp_path / "exact.py").read_text()
    assert "TorchAdam(" in exact and "kernel_initializer=torch_kernel_init()" in exact
    assert "numeric difference" not in err and "Numeric differences" not in report.read_text()


def test_keras_exact_updates_in_directory_mode(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "emb.py").write_text(EMBEDDING_MODEL)
    assert run([str(tmp_path / "src"), "--to", "pytorch", "--keras-exact-updates", "-q"]) == 0
    assert "KerasEmbedding(20, 4)" in (tmp_path / "src" / "emb_torch.py").read_text()


def test_help_says_keras_exact_updates_is_deprecated(capsys):
    assert run(["--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--exact" in help_text and "deprecated alias of --exact" in help_text


def test_keras_exact_updates_needs_the_pytorch_target(script, capsys):
    assert run([str(script), "--to", "keras", "--keras-exact-updates"]) == 2
    assert "--to pytorch" in capsys.readouterr().err


def test_check_reports_out_of_date_then_up_to_date(script):
    out = script.with_name("out.py")
    assert run([str(script), "--to", "pytorch", "-o", str(out), "--check", "-q"]) == 1
    assert not out.exists()
    assert run([str(script), "--to", "pytorch", "-o", str(out), "-q"]) == 0
    assert run([str(script), "--to", "pytorch", "-o", str(out), "--check", "-q"]) == 0


def test_diff_prints_and_writes_nothing(script, capsys):
    out = script.with_name("out.py")
    run([str(script), "--to", "pytorch", "-o", str(out), "--diff", "-q"])
    assert "+class " in capsys.readouterr().out
    assert not out.exists()


def test_no_partial_file_left_behind(script):
    run([str(script), "--to", "pytorch", "-o", str(script.with_name("o.py"))])
    assert not [p for p in os.listdir(script.parent) if p.startswith(".transpile-")]


def test_python_dash_m_and_console_script(script, tmp_path):
    out = tmp_path / "o.py"
    proc = subprocess.run([sys.executable, "-m", "transpiler", str(script), "--to", "pytorch", "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.exists()
    exe = os.path.join(os.path.dirname(sys.executable), "transpile")
    if os.path.exists(exe):
        proc = subprocess.run([exe, str(script), "--to", "pytorch", "-o", str(out), "--check"],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("flags", [[], ["--exact"]], ids=["default", "exact"])
def test_translation_path_imports_no_framework(script, tmp_path, flags):
    if flags:
        script.write_text(EMBEDDING_MODEL)  # KerasEmbedding and an exact optimizer class too
    code = (
        "import sys\n"
        "from transpiler.cli import run\n"
        f"rc = run([{str(script)!r}, '--to', 'pytorch', '-o', {str(tmp_path / 'o.py')!r}, '-q', *{flags!r}])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'tensorflow', 'keras'))\n"
        "print(rc, bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "0 []", proc.stdout + proc.stderr


@pytest.mark.parametrize("seed", ["0", "1", "12345"])
def test_output_is_byte_identical_across_hash_seeds(script, tmp_path, seed):
    out = tmp_path / f"o{seed}.py"
    env = dict(os.environ, PYTHONHASHSEED=seed)
    subprocess.run([sys.executable, "-m", "transpiler", str(script), "--to", "pytorch", "-o", str(out), "-q"],
                   env=env, check=True)
    reference = tmp_path / "ref.py"
    run([str(script), "--to", "pytorch", "-o", str(reference), "-q"])
    assert out.read_bytes() == reference.read_bytes()


TORCH_MODEL = '''\
import torch
from torch import nn


def build_model():
    # a tiny classifier
    return nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=-1))


def main():
    model = build_model()
    print(model(torch.zeros(2, 4)))


if __name__ == "__main__":
    main()
'''

#: (source text, target, the framework the output is in, the output's suffix)
DIRECTIONS = {"pytorch": (MODEL, "PyTorch", "_torch.py"), "keras": (TORCH_MODEL, "Keras", "_keras.py")}


@pytest.fixture(params=sorted(DIRECTIONS))
def generated(request, tmp_path):
    """A script translated once (``train.py`` → ``train_torch.py`` / ``train_keras.py``)."""
    text, framework, suffix = DIRECTIONS[request.param]
    src = tmp_path / "train.py"
    src.write_text(text)
    assert run([str(src), "--to", request.param]) == 0
    out = tmp_path / f"train{suffix}"
    assert out.exists()
    return request.param, framework, out


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_translating_an_output_again_in_the_same_direction_changes_nothing(generated, capsys):
    target, framework, out = generated
    before = _files(out.parent)
    capsys.readouterr()
    assert run([str(out), "--to", target]) == 0
    err = capsys.readouterr().err
    assert f"{out} is already a {framework} script; nothing to translate, nothing written" in err
    assert _files(out.parent) == before  # no train_torch_torch.py, nothing rewritten
    # naming the file itself as the output is no longer an error: it stays as it is
    assert run([str(out), "--to", target, "-o", str(out), "--strict"]) == 0
    assert _files(out.parent) == before


def test_check_and_diff_on_an_output_in_its_own_framework(generated, capsys):
    target, _framework, out = generated
    before = _files(out.parent)
    capsys.readouterr()
    assert run([str(out), "--to", target, "--check"]) == 0
    assert run([str(out), "--to", target, "--diff"]) == 0
    assert capsys.readouterr().out == ""
    assert _files(out.parent) == before


def test_an_output_in_its_own_framework_with_weights_is_a_usage_error(generated, capsys):
    target, framework, out = generated
    assert run([str(out), "--to", target, "--weights", str(out.with_name("w.weights.h5")),
                "--weights-out", str(out.with_name("w.safetensors"))]) == 2
    assert f"already a {framework} script" in capsys.readouterr().err


@pytest.mark.parametrize("target, text", [("pytorch", MODEL), ("keras", TORCH_MODEL),
                                          ("pytorch", "import torch\n" + MODEL)])
def test_a_script_of_the_other_framework_is_still_translated(tmp_path, target, text):
    """Only a script in the target's own framework is left alone: the ordinary direction and
    a script that imports both frameworks are translated."""
    src = tmp_path / "train.py"
    src.write_text(text)
    assert run([str(src), "--to", target]) == 0
    assert len(list(tmp_path.iterdir())) == 2
