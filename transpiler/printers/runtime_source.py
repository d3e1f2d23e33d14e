"""Copy runtime helpers (``transpiler/runtime/``) into generated programs, as source text.

The helpers a generated program calls (losses, metrics, loaders, Keras-exact optimizers, ...)
are real modules under ``transpiler/runtime/``, imported and unit-tested as code. A printer
asks for top-level definitions by name; this module reads the runtime files as *text*
(``ast``; nothing is imported, so the translation path imports no framework), adds the
definitions they depend on (same module, or another runtime module they import from), and
returns their source in a deterministic order: dependencies first, then the order asked.

``Copier`` remembers what one output already holds, so a shared dependency (``Callback``
under ``LambdaCallback``, ``Mean`` under ``MeanMetricWrapper``) is copied once. A definition
may be copied under another name (``rename``): the names are renamed as tokens, so strings
and comments keep their text. Parsed modules are cached per process.
"""

from __future__ import annotations

import ast
import functools
import io
import pathlib
import re
import tokenize
from dataclasses import dataclass

RUNTIME = pathlib.Path(__file__).resolve().parent.parent / "runtime"
PACKAGE = "transpiler.runtime"
#: every definition text handed out (copied, renamed, or specialised by runtime_prune.py): the
#: formatter finds these helpers in an output and reuses their black form (printers/format_cache.py)
HELPER_TEXTS: set[str] = set()


def helper_text(text: str) -> str:
    """``text`` (a runtime definition as printed into an output), remembered in HELPER_TEXTS."""
    HELPER_TEXTS.add(text if text.endswith("\n") else text + "\n")
    return text


@dataclass(frozen=True)
class Definition:
    """One top-level definition of a runtime module."""

    module: str  # "torch.losses"
    name: str
    text: str  # decorators to the last line, as written
    uses: frozenset[str]  # names it reads (dependencies are the module's definitions among them)


@dataclass(frozen=True)
class RuntimeModule:
    name: str
    definitions: dict[str, Definition]
    #: local name → (runtime module, name) for ``from transpiler.runtime.x import y``
    runtime_imports: dict[str, tuple[str, str]]
    #: local name → the import statement that binds it (``import numpy as np``)
    imports: dict[str, str]
    #: the definitions' names in the file's order
    order: tuple[str, ...]


def _module_name(node: ast.ImportFrom, current: str) -> str | None:
    """The runtime module an import names (``torch.metrics``), or None for other modules."""
    if node.level:
        base = current.split(".")[: -node.level]
        return ".".join(base + ([node.module] if node.module else []))
    if node.module and node.module.startswith(PACKAGE + "."):
        return node.module[len(PACKAGE) + 1:]
    return None


@functools.lru_cache(maxsize=None)
def load(module: str) -> RuntimeModule:
    """The definitions of ``transpiler/runtime/<module as a path>.py`` (read once per process)."""
    path = RUNTIME.joinpath(*module.split(".")).with_suffix(".py")
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text, filename=str(path))
    definitions, runtime_imports, imports = {}, {}, {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source = _module_name(node, module)
            for alias in node.names:
                local = alias.asname or alias.name
                if source is not None:
                    runtime_imports[local] = (source, alias.name)
                elif node.module != "__future__":
                    imports[local] = ast.get_source_segment(text, node)
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                imports[local] = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
        else:
            continue  # the module docstring
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        body = "".join(lines[first - 1: node.end_lineno])
        uses = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
        for name in names:
            definitions[name] = Definition(module, name, body, uses - {name})
    return RuntimeModule(module, definitions, runtime_imports, imports, tuple(definitions))


def _dependencies(definition: Definition) -> list[tuple[str, str]]:
    """(module, name) of the runtime definitions ``definition`` uses, in a stable order."""
    module = load(definition.module)
    found = []
    for name in sorted(definition.uses):
        if name in module.definitions:
            found.append((definition.module, name))
        elif name in module.runtime_imports:
            found.append(module.runtime_imports[name])
    return found


def _renamed(text: str, rename: dict[str, str]) -> str:
    """``text`` with the names in ``rename`` replaced: NAME tokens, and whole words in its
    strings and comments (a docstring naming the definition follows its new name)."""
    words = re.compile(r"\b(" + "|".join(map(re.escape, sorted(rename, key=len, reverse=True))) + r")\b")
    lines = text.splitlines(keepends=True)
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    for tok in reversed(tokens):  # right to left: earlier columns stay valid
        if tok.type == tokenize.NAME and tok.string in rename:
            new = rename[tok.string]
        elif tok.type in (tokenize.STRING, tokenize.COMMENT):
            new = words.sub(lambda m: rename[m.group(1)], tok.string)
        else:
            continue
        if new == tok.string:
            continue
        (row, col), (end_row, end_col) = tok.start, tok.end
        head, tail = lines[row - 1][:col], lines[end_row - 1][end_col:]
        lines[row - 1: end_row] = [head + new + tail]
    return "".join(lines)


@functools.lru_cache(maxsize=None)
def _copied(module: str, name: str, rename: tuple[tuple[str, str], ...]) -> str:
    text = load(module).definitions[name].text
    return helper_text(_renamed(text, dict(rename)) if rename else text)


def defines(module: str, name: str) -> bool:
    """Whether runtime module ``module`` has a top-level definition ``name``."""
    return name in load(module).definitions


def imports_of(module: str, name: str) -> set[str]:
    """The framework import statements definition ``name`` needs (``import torch``, ...)."""
    mod = load(module)
    return {mod.imports[n] for n in mod.definitions[name].uses if n in mod.imports}


class Copier:
    """The runtime definitions one generated program holds, each copied once."""

    def __init__(self) -> None:
        self.copied: set[str] = set()  # names as they appear in the output
        self.imports: set[str] = set()

    def take(self, module: str, *names: str, rename: dict[str, str] | None = None) -> list[str]:
        """Source of ``names`` and of the runtime definitions they use that this program does
        not hold yet, in the runtime files' order (a runtime module defines what a definition
        uses above it: tests/test_runtime_source.py). ``rename`` maps names of ``module`` to
        the program's (definitions and uses); a renamed name is never a dependency."""
        renames = dict(rename or {})
        wanted: dict[tuple[str, str], None] = {}

        def visit(mod: str, name: str) -> None:
            shown = renames.get(name, name) if mod == module else name
            if shown in self.copied or (mod, name) in wanted:
                return
            definition = load(mod).definitions.get(name)
            if definition is None:
                raise KeyError(f"transpiler/runtime/{mod.replace('.', '/')}.py has no {name}")
            wanted[(mod, name)] = None
            for dep in _dependencies(definition):
                if not (dep[0] == module and dep[1] in renames):
                    visit(*dep)

        for name in names:
            visit(module, name)
        modules = list(dict.fromkeys(mod for mod, _name in wanted))
        order = sorted(wanted, key=lambda key: (modules.index(key[0]), load(key[0]).order.index(key[1])))
        key = tuple(sorted(renames.items()))
        out = []
        for mod, name in order:
            self.copied.add(renames.get(name, name) if mod == module else name)
            self.imports |= imports_of(mod, name)
            out.append(_copied(mod, name, key if mod == module else ()))
        return out


def source(module: str, name: str, rename: dict[str, str] | None = None) -> str:
    """The source of one runtime definition alone (no dependencies), renamed as asked."""
    return _copied(module, name, tuple(sorted((rename or {}).items())))
