"""The torch → Keras training program names source nodes by stable ids (issue 17 item 3).

The torch training reader keys its facts on ``ir.source_file.NodeId`` (file, position,
syntax type), the ids inside the facts name nodes the same way, and the Keras printer finds
the nodes through the read-only ``SourceFile``. An ``id()`` of a libcst node (an address:
different in every run, reusable once the node is collected, meaningless to a printer) is
what this replaced. Guarded three ways:

* the same source read twice gives the same facts under the same keys, in the same order;
* no integer inside a fact equals the ``id()`` of a syntax node of the module (an ``id()``
  that found its way back into a fact's config);
* a lint counts ``id(...)`` calls in ``transpiler/frontend_ast/torch/`` and in the Keras
  printers of the training program: ``ALLOWLIST`` (empty now: syntax nodes, module objects
  and graph values hash by identity and are keyed by themselves) may only shrink.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import re

import libcst as cst
import pytest

from transpiler.frontend_ast.torch.frontend import run_torch_frontend
from transpiler.ir.source_file import NodeId

ROOT = pathlib.Path(__file__).resolve().parent.parent
TESTS = pathlib.Path(__file__).resolve().parent

#: scripts with a training program (data, a loop, saving): of the torch → Keras goldens and the program corpus
SCRIPTS = sorted(p for p in [p / "input.py" for p in (TESTS / "golden_keras").iterdir()] +
                 list((TESTS / "programs_torch").glob("*.py"))
                 if p.exists() and re.search(r"backward\(|DataLoader|torch\.save", p.read_text()))

# file (relative to the repository) -> id(...) calls; may only shrink (lower it when you remove one)
ALLOWLIST: dict[str, int] = {}  # (27 at first: syntax nodes, module objects and graph values are keyed by themselves now)
LINTED = [ROOT / "transpiler" / "frontend_ast" / "torch"]
LINTED_FILES = [ROOT / "transpiler" / "printers" / "keras" / f"{name}.py"
                for name in ("training", "train_step", "helper_calls", "def_headers", "vision_data")]


def _id_calls(path: pathlib.Path) -> list[int]:
    tree = ast.parse(path.read_text())
    return sorted(n.lineno for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "id")


def _linted() -> list[pathlib.Path]:
    return sorted([p for d in LINTED for p in d.rglob("*.py")] + LINTED_FILES)


def test_id_calls_only_where_allowed():
    over = {}
    for path in _linted():
        rel = path.relative_to(ROOT).as_posix()
        lines = _id_calls(path)
        if len(lines) > ALLOWLIST.get(rel, 0):
            over[rel] = (len(lines), ALLOWLIST.get(rel, 0), lines)
    assert not over, f"id() calls over the allowlist (file: found, allowed, lines): {over}"


def test_id_allowlist_is_tight():
    """A count that went down lowers its entry (the list may only shrink, and stays honest)."""
    found = {p.relative_to(ROOT).as_posix(): len(_id_calls(p)) for p in _linted()}
    stale = {rel: (found.get(rel, 0), n) for rel, n in ALLOWLIST.items() if found.get(rel, 0) < n}
    assert not stale, f"lower these ALLOWLIST entries (file: found, listed): {stale}"


def test_the_printers_lint_is_not_empty():
    assert all(p.exists() for p in LINTED_FILES)
    assert len(_linted()) > 30


def _facts(path: pathlib.Path):
    fe = run_torch_frontend(path.read_text(), str(path))
    return fe, fe.program.from_torch.training_facts


def _ints(value, seen=None):
    """Every int inside a fact's config (dicts, sequences, dataclasses), recursively."""
    seen = set() if seen is None else seen
    if isinstance(value, bool) or value is None or isinstance(value, (str, float, NodeId)):
        return
    if isinstance(value, int):
        yield value
        return
    if isinstance(value, cst.CSTNode) or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _ints(k, seen)
            yield from _ints(v, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _ints(v, seen)
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            if f.name != "model_def":  # (the ir.program.ModelDef: the model, not the fact)
                yield from _ints(getattr(value, f.name), seen)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.parent.name if p.name == "input.py" else p.stem)
def test_same_source_read_twice_gives_the_same_fact_keys(path):
    _fe1, first = _facts(path)
    _fe2, second = _facts(path)
    assert first, f"{path.name}: no training facts (the case guards nothing)"
    assert all(isinstance(k, NodeId) for k in first), [k for k in first if not isinstance(k, NodeId)][:3]
    assert list(first) == list(second)
    assert [(ts.kind, ts.call, ts.span) for ts in first.values()] == \
        [(ts.kind, ts.call, ts.span) for ts in second.values()]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.parent.name if p.name == "input.py" else p.stem)
def test_no_node_address_in_a_fact(path):
    fe, facts = _facts(path)
    addresses = set()

    class Collect(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            addresses.add(id(node))
            return True

    fe.module.visit(Collect())
    leaked = [(str(key), ts.kind) for key, ts in facts.items()
              if any(i in addresses for i in _ints((ts.config, ts.call, ts.stmt)))]
    assert not leaked, f"facts holding id() of syntax nodes: {leaked}"


def test_references_are_bindings_in_source_order():
    """cst_fast.references (the one finder the reader's helper calls and the Keras printer's
    def headers share): attribute and keyword names are no references; decorators come first."""
    from transpiler.cst_fast import references
    from transpiler.printers.keras.def_headers import names_in

    expr = cst.parse_expression("f(torch=x.torch, *nn, y=torch)")
    assert [n.value for n in references(expr)] == ["f", "x", "nn", "torch"]
    fn = cst.parse_statement("@deco\ndef g(a: torch.Tensor = nn.Linear) -> T:\n    return a\n")
    assert [n.value for n in references(fn)] == ["deco", "g", "a", "torch", "nn", "T", "a"]
    assert names_in(cst.parse_expression("F(torch=1)"), {"torch", "F"}) == {"F"}
    assert names_in(None, {"torch"}) == set()
