"""Meaning-preserving mutations of whole programs, for the whole-program fuzz suite
(tests/test_fuzz_programs.py; issue 22).

Each mutator takes a script's source and a seed and returns another valid script that means
the same: a translator that reads the original must read the mutant alike (the same models,
the same stubs) and must never crash or hang on it.

- ``rename``: the user's own names (module-level functions, classes and variables, and the
  local variables of functions; not the tool's documented ``INPUT_SHAPE`` conventions) renamed
  consistently, to names chosen to be awkward:
  builtins the script never uses (``input``, ``list``), names the *target* framework's code
  uses (``torch``, ``nn``, ``F``, ``keras``, ``layers``, ``ops``) when the script does not
  bind them, and non-ASCII identifiers.
- ``odd_syntax``: trailing commas in calls, redundant parentheses around values, integer
  literals with digit separators, string literals split into implicit concatenations, and
  consecutive module-level statements joined with ``;``.
"""

from __future__ import annotations

import keyword
import random

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

AWKWARD = ["input", "list", "id", "type", "sum", "max", "torch", "nn", "F", "keras", "layers", "ops",
           "np", "tf", "math", "os", "sys", "model_", "größe", "层", "_", "__x", "self_"]


def _all_names(module: cst.Module) -> set[str]:
    names: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

        def visit_Attribute(self, node: cst.Attribute) -> None:
            names.add(node.attr.value)

    module.visit(V())
    return names


def _renameable(wrapper: MetadataWrapper) -> dict[cst.CSTNode, str]:
    """Name nodes of user-bound names (assignments, defs, classes; not parameters, imports,
    globals/nonlocals or attributes) → their name, with every access of those bindings."""
    scopes = wrapper.resolve(ScopeProvider)
    nodes: dict[cst.CSTNode, str] = {}
    refused: set[str] = set()
    for scope in set(scopes.values()):
        if scope is None:
            continue
        for assignment in scope.assignments:
            node = getattr(assignment, "node", None)
            name = assignment.name
            if isinstance(node, (cst.Import, cst.ImportFrom, cst.Param, cst.Global, cst.Nonlocal)) \
                    or isinstance(scope, cst.metadata.ClassScope):
                refused.add(name)
                continue
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                nodes[node.name] = name
            elif isinstance(node, cst.Name):
                nodes[node] = name
            else:
                refused.add(name)
                continue
            for access in assignment.references:
                if isinstance(access.node, cst.Name):
                    nodes[access.node] = name
                else:
                    refused.add(name)
    # dunder names, names used as keywords of calls or read by string elsewhere: left alone
    return {n: v for n, v in nodes.items() if v not in refused and not v.startswith("__")}


class _Renamer(cst.CSTTransformer):
    def __init__(self, targets: dict[cst.CSTNode, str], mapping: dict[str, str]):
        self.targets = targets
        self.mapping = mapping

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if original in self.targets:
            return updated.with_changes(value=self.mapping[self.targets[original]])
        return updated


def rename(source: str, seed: int) -> str:
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module)
    used = _all_names(module)
    # the tool's documented conventions are part of the program's meaning to it: INPUT_SHAPE /
    # INPUT_DTYPE (and <NAME>_INPUT_SHAPE, which names the builder build_<name>) keep their names
    kept = {n for n in used if n.endswith(("INPUT_SHAPE", "INPUT_DTYPE"))}
    kept |= {n for n in used if n.startswith("build_") and f"{n[6:].upper()}_INPUT_SHAPE" in used}
    targets = {node: name for node, name in _renameable(wrapper).items() if name not in kept}
    rng = random.Random(seed)
    names = sorted(set(targets.values()))
    pool = [n for n in AWKWARD if n not in used and not keyword.iskeyword(n)]
    rng.shuffle(pool)
    mapping = {}
    for i, name in enumerate(names):
        if pool and rng.random() < 0.5:
            mapping[name] = pool.pop()
        else:
            mapping[name] = f"{name}_{i}ü" if rng.random() < 0.3 else f"v{i}_{name}"
    # (a class keeps its capital so readers that use the convention still see a class)
    return wrapper.module.visit(_Renamer(targets, mapping)).code


class _OddSyntax(cst.CSTTransformer):
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.in_concat = 0  # (a part of an implicit concatenation is not split again: libcst refuses it)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> bool:
        self.in_concat += 1
        return True

    def leave_ConcatenatedString(self, original, updated):
        self.in_concat -= 1
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if updated.args and self.rng.random() < 0.6:
            last = updated.args[-1]
            if last.comma is cst.MaybeSentinel.DEFAULT and not isinstance(last.value, cst.GeneratorExp):
                args = list(updated.args[:-1]) + [last.with_changes(comma=cst.Comma())]
                return updated.with_changes(args=args)
        return updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if updated.star == "" and self.rng.random() < 0.3 and not updated.value.lpar:
            return updated.with_changes(value=updated.value.with_changes(
                lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
        return updated

    def leave_Integer(self, original: cst.Integer, updated: cst.Integer) -> cst.Integer:
        text = updated.value
        if text.isdigit() and len(text) >= 2 and self.rng.random() < 0.5:
            return updated.with_changes(value=text[0] + "_" + text[1:])
        return updated

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString):
        text = updated.value
        if not self.in_concat and len(text) >= 4 and text[0] in "'\"" and text[:3] not in ('"""', "'''") and "\\" not in text \
                and self.rng.random() < 0.4:
            q, body = text[0], text[1:-1]
            cut = self.rng.randrange(1, len(body))
            return cst.ConcatenatedString(left=cst.SimpleString(q + body[:cut] + q),
                                          right=cst.SimpleString(q + body[cut:] + q),
                                          lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = list(updated.body)
        out = []
        for stmt in body:
            prev = out[-1] if out else None
            if isinstance(stmt, cst.SimpleStatementLine) and isinstance(prev, cst.SimpleStatementLine) \
                    and not stmt.leading_lines and self.rng.random() < 0.3 \
                    and not any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in (*prev.body, *stmt.body)):
                joined = [s.with_changes(semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")))
                          for s in prev.body] + list(stmt.body)
                out[-1] = prev.with_changes(body=joined)
            else:
                out.append(stmt)
        return updated.with_changes(body=out)


def odd_syntax(source: str, seed: int) -> str:
    return cst.parse_module(source).visit(_OddSyntax(random.Random(seed))).code


MUTATORS = {"rename": rename, "odd_syntax": odd_syntax}
