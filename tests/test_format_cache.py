"""printers/format_cache.py and text_cache.py: runtime helpers in an output are not formatted
again in every translation (their black form is kept), and the output stays what
``black.format_str`` gives for the whole text, byte for byte; runtime_prune.specialise keeps
its specialisations without program code in the cache folder."""

from __future__ import annotations

import os

import black
import pytest

from transpiler.printers import format_cache, runtime_prune, runtime_source, text_cache
from transpiler.printers.formatter import format_python


def _black(text: str) -> str:
    return black.format_str(text, mode=black.Mode())


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache folder and no form kept in memory."""
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRANSPILE_NO_CACHE", raising=False)
    monkeypatch.setattr(format_cache, "_FORMED", {})
    return tmp_path


def _helpers() -> list[str]:
    """Runtime definitions as printers copy them: a decorated function, classes, a function."""
    copier = runtime_source.Copier()
    texts = copier.take("torch.metrics", "AUC", "Precision")
    texts += copier.take("torch.training", *sorted(n for n in runtime_source.load("torch.training").definitions
                                                    if runtime_source.load("torch.training").definitions[n]
                                                    .text.startswith("@"))[:1])
    texts.append(runtime_prune.specialise("torch.loop", "make_loader", frozenset()))
    return texts


def _program(helpers: list[str], between: str = "") -> str:
    """A generated-looking text: header, imports, helpers among generated statements that black
    changes (long lines, quotes), a comment right above a helper, a helper last."""
    first, *middle, last = helpers
    parts = ["# Transpiled from x.py (Keras) to PyTorch by transpiler; review before use.",
             "import torch\nimport torch.nn as nn\nx = {'a':1}", first,
             "# a comment right above a helper", *middle,
             "def train(model, optimizer, loss_function_with_a_long_name, inputs, targets, epochs=10, verbose=True):\n"
             "    print(f'epoch {epochs}')\n    return model(inputs)" + between,
             "EPOCHS=3\n", last]
    return "\n".join(parts)


def test_helpers_set_aside_give_blacks_whole_text(cache):
    helpers = _helpers()
    text = _program(helpers)
    rest, forms = format_cache.set_aside(text)
    assert len(forms) == len(helpers)  # every helper set aside: the path under test ran
    assert len(rest) < len(text) / 2
    assert format_python(text) == _black(text)


def test_a_helper_followed_by_an_indented_comment_is_formatted_in_place(cache):
    helpers = _helpers()
    text = _program(helpers[:-1] + [helpers[-1] + "    # an indented comment after the helper\n"])
    _, forms = format_cache.set_aside(text)
    assert len(forms) == len(helpers) - 1
    assert format_python(text) == _black(text)


def test_no_fstring_sets_nothing_aside(cache):
    helper = runtime_source.Copier().take("torch.metrics", "Precision")  # (no f-string in these)
    text = "import torch\n" + "\n".join(helper) + "\nx = compute(1,2)\n"
    assert "f\"" not in text and "f'" not in text
    assert format_cache.set_aside(text) == (text, [])
    assert format_python(text) == _black(text)


def test_stub_and_docstring_endings_are_not_set_aside():
    import ast

    assert not format_cache._ends_plainly(ast.parse("class A:\n    def f(self): ...\n").body)
    assert not format_cache._ends_plainly(ast.parse('class A:\n    """Doc."""\n').body)
    assert format_cache._ends_plainly(ast.parse("def f():\n    if x:\n        return 1\n").body)


def test_forms_are_read_back_from_the_cache_folder(cache, monkeypatch):
    helpers = _helpers()
    text = _program(helpers)
    expected = format_python(text)
    assert any(cache.rglob("*"))
    monkeypatch.setattr(format_cache, "_FORMED", {})  # (a new process)

    def refuse(_text):
        raise AssertionError("formatted again although kept")

    monkeypatch.setattr(format_cache, "_form", refuse)
    assert format_python(text) == expected == _black(text)


def test_a_damaged_entry_is_formatted_again(cache, monkeypatch):
    text = _program(_helpers())
    format_python(text)
    for entry in (cache / "helpers-black").iterdir():
        entry.write_text("garbage")
    monkeypatch.setattr(format_cache, "_FORMED", {})
    assert format_python(text) == _black(text)
    assert all(e.read_text().startswith(("#fstring\n", "#plain\n", "#none\n")) for e in (cache / "helpers-black").iterdir())


def test_no_cache_folder_when_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRANSPILE_NO_CACHE", "1")
    text_cache.write("x", "key", "text")
    assert text_cache.read("x", "key") is None and not os.listdir(tmp_path)


def test_specialisations_without_program_code_are_kept(cache, monkeypatch):
    runtime_prune.specialise.cache_clear()
    text = runtime_prune.specialise("torch.loop", "make_loader", frozenset({"shuffle"}))
    runtime_prune.specialise.cache_clear()

    def refuse(*_args):
        raise AssertionError("specialised again although kept")

    monkeypatch.setattr(runtime_prune, "_specialised", refuse)
    assert runtime_prune.specialise("torch.loop", "make_loader", frozenset({"shuffle"})) == text
    runtime_prune.specialise.cache_clear()
    with pytest.raises(AssertionError):  # program code spliced in: never kept
        runtime_prune.specialise("torch.loop", "fit", frozenset(), (("setup", ("x = 1",)),))
    runtime_prune.specialise.cache_clear()
