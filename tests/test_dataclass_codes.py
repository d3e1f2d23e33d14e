"""transpiler/dataclass_codes.py: the methods ``@dataclass`` writes are compiled once and kept
in the cache folder; a class made from kept code is the class ``@dataclass`` makes itself."""

from __future__ import annotations

import dataclasses
import inspect
import os
import subprocess
import sys

import pytest

from transpiler import dataclass_codes
from transpiler.printers import text_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRANSPILE_NO_CACHE", raising=False)
    return tmp_path


def _make():
    """Dataclasses of the kinds the translation path defines: frozen, ordered, with defaults,
    factories, annotations of real types (not strings: this test module's ``from __future__
    import annotations`` must not reach the generated methods), keyword-only fields."""
    ns: dict = {}
    exec(compile(  # (a module of its own, without this file's __future__ import)
        "import dataclasses\n"
        "@dataclasses.dataclass(frozen=True, order=True)\n"
        "class Point:\n"
        "    x: int\n"
        "    y: float = 0.5\n"
        "    tags: tuple = dataclasses.field(default_factory=tuple)\n"
        "@dataclasses.dataclass(eq=True, unsafe_hash=True)\n"
        "class Box:\n"
        "    p: Point\n"
        "    name: str = 'b'\n"
        "    k: int = dataclasses.field(default=3, kw_only=True)\n", "<classes>", "exec", dont_inherit=True), ns)
    return ns["Point"], ns["Box"]


def _behaviour(point, box):
    p, q = point(1, 2.0), point(1)
    b = box(p, "n", k=4)
    return (repr(p), repr(q), p == point(1, 2.0), q < p, hash(p) == hash(point(1, 2.0)), repr(b),
            hash(b) == hash(box(p, "n", k=4)), str(inspect.signature(point)), str(inspect.signature(box)),
            _names(point.__init__.__annotations__), _names(box.__init__.__annotations__))


def _names(annotations: dict) -> dict:
    return {k: getattr(v, "__qualname__", v) for k, v in annotations.items()}


def test_kept_code_makes_the_same_classes_and_is_not_compiled_again(cache, monkeypatch):
    plain = _behaviour(*_make())
    with dataclass_codes.compiled_dataclass_methods():
        first = _behaviour(*_make())
    assert first == plain
    assert "exec" not in vars(dataclasses)  # (dataclasses is left as it was)
    assert os.listdir(cache / "dataclass-code")

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(dataclass_codes, "compile", no_compile, raising=False)
    with dataclass_codes.compiled_dataclass_methods():
        second = _behaviour(*_make())
    assert second == plain
    assert point_annotations_are_types(_make)


def point_annotations_are_types(make) -> bool:
    with dataclass_codes.compiled_dataclass_methods():
        point, _box = make()
    return point.__init__.__annotations__ == {"x": int, "y": float, "tags": tuple, "return": None}


def test_an_unreadable_entry_is_none(cache):
    with dataclass_codes.compiled_dataclass_methods():
        _make()
    (entry,) = (cache / "dataclass-code").iterdir()
    entry.write_bytes(b"\x00 not marshal")
    with dataclass_codes.compiled_dataclass_methods():
        assert _behaviour(*_make()) == _behaviour(*_make())
    assert text_cache.read_bytes("dataclass-code", dataclass_codes._key()) != b"\x00 not marshal"


def test_no_cache_folder_no_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSPILE_NO_CACHE", "1")
    with dataclass_codes.compiled_dataclass_methods():
        assert "exec" not in vars(dataclasses)
        _make()


def test_a_cold_translation_with_kept_code_gives_the_same_output(tmp_path):
    """Two cold CLI runs, the first filling the entry, the second reading it: same output."""
    src = os.path.join(ROOT, "corpus", "keras", "mlp_regression.py")
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT)
    env.pop("TRANSPILE_NO_CACHE", None)
    outs = []
    for run in range(2):
        out = tmp_path / f"out{run}.py"
        proc = subprocess.run([sys.executable, "-m", "transpiler", src, "--to", "pytorch", "-o", str(out), "-q"],
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 3), proc.stderr
        outs.append(out.read_text())
    assert os.listdir(tmp_path / "cache" / "dataclass-code")
    assert outs[0] == outs[1]
