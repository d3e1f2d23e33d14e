"""The free ``meta`` keys of the IR, listed (issue 17 item 6: typed metadata instead of free keys).

``Program.meta``, ``ModelDef``/``Graph.meta`` and ``Node.meta`` are dictionaries any layer can
write any key into; a typed field (``Program.exact``, ``Node.layer``, ``Graph.weight_plan``)
says what it holds and who reads it. This test reads ``transpiler/`` with ``ast`` (nothing
imported) and collects every string key used on a ``meta`` dictionary: ``x.meta["k"]``,
``x.meta.get("k")`` (``setdefault``, ``pop``), ``"k" in x.meta``, ``x.meta.update(k=...)`` and a
``meta={"k": ...}`` argument. ``FREE_META_KEYS_TODAY`` is today's list; it may only shrink: a
new key fails (add a typed field instead), and so does a listed key no code uses any more
(delete it from the list).
"""

from __future__ import annotations

import ast
import functools
import pathlib

from source_trees import parsed

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "transpiler"

#: the free meta keys the code uses today; may only shrink (turn a key into a typed field of
#: ir/graph.py, ir/program.py or a per-concern dataclass, and delete it here)
FREE_META_KEYS_TODAY: frozenset[str] = frozenset()


def _is_meta(node: ast.AST) -> bool:
    """``x.meta`` or a name ``meta`` (a local holding one)."""
    return (isinstance(node, ast.Attribute) and node.attr == "meta") or \
        (isinstance(node, ast.Name) and node.id == "meta")


def _key(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def meta_keys(source: str | ast.Module) -> set[str]:
    """The string keys ``source`` (text or its parsed tree) uses on ``meta`` dictionaries."""
    keys: set[str] = set()
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        if isinstance(node, ast.Subscript) and _is_meta(node.value):
            keys.add(_key(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_meta(node.func.value):
            if node.func.attr in ("get", "setdefault", "pop") and node.args:
                keys.add(_key(node.args[0]))
            elif node.func.attr == "update":
                keys.update(k.arg for k in node.keywords)
                keys.update(_key(k) for a in node.args if isinstance(a, ast.Dict) for k in a.keys)
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) \
                and any(_is_meta(c) for c in node.comparators):
            keys.add(_key(node.left))
        elif isinstance(node, ast.keyword) and node.arg == "meta" and isinstance(node.value, ast.Dict):
            keys.update(_key(k) for k in node.value.keys)
    keys.discard(None)
    return keys


@functools.cache  # (one scan per process; callers only read the result)
def free_meta_keys() -> dict[str, set[str]]:
    """key → the files (relative to the repository) using it."""
    found: dict[str, set[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        for key in meta_keys(parsed(path)):
            found.setdefault(key, set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_scan_finds_every_way_of_using_a_key():
    source = '''
node.meta["a"] = 1
graph.meta.get("b")
program.meta.setdefault("c", [])
x.meta.pop("d", None)
if "e" in node.meta: pass
g.meta.update(f=1, **rest)
Node(op, name, meta={"g": 1})
meta = node.meta
meta["h"]
other["i"]
node.attrs.get("j")
'''
    assert meta_keys(source) == set("abcdefgh")


def test_no_new_free_meta_key():
    found = free_meta_keys()
    new = {k: sorted(v) for k, v in found.items() if k not in FREE_META_KEYS_TODAY}
    assert not new, ("new free meta keys (add a typed field to ir/ instead, or list the key in "
                     f"FREE_META_KEYS_TODAY with a reason): {new}")


def test_free_meta_key_list_is_honest():
    gone = sorted(FREE_META_KEYS_TODAY - set(free_meta_keys()))
    assert not gone, f"no code uses these meta keys any more; delete them from FREE_META_KEYS_TODAY: {gone}"


def test_typed_fields_replaced_their_keys():
    """Keys that became typed fields stay gone (``Program.exact``, ``Program.numeric_differences``,
    ``Graph.origin``: ir.graph.ModelOrigin; the readers' records of ir/reader_facts.py on
    ``Program``/``Graph``/``Node`` ``.from_keras``/``.from_torch``, ``Graph.layouts``,
    ``Graph.unsupported``, ``Program.load_weights``, ``WeightPlan.keras_blocks``, ``Node.split_from``)."""
    found = free_meta_keys()
    for key in ("exact", "keras_exact_updates", "numeric_differences", "source_framework", "source_label",
                "source_input_shapes", "onnx_opset", "onnx_producer", "onnx_output_types",
                "input_layouts", "output_layouts", "target_output_layouts", "layout_transposes",
                "translated_classes", "custom_step", "own_step", "composed", "training_facts", "torch_bindings",
                "stubbed_models", "torch_path", "torch_keys", "param_inits", "block_call", "keras_blocks",
                "unsupported", "load_weights", "source_op", "source_input", "param_source",
                # (Node.from_keras: ir.reader_facts.KerasNodeFacts; Node.call_span)
                "layer", "stmt", "top_stmt", "call_stmts", "scopes", "owner_scope", "seq", "site", "local",
                "fused_into", "initializers", "regularizers", "tensor_op", "variable_of", "definition",
                "site_comments", "call_span",
                # (Node.from_onnx: ir.reader_facts.OnnxNodeFacts; Node.out_layout, Node.inserted,
                # ModelOrigin.no_batch)
                "onnx_node", "onnx_affine", "frozen", "weights_given", "out_layout", "inserted", "no_batch",
                # (Graph.logits_outputs, Graph.structure_cache, Node.occurrence_slices; the torch
                # printer's own: printers/torch/print_notes.py, structure.ModuleCall.group)
                "logits_outputs", "_structure", "occurrence_slices", "init_warnings",
                "untranslated_regularizers", "group"):
        assert key not in found, (key, found.get(key))


def test_the_ir_has_no_free_meta_dictionary():
    """``Program``, ``ModelDef``, ``Graph`` and ``Node`` hold typed fields only (the last free
    keys became typed records): no ``meta`` dictionary to write a new key into."""
    import dataclasses

    from transpiler.ir.graph import Graph, Node, Value
    from transpiler.ir.program import ModelDef, Program

    for cls in (Program, ModelDef, Graph, Node, Value):
        assert "meta" not in {f.name for f in dataclasses.fields(cls)}, cls
