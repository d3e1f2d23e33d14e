"""The user's source file as printers see it: read-only, framework-free (issue 17 item 3).

A frontend parses the file and reads it into an ``ir.Program``; printers need the file
itself too (they keep its statements, comments and layout), but never the frontend that
read it. ``SourceFile`` is that view: the module's concrete syntax tree (libcst), the
positions of its nodes, its lines and comments, and **stable ids** for its nodes, so
that what the frontend says about a statement (``ModelDef.statements``, a training
statement) names the statement by where it is, not by the address of a Python object.

A node's stable id (``NodeId``) is its file, its start and end position and its syntax
type: deterministic (the same source gives the same ids in every run), readable in a
message (``main.py:12:5-12:30:Call``), and unique for every node that has an extent (no
two nodes of one type span the same range). Nodes a class imports from a sibling file
(frontend_ast/torch/siblings.py) keep that file's positions and name it.

The frontend builds the object (``SourceFile(...)``) before it reads the program; a
printer only asks (``span``, ``line``, ``sid``, ``node``, ``comments``). Both readers key
their training facts this way: the Keras reader (``stmt``/``call`` of its statements) and the
torch training reader (frontend_ast/torch/training.py: facts by the node each replaces, and
the nodes a fact refers to, expressions the reader wrote itself included, which get
``<unplaced>`` ids); the Keras printer finds those nodes with ``node``.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import libcst as cst

from transpiler.ir.graph import Span


#: the file of the ids of nodes that have no position (written by a frontend, not read)
UNPLACED = "<unplaced>"


class NodeId(NamedTuple):
    """A node's stable id: its file, 1-based start line and column, end line and column, type."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int
    kind: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}-{self.end_line}:{self.end_col}:{self.kind}"


class SiblingText(NamedTuple):
    """A file whose nodes were spliced into the module (its path, lines, node positions)."""

    path: str
    lines: list[str]
    positions: Mapping


def collect_comments(source: str) -> dict[int, tuple[str, bool]]:
    """Every comment of ``source`` by line: (text, is_full_line)."""
    out: dict[int, tuple[str, bool]] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError):
        return out
    line_has_code: set[int] = set()
    for tok in tokens:
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                            tokenize.DEDENT, tokenize.ENDMARKER):
            for ln in range(tok.start[0], tok.end[0] + 1):
                line_has_code.add(ln)
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = (tok.string, tok.start[0] not in line_has_code)
    return out


class SourceFile:
    """One parsed source file, read-only: ``module`` (libcst), ``text``, ``lines``, ``path``,
    ``comments`` (line → (text, whole line)), and the queries printers need.

    ``positions`` maps the module's nodes to their ``CodeRange`` (the nodes spliced in from a
    sibling file too); ``siblings`` are the files such nodes came from. ``unplaced`` is the (line, column) a node without a position
    (one a frontend or printer wrote) reports as its span.
    """

    __slots__ = ("path", "text", "lines", "module", "_positions", "_siblings", "_files", "_unplaced",
                 "_comments", "_nodes", "_sids", "_unplaced_count")

    def __init__(self, path: str, text: str, module: cst.Module, positions: Mapping,
                 siblings: Iterable[SiblingText] = (), unplaced: tuple[int, int] = (0, 0)):
        self.path = path
        self.text = text
        self.lines = text.splitlines()
        self.module = module
        self._siblings = tuple(siblings)
        self._positions = positions
        self._files = {id(n): sib for sib in self._siblings for n in sib.positions}
        self._unplaced = unplaced
        self._comments: dict[int, tuple[str, bool]] | None = None
        self._nodes: dict[NodeId, cst.CSTNode | None] | None = None
        self._sids: dict[int, tuple[NodeId, cst.CSTNode]] = {}
        self._unplaced_count = 0

    # -- where things are ------------------------------------------------------------------
    def file_of(self, node: cst.CSTNode) -> str:
        """The path of the file ``node`` was read from (a sibling's, or this file's)."""
        sib = self._files.get(id(node))
        return sib.path if sib is not None else self.path

    def span(self, node: cst.CSTNode) -> Span:
        """Where ``node`` starts (and the line it ends on)."""
        pos = self._positions.get(node)
        if pos is None:
            return Span(self.path, *self._unplaced)
        return Span(self.file_of(node), pos.start.line, pos.start.column + 1, pos.end.line)

    def line(self, span: Span | None) -> str:
        """The stripped text of ``span``'s first line ("" when there is none), in the file it names."""
        if span is None:
            return ""
        lines = next((s.lines for s in self._siblings if s.path == span.file), self.lines)
        return lines[span.line - 1].strip() if 0 < span.line <= len(lines) else ""

    @property
    def comments(self) -> dict[int, tuple[str, bool]]:
        """Every comment of the file by line: (text, is_full_line)."""
        if self._comments is None:
            self._comments = collect_comments(self.text)
        return self._comments

    # -- stable ids --------------------------------------------------------------------------
    def sid(self, node: cst.CSTNode | None) -> NodeId | None:
        """``node``'s stable id (None for None). A node without a position (one a frontend
        wrote, not the file's) gets an id of the file ``<unplaced>`` numbered in the order
        first asked, the same node always the same id."""
        if node is None:
            return None
        known = self._sids.get(id(node))
        if known is not None:
            return known[0]
        pos = self._positions.get(node)
        if pos is None:
            self._unplaced_count += 1
            key = NodeId(UNPLACED, self._unplaced_count, 0, 0, 0, type(node).__name__)
        else:
            key = NodeId(self.file_of(node), pos.start.line, pos.start.column + 1, pos.end.line,
                         pos.end.column + 1, type(node).__name__)
        self._sids[id(node)] = (key, node)  # (the node kept: its id() stays its own)
        return key

    def node(self, sid: NodeId | None) -> cst.CSTNode | None:
        """The node whose stable id is ``sid`` (None when there is none, or no single one)."""
        if sid is None:
            return None
        if sid.file == UNPLACED:
            return next((node for key, node in self._sids.values() if key == sid), None)
        if self._nodes is None:
            nodes: dict[NodeId, cst.CSTNode | None] = {}
            for node in self._positions:
                key = self.sid(node)
                nodes[key] = None if key in nodes else node  # (zero-width whitespace may coincide)
            self._nodes = nodes
        return self._nodes.get(sid)
