"""The read-only source file printers receive (ir/source_file.py), and printers never
holding a frontend (issue 17 item 3)."""

from __future__ import annotations

import ast
import pathlib

import libcst as cst
from libcst.metadata import MetadataWrapper

from transpiler.cst_fast import positions, walk
from transpiler.ir.source_file import SiblingText, SourceFile

SOURCE = '''import numpy as np  # arrays


def build(width):
    # the model
    x = np.zeros((2, width))
    return x + x


model = build(3)
'''


def _source(text: str = SOURCE, path: str = "main.py") -> SourceFile:
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    return SourceFile(path, text, wrapper.module, positions(wrapper))


def _nodes_with_extent(source: SourceFile):
    for node in walk(source.module):
        sid = source.sid(node)
        if sid is not None and (sid.line, sid.col) != (sid.end_line, sid.end_col):
            yield node, sid


def test_stable_ids_are_the_same_in_every_parse():
    one = sorted(str(source_sid) for _, source_sid in _nodes_with_extent(_source()))
    two = sorted(str(source_sid) for _, source_sid in _nodes_with_extent(_source()))
    assert one == two and len(one) > 20


def test_every_node_with_extent_has_its_own_id_and_is_found_by_it():
    source = _source()
    seen = {}
    for node, sid in _nodes_with_extent(source):
        assert sid not in seen, (sid, node, seen.get(sid))
        seen[sid] = node
        assert source.node(sid) is node


def test_ids_name_the_statement_by_where_it_is():
    source = _source()
    fn = source.module.body[1]
    assert str(source.sid(fn)) == "main.py:4:1-7:17:FunctionDef"
    assert source.sid(None) is None and source.node(None) is None


def test_a_node_the_file_does_not_hold_keeps_one_id():
    source = _source()
    written, other = cst.Name("x"), cst.Name("x")
    first = source.sid(written)
    assert first.file == "<unplaced>" and source.sid(written) == first != source.sid(other)
    assert source.node(first) is written


def test_span_line_and_comments():
    source = _source()
    assign = source.module.body[2]
    span = source.span(assign)
    assert (span.file, span.line, span.col) == ("main.py", 10, 1)
    assert source.line(span) == "model = build(3)"
    assert source.line(None) == ""
    assert source.comments[1] == ("# arrays", False) and source.comments[5] == ("# the model", True)
    unplaced = source.span(cst.Name("y"))
    assert (unplaced.line, unplaced.col) == (0, 0)


def test_nodes_from_a_sibling_file_name_that_file():
    sib_text = "class Net:\n    pass\n"
    sib_wrapper = MetadataWrapper(cst.parse_module(sib_text), unsafe_skip_copy=True)
    sib_positions = positions(sib_wrapper)
    cls = sib_wrapper.module.body[0]
    main = cst.parse_module(SOURCE)
    module = main.with_changes(body=[cls, *main.body])  # (what siblings.py splices in)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    merged = dict(positions(wrapper))
    merged.update(sib_positions)
    source = SourceFile("main.py", SOURCE, wrapper.module, merged,
                        [SiblingText("model.py", sib_text.splitlines(), sib_positions)], (1, 1))
    span = source.span(cls)
    assert (span.file, span.line) == ("model.py", 1)
    assert source.line(span) == "class Net:"
    assert source.sid(cls).file == "model.py"


PRINTERS = pathlib.Path(__file__).resolve().parent.parent / "transpiler" / "printers"


def test_printers_hold_no_frontend():
    """No printer takes a frontend (a parameter named so) or reads one (``x.frontend``):
    they receive the SourceFile and the Program."""
    found = []
    for path in sorted(PRINTERS.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.arg) and "frontend" in node.arg:
                found.append(f"{path.name}:{node.lineno}: parameter {node.arg}")
            if isinstance(node, ast.Attribute) and "frontend" in node.attr:
                found.append(f"{path.name}:{node.lineno}: .{node.attr}")
    assert not found, found
