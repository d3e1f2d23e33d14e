"""The readers' typed records hold data, not the objects of a layer above the IR (issue 17 item 6).

A field of ``Program``/``Graph``/``Node`` ``.from_keras``, ``.from_torch`` or ``.from_onnx``
(ir/reader_facts.py; once free ``meta`` keys) whose value is a frontend, printer or weights
object (or a function) ties the IR to the code that made it: printers then reach back into
the frontend through it. This test translates corpus scripts in both directions and walks every
such value (nested containers included). Today's offenders are listed in
``NON_DATA_META_TODAY``; that list may only shrink: a new field holding such an object fails, and
so does a listed field that holds data now (delete it).
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import types

import pytest

from transpiler.translate import translate

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: modules whose objects are not IR data
NON_DATA_PREFIXES = ("transpiler.frontend_ast", "transpiler.printers", "transpiler.weights")

#: where a record still holds such an object (``<level>.<record>.<field>``). May only shrink.
NON_DATA_META_TODAY = {
    # the Keras reader's own LayerObj (its statement, owner, scope), read only inside
    # frontend_ast/keras (test_only_the_keras_reader_reads_its_layer_object); everything after the
    # reader reads the typed ``Node.layer`` (ir.graph.LayerRef, plain data)
    "node.from_keras.layer",
}

#: scripts read in each direction (small, and between them every meta key the corpus sets)
SCRIPTS = [
    ("corpus/keras/mnist_cnn.py", "pytorch"),
    ("corpus/keras/subclassed_cnn.py", "pytorch"),
    ("corpus/keras/resnet_small.py", "pytorch"),
    ("corpus/keras/custom_loop.py", "pytorch"),
    ("tests/programs/callbacks_program.py", "pytorch"),
    ("corpus/torch/mnist_cnn.py", "keras"),
    ("corpus/torch/vae.py", "keras"),
    ("corpus/torch/resnet_small.py", "keras"),
]


def non_data(value, seen=None, depth=0):
    """The qualified names of the non-data objects inside ``value`` (containers walked)."""
    seen = set() if seen is None else seen
    if id(value) in seen or depth > 8:
        return set()
    seen.add(id(value))
    module = type(value).__module__ or ""
    if module.startswith(NON_DATA_PREFIXES) or isinstance(
            value, (types.FunctionType, types.MethodType, types.LambdaType)):
        return {f"{module}.{type(value).__qualname__}"}
    out = set()
    if isinstance(value, dict):
        for item in [*value.keys(), *value.values()]:
            out |= non_data(item, seen, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            out |= non_data(item, seen, depth + 1)
    return out


def _graphs(program):
    for md in program.models:
        yield md.graph
        for method in md.methods.values():
            yield method.graph
        for _attr, part in md.graph.from_torch.composed.get("parts", ()):
            yield part


RECORDS = ("from_keras", "from_torch", "from_onnx")


def offending_keys(program) -> dict[str, set[str]]:
    """``{"<level>.<record>.<field>": {qualified class names}}`` over the readers' records."""
    found: dict[str, set[str]] = {}

    def check(level: str, owner) -> None:
        for record in RECORDS:
            facts = getattr(owner, record, None)
            if facts is None:
                continue
            for f in dataclasses.fields(facts):
                bad = non_data(getattr(facts, f.name))
                if bad:
                    found.setdefault(f"{level}.{record}.{f.name}", set()).update(bad)

    check("program", program)
    for graph in _graphs(program):
        check("graph", graph)
        for node in graph.nodes:
            check("node", node)
    return found


def test_only_the_keras_reader_reads_its_layer_object():
    """``node.from_keras.layer`` is the Keras reader's LayerObj: no module outside
    frontend_ast/keras may read it (they read ``Node.layer``, IR data)."""
    pattern = re.compile(r"""from_keras\.layer\b""")
    package = ROOT / "transpiler"
    readers = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                     if pattern.search(p.read_text(encoding="utf-8")))
    assert readers and all(r.startswith("frontend_ast/keras/") for r in readers), readers


def test_walker_finds_a_printer_object_in_nested_meta():
    class Holder:  # a class defined in a printer module counts as a printer object
        pass

    Holder.__module__ = "transpiler.printers.keras.training"
    Holder.__qualname__ = "Holder"
    assert non_data({"a": [1, ("x", Holder())]}) == {"transpiler.printers.keras.training.Holder"}
    assert non_data({"a": [1, 2.0, "s", None, (3,)]}) == set()
    assert non_data([lambda: 0])  # a function is code, not data


@pytest.fixture(scope="module")
def found() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for rel, target in SCRIPTS:
        path = ROOT / rel
        result = translate(path.read_text(encoding="utf-8"), str(path), target)
        for key, names in offending_keys(result.program).items():
            out.setdefault(key, set()).update(names)
    return out


def test_no_new_meta_key_holds_a_non_data_object(found):
    new = {key: sorted(names) for key, names in found.items() if key not in NON_DATA_META_TODAY}
    assert not new, f"record fields that are frontend/printer/weights objects (make them typed IR data): {new}"


def test_non_data_meta_allowlist_is_honest(found):
    gone = sorted(NON_DATA_META_TODAY - set(found))
    assert not gone, f"these fields hold data now; delete them from NON_DATA_META_TODAY: {gone}"
