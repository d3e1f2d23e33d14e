"""Copy a runtime function specialised for one program: its unused options pruned (libcst).

A runtime module such as ``runtime/torch/loop.py`` supports every option of Keras' fit()
that the translation handles; a program uses a few. Its module-level boolean constants
(``WEIGHTS = CLIP = ... = True``) name those features, and ``specialise`` copies a function
with what the program does not use taken out, so that the generated code reads as if
written for the program:

- ``if FEATURE:`` (``not``/``and``/``or`` of features; ``elif``/``else`` chains) keeps the
  branch the program's features select, without the ``if`` line;
- ``a if FEATURE else b`` becomes ``a`` or ``b``;
- ``loop_code("where")`` statements become the statements the printer gives for ``where``
  (callbacks as loop code), or go;
- then what nothing reads any more goes: parameters with a default (and ``**kwargs``), the
  index of ``for i, x in enumerate(xs)`` (``for x in xs``), and the docstring paragraphs
  naming a removed parameter (````name````).

The module is parsed once per process and each specialisation is cached, so a warm
translation pays nothing (and a cold one reads a specialisation without program code from the
cache folder); nothing is imported (the translation path imports no framework).
"""

from __future__ import annotations

import functools
import pathlib

import libcst as cst

from transpiler.cst_fast import walk
from transpiler.printers import text_cache
from transpiler.printers.runtime_source import RUNTIME, helper_text


@functools.lru_cache(maxsize=None)
def _parsed(module: str) -> tuple[cst.Module, frozenset[str]]:
    """The module's CST and its feature flags (module-level names bound to True/False)."""
    tree = cst.parse_module(RUNTIME.joinpath(*module.split(".")).with_suffix(".py").read_text(encoding="utf-8"))
    flags = set()
    for stmt in tree.body:
        if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
            assign = stmt.body[0]
            if isinstance(assign.value, cst.Name) and assign.value.value in ("True", "False"):
                flags |= {t.target.value for t in assign.targets if isinstance(t.target, cst.Name)}
    return tree, frozenset(flags)


def _decide(test: cst.BaseExpression, flags: frozenset[str], on: frozenset[str]) -> bool | None:
    """The value of a test made of feature flags, or None when it reads anything else."""
    if isinstance(test, cst.Name) and test.value in flags:
        return test.value in on
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        value = _decide(test.expression, flags, on)
        return None if value is None else not value
    if isinstance(test, cst.BooleanOperation):
        left, right = _decide(test.left, flags, on), _decide(test.right, flags, on)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else (None if None in (left, right) else True)
        return True if True in (left, right) else (None if None in (left, right) else False)
    return None


def _with_leading(stmts: list[cst.BaseStatement], lines) -> list[cst.BaseStatement]:
    """``stmts`` with ``lines`` (comments, blank lines) before the first one."""
    if stmts and lines:
        stmts = [stmts[0].with_changes(leading_lines=[*lines, *stmts[0].leading_lines]), *stmts[1:]]
    return stmts


def _statements(lines: tuple[str, ...]) -> list[cst.BaseStatement]:
    module = cst.parse_module("\n".join(lines) + "\n")
    return _with_leading(list(module.body), module.header)


class _IfExps(cst.CSTTransformer):
    """``a if FEATURE else b`` → ``a`` or ``b`` (run on the few statements holding one)."""

    def __init__(self, flags: frozenset[str], on: frozenset[str]):
        self.flags, self.on = flags, on

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp):
        value = _decide(updated.test, self.flags, self.on)
        if value is None:
            return updated
        return updated.body if value else updated.orelse


class _Prune:
    """The pruning of one function body, statement by statement. Only the statements on the
    way to a change are rebuilt (``CSTNode.visit`` would rebuild every node: see cst_fast)."""

    def __init__(self, flags: frozenset[str], on: frozenset[str], splices: dict[str, tuple[str, ...]]):
        self.flags, self.on, self.splices = flags, on, splices

    def block(self, stmts) -> list[cst.BaseStatement]:
        return [new for stmt in stmts for new in self.statement(stmt)]

    def _body(self, node):
        return node.with_changes(body=node.body.with_changes(body=self.block(node.body.body)))

    def _if_exps(self, node):
        if any(type(n) is cst.IfExp and _decide(n.test, self.flags, self.on) is not None for n in walk(node)):
            return node.visit(_IfExps(self.flags, self.on))
        return node

    def statement(self, stmt: cst.BaseStatement) -> list[cst.BaseStatement]:
        if isinstance(stmt, cst.If):
            return self._if(stmt)
        if isinstance(stmt, cst.SimpleStatementLine):
            small = stmt.body[0] if len(stmt.body) == 1 else None
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                    and isinstance(small.value.func, cst.Name) and small.value.func.value == "loop_code":
                return _statements(self.splices.get(small.value.args[0].value.evaluated_value, ()))
            return [self._if_exps(stmt)]
        if isinstance(stmt, cst.For):
            stmt = self._body(stmt).with_changes(iter=self._if_exps(stmt.iter))
            return [_unused_index(stmt)]
        if isinstance(stmt, (cst.While, cst.With)):
            return [self._body(stmt)]
        return [stmt]  # a nested def or class: copied as it is

    def _if(self, stmt: cst.If) -> list[cst.BaseStatement]:
        branch: cst.If | cst.Else | None = stmt
        while isinstance(branch, cst.If):
            value = _decide(branch.test, self.flags, self.on)
            if value is None:
                if branch is not stmt:  # the decided heads go: this test leads the chain now
                    branch = branch.with_changes(leading_lines=stmt.leading_lines)
                return [self._kept_if(branch)]
            if value:
                break
            branch = branch.orelse
        if branch is None:
            return []
        return _with_leading(self.block(branch.body.body), stmt.leading_lines)

    def _kept_if(self, stmt: cst.If) -> cst.If:
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            kept = self._if(orelse)
            orelse = kept[0] if len(kept) == 1 and isinstance(kept[0], cst.If) else (
                cst.Else(cst.IndentedBlock(kept)) if kept else None)
        elif isinstance(orelse, cst.Else):
            orelse = self._body(orelse)
        return self._body(stmt).with_changes(orelse=orelse)


def _names_read(node: cst.CSTNode) -> set[str]:
    """The variable names under ``node`` (not attribute names, ``x.step``, nor keywords, ``f(step=1)``)."""
    nodes = list(walk(node))
    labels = {id(n.attr) for n in nodes if type(n) is cst.Attribute}  # (type(): isinstance on ABCs is slow)
    labels |= {id(n.keyword) for n in nodes if type(n) is cst.Arg and n.keyword is not None}
    return {n.value for n in nodes if type(n) is cst.Name and id(n) not in labels}


def _unused_index(stmt: cst.For) -> cst.For:
    """``for i, x in enumerate(xs)`` → ``for x in xs`` where nothing reads ``i``."""
    target, it = stmt.target, stmt.iter
    if isinstance(target, cst.Tuple) and len(target.elements) == 2 and isinstance(it, cst.Call) \
            and isinstance(it.func, cst.Name) and it.func.value == "enumerate" and len(it.args) == 1:
        index = target.elements[0].value
        if isinstance(index, cst.Name) and index.value not in _names_read(stmt.body):
            return stmt.with_changes(target=target.elements[1].value, iter=it.args[0].value)
    return stmt


def _prune_docstring(fn: cst.FunctionDef, removed: set[str]) -> cst.FunctionDef:
    """Drop the docstring paragraphs that name a removed parameter (````name````)."""
    first = fn.body.body[0] if fn.body.body else None
    if not (removed and isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr)
            and isinstance(first.body[0].value, cst.SimpleString)):
        return fn
    raw = first.body[0].value.value
    quote = raw[:3]
    paragraphs = raw[3:-3].split("\n\n")
    kept = [p for p in paragraphs if not any(f"``{name}``" in p for name in removed)]
    if len(kept) == len(paragraphs):
        return fn
    text = "\n\n".join(kept)
    if len(kept) == 1 and text.endswith("\n    "):
        text = text.rstrip()  # a one-line docstring closes on its line
    doc = first.with_changes(body=[first.body[0].with_changes(value=cst.SimpleString(quote + text + quote))])
    return fn.with_changes(body=fn.body.with_changes(body=[doc, *fn.body.body[1:]]))


def _drop_unused_parameters(fn: cst.FunctionDef) -> cst.FunctionDef:
    read = _names_read(fn.body) | {n for d in fn.decorators for n in _names_read(d)}
    params = fn.params
    kept = [p for p in params.params if p.default is None or p.name.value in read]
    removed = {p.name.value for p in params.params} - {p.name.value for p in kept}
    star_kwarg = params.star_kwarg
    if isinstance(star_kwarg, cst.Param) and star_kwarg.name.value not in read:
        removed.add(star_kwarg.name.value)
        star_kwarg = None
    if not removed:
        return fn
    kept = [p.with_changes(comma=cst.MaybeSentinel.DEFAULT) for p in kept]
    if star_kwarg is not None:
        star_kwarg = star_kwarg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    fn = fn.with_changes(params=params.with_changes(params=kept, star_kwarg=star_kwarg))
    return _prune_docstring(fn, removed)


@functools.lru_cache(maxsize=None)
def specialise(module: str, name: str, features: frozenset[str],
               splices: tuple[tuple[str, tuple[str, ...]], ...] = (), name_as: str | None = None) -> str:
    """The source of function ``name`` of runtime module ``module`` for a program with these
    ``features`` (lower-case flag names), ``loop_code`` sites filled from ``splices`` and the
    function named ``name_as``. Without ``splices`` (code from the program) the text is kept in
    the cache folder (printers/text_cache.py), keyed by the runtime file's text, this file's and
    the arguments: a cold translation then parses no runtime module with libcst."""
    key = None
    if not any(lines for _site, lines in splices):
        key = "\n".join([_own_source(), module, name, ",".join(sorted(features)), str(name_as),
                         RUNTIME.joinpath(*module.split(".")).with_suffix(".py").read_text(encoding="utf-8")])
        kept = text_cache.read("specialised", key)
        if kept is not None:
            return helper_text(kept)
    text = _specialised(module, name, features, splices, name_as)
    if key is not None:
        text_cache.write("specialised", key, text)
    return helper_text(text)


@functools.lru_cache(maxsize=None)
def _own_source() -> str:
    return pathlib.Path(__file__).read_text(encoding="utf-8")


def _specialised(module: str, name: str, features: frozenset[str],
                 splices: tuple[tuple[str, tuple[str, ...]], ...], name_as: str | None) -> str:
    tree, flags = _parsed(module)
    fn = next((s for s in tree.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
    if fn is None:
        raise KeyError(f"transpiler/runtime/{module.replace('.', '/')}.py has no function {name}")
    on = frozenset(flag for flag in flags if flag.lower() in features)
    fn = fn.with_changes(body=fn.body.with_changes(body=_Prune(flags, on, dict(splices)).block(fn.body.body)))
    fn = _drop_unused_parameters(fn)
    if name_as:
        fn = fn.with_changes(name=cst.Name(name_as))
    fn = fn.with_changes(leading_lines=())
    return cst.Module(body=[fn]).code
