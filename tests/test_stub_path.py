"""The summary leads with what decides whether an output is usable (issue 22 item 10): models
translated, stubs, and the first stub the generated program reaches when it runs
(transpiler/stub_path.py), then the construct rate; the report and --strict in the same order."""

from __future__ import annotations

import re
import textwrap

from transpiler.cli import run
from transpiler.stub_path import describe, first_stop

STUB = 'raise NotImplementedError("transpiler: \'x\' (a.py:1) is not translated yet")'


def _src(text: str) -> str:
    return textwrap.dedent(text).replace("STUB", STUB)


def test_module_level_stub_is_where_the_program_stops():
    src = _src("""
        import torch
        x = 1
        STUB
        y = 2
        """)
    stop = first_stop(src)
    assert stop is not None and stop.line == 4 and stop.via is None


def test_stub_inside_an_uncalled_function_is_not_on_the_run_path():
    src = _src("""
        def unused():
            STUB
        x = 1
        """)
    assert first_stop(src) is None
    assert describe(None, 1).startswith("no stub on the run path")


def test_call_of_a_stubbed_class_or_function_stops_there_transitively():
    src = _src("""
        class Block:
            def __init__(self):
                STUB
            def helper(self):
                return 1
        def build():
            return Block()
        def main():
            return build()
        a = 1
        if __name__ == "__main__":
            main()
        """)
    stop = first_stop(src)
    assert stop is not None and stop.via == "main" and stop.line == 13


def test_stub_in_a_method_that_is_not_init_or_forward_is_not_counted_on_construction():
    src = _src("""
        class Model:
            def __init__(self):
                self.a = 1
            def save(self):
                STUB
        m = Model()
        """)
    assert first_stop(src) is None


def test_a_parameter_named_like_an_untranslated_value_is_not_that_value():
    src = _src("""
        class Untranslated:
            pass
        def call_model(model, *inputs):
            return model(*inputs)
        def show(values):
            return inputs
        def local(x):
            inputs = [x]
            return inputs
        y = call_model(len, [1])
        inputs = Untranslated("transpiler: 'inputs = ...' (a.py:3) is not translated yet")
        z = call_model(len, [2])
        w = local(3)
        v = show(4)
        """)
    stop = first_stop(src)  # (show reads the module's inputs; the others their own)
    assert stop is not None and stop.via == "show" and stop.line == 15


def test_class_body_statement_runs_at_definition():
    src = _src("""
        class Config:
            STUB
        """)
    assert first_stop(src).line == 3


def test_no_stubs_means_it_runs():
    assert describe(None, 0) == "no stubs: the program runs as generated"


_KERAS_STUBBED = """
import keras
from keras import layers


class Odd(layers.Layer):
    def call(self, x):
        return keras.ops.fft(x) + undefined_name_here()


inputs = keras.Input(shape=(4,))
x = layers.Dense(3)(inputs)
model = keras.Model(inputs, x)
y = Odd()(inputs)
model.compile(optimizer="adam", loss="mse")
"""


def test_cli_summary_leads_with_models_stubs_and_stop(tmp_path, capsys):
    src = tmp_path / "s.py"
    src.write_text(_KERAS_STUBBED)
    report = tmp_path / "r.md"
    code = run([str(src), "--to", "pytorch", "-o", str(tmp_path / "o.py"), "--report", str(report)])
    err = capsys.readouterr().err
    assert code == 0
    wrote = next(line for line in err.splitlines() if line.startswith("transpile: wrote"))
    rate = next(i for i, line in enumerate(err.splitlines()) if "constructs translated" in line)
    assert err.splitlines().index(wrote) < rate
    assert re.search(r"\((1) model, (\d+) stubs?\); ", wrote)  # the shape score.py parses
    assert "the program stops at its first stub, output line" in wrote
    out = (tmp_path / "o.py").read_text()
    line = int(wrote.split("output line ")[1].split()[0].rstrip(",)"))
    assert "Odd" in out.splitlines()[line - 1] or "NotImplementedError" in out.splitlines()[line - 1]
    text = report.read_text().splitlines()
    lead = next(i for i, t in enumerate(text) if "model" in t and "translated" in t)
    rate_line = next(i for i, t in enumerate(text) if "constructs translated" in t)
    assert lead < rate_line and "the program stops" in text[lead]


def test_strict_message_names_models_and_the_stop(tmp_path, capsys):
    src = tmp_path / "s.py"
    src.write_text(_KERAS_STUBBED)
    code = run([str(src), "--to", "pytorch", "-o", str(tmp_path / "o.py"), "--strict"])
    err = capsys.readouterr().err
    assert code != 0
    strict = next(line for line in err.splitlines() if "--strict" in line)
    assert strict.startswith("transpile: 1 model translated;") and "the program stops" in strict


def test_directory_table_notes_where_a_stubbed_output_stops(tmp_path, capsys):
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    (src_dir / "s.py").write_text(_KERAS_STUBBED)
    code = run([str(src_dir), "--to", "pytorch", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0
    row = next(line for line in err.splitlines() if "s.py" in line and "stubs" in line)
    line = int(row.split("stops at line ")[1].split()[0])
    assert "NotImplementedError" in (tmp_path / "out" / "s.py").read_text().splitlines()[line - 1] or \
        "Odd" in (tmp_path / "out" / "s.py").read_text().splitlines()[line - 1]


# a script that builds two models: one translates, the builder of the other fails (its layer
# is called on a Python list, which no translation can size)
_KERAS_ONE_OF_TWO = """
import keras
from keras import layers


def get_model():
    inputs = keras.Input(shape=(4,))
    x = layers.Dense(3)(inputs)
    y = layers.Embedding(10, 2)([1, 2, 3]) + undefined_name_here()
    return keras.Model(inputs, x + y)


inputs = keras.Input(shape=(4,))
small = keras.Model(inputs, layers.Dense(2)(inputs))
model = get_model()
"""

_TORCH_CLASSES_ONLY = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)

    def forward(self, x):
        return self.fc(x).unknown_method_here()
"""


def _wrote(err: str) -> str:
    return next(line for line in err.splitlines() if line.startswith("transpile: wrote"))


def test_summary_counts_models_found_that_became_stubs(tmp_path, capsys):
    src = tmp_path / "s.py"
    src.write_text(_KERAS_ONE_OF_TWO)
    report = tmp_path / "r.md"
    code = run([str(src), "--to", "pytorch", "-o", str(tmp_path / "o.py"), "--report", str(report)])
    wrote = _wrote(capsys.readouterr().err)
    assert code == 0
    assert re.search(r"\((1) model, (\d+) stubs?\); ", wrote)  # the shape score.py parses, first
    assert "; 1 of the 2 models found is a stub (get_model)" in wrote
    lead = next(t for t in report.read_text().splitlines() if "translated" in t and "model" in t)
    assert lead.startswith("**1 model of 2 found (stubs: get_model) translated")
    code = run([str(src), "--to", "pytorch", "-o", str(tmp_path / "o2.py"), "--strict"])
    strict = next(line for line in capsys.readouterr().err.splitlines() if "--strict" in line)
    assert code != 0 and strict.startswith("transpile: 1 model translated; 1 of the 2 models found is a stub")


def test_summary_counts_every_model_found_when_none_translates(tmp_path, capsys):
    src = tmp_path / "net.py"
    src.write_text(_TORCH_CLASSES_ONLY)
    code = run([str(src), "--to", "keras", "-o", str(tmp_path / "o.py")])
    wrote = _wrote(capsys.readouterr().err)
    assert code == 0 and "(0 models, " in wrote
    assert "1 of the 1 model found is a stub (Net)" in wrote


def test_directory_table_shows_models_translated_of_found(tmp_path, capsys):
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    (src_dir / "s.py").write_text(_KERAS_ONE_OF_TWO)
    code = run([str(src_dir), "--to", "pytorch", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0
    row = next(line for line in err.splitlines() if "s.py" in line and "stubs" in line)
    assert row.split()[2] == "1/2"
    total = next(line for line in err.splitlines() if line.startswith("total:"))
    assert "1 model of 2 found" in total


def test_long_functions_are_read_once_per_function(monkeypatch):
    """A function's own names are collected once, not once per statement of its body (mirnet's
    ~5,000-line translation spent 13 minutes here under load: quadratic in a function's length)."""
    import transpiler.stub_path as stub_path

    calls = []
    real = stub_path._local_names
    monkeypatch.setattr(stub_path, "_local_names", lambda fn: calls.append(fn.name) or real(fn))
    body = "\n".join(f"    v{i} = {i}" for i in range(400))
    src = _src(f"""
def long_one(a):
{body}
    STUB

class Net:
    def __init__(self):
{textwrap.indent(body, "    ")}
    def forward(self, x):
        return long_one(x)

net = Net()
y = net.forward(1)
""")
    stop = first_stop(src)
    assert stop is not None and stop.text == "net = Net()" and stop.via == "Net"
    assert sorted(calls) == ["__init__", "forward", "long_one"]
