"""Architecture guards over ``transpiler/``, read from the source with ``ast`` (nothing imported).

1. **Layering** (issue 17, DESIGN "The open world"): every import, module-level or inside a
   function, is an edge between two modules; the layer of each end decides whether it is allowed::

       frontend_ast (frontends) -> ir
       ir/passes    (passes)    -> ir
       printers                 -> ir, runtime
       weights                  -> ir
       ir                       -> (nothing of the project)
       runtime                  -> (nothing: it is copied into generated programs as it is)

   Every layer may also import the shared utilities (``cst_fast``, ``lazy_import``, ``paths``) and the
   other modules of its own layer. The drivers (``cli``, ``translate``, ``batch``, ``verify*``,
   ``report``) sit on top and may import anything. Today's back-edges are listed in
   ``ALLOWED_BACK_EDGES``; that list may only shrink: a new back-edge fails, and so does an entry
   whose edge no longer exists (delete it, so the list stays honest).

2. **Long functions**: a function over ``MAX_FUNCTION_LINES`` lines carries a ``# long: <reason>``
   comment on its ``def`` line, just above it, or on the first line of its body. Today's
   offenders without one are listed in ``LONG_FUNCTIONS_TODAY``; that list may only shrink too.

3. **File size**: no file in ``transpiler/`` over ``MAX_FILE_LINES`` lines.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re

from source_trees import parsed, text

ROOT = pathlib.Path(__file__).resolve().parent.parent / "transpiler"

# layer -> the layers it may import (besides itself and the shared utilities)
ALLOWED = {
    "frontend": {"ir"},
    "passes": {"ir"},
    "printers": {"ir", "runtime"},
    "weights": {"ir"},
    "ir": set(),
    "runtime": set(),
    "util": set(),
}
UTILITIES = {"transpiler.cst_fast", "transpiler.lazy_import", "transpiler.paths"}

# Today's back-edges (importing module -> imported module). May only shrink: it is empty, so any
# back-edge fails (the weights' plan is IR data, ir/state_plan.py, computed by the drivers).
ALLOWED_BACK_EDGES: set[str] = set()

MAX_FUNCTION_LINES = 80
LONG_MARK = re.compile(r"#\s*long:\s*\S")

# Today's functions over MAX_FUNCTION_LINES lines without a "# long:" reason. May only shrink.
LONG_FUNCTIONS_TODAY: set[str] = set()


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def layer(module: str) -> str:
    """The layer a ``transpiler.*`` module belongs to ("driver" for the top-level drivers)."""
    if module in UTILITIES:
        return "util"
    parts = module.split(".")
    if len(parts) < 2:
        return "driver"
    if parts[1] == "ir":
        return "passes" if len(parts) > 2 and parts[2] == "passes" else "ir"
    return {
        "frontend_ast": "frontend",
        "printers": "printers",
        "weights": "weights",
        "runtime": "runtime",
    }.get(parts[1], "driver")


def _resolve(importer: str, is_package: bool, node: ast.AST) -> list[str]:
    """The project modules one import statement names (submodules when `from pkg import mod`)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        assert isinstance(node, ast.ImportFrom)
        if node.level:
            base = importer.split(".")
            if not is_package:
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        names = []
        for alias in node.names:
            sub = f"{module}.{alias.name}"
            names.append(sub if sub in MODULES else module)
    out = []
    for name in names:
        if not name.startswith("transpiler"):
            continue
        # `import transpiler.printers.torch.ops` names the deepest existing module
        while name not in MODULES and "." in name:
            name = name.rsplit(".", 1)[0]
        out.append(name)
    return out


@functools.cache  # (the source does not change while the tests run: one scan per process)
def import_edges() -> frozenset[tuple[str, str]]:
    """Every (importer, imported) pair between project modules, at any nesting depth."""
    edges = set()
    for module, path in MODULES.items():
        tree = parsed(path)
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(module, is_package, node):
                    if target != module:
                        edges.add((module, target))
    return frozenset(edges)


def back_edges() -> set[str]:
    found = set()
    for importer, imported in import_edges():
        source, target = layer(importer), layer(imported)
        if source == "driver" or source == target or target == "util":
            continue
        if target not in ALLOWED[source]:
            found.add(f"{importer} -> {imported}")
    return found


def test_layer_of_each_package():
    assert layer("transpiler.frontend_ast.keras.frontend") == "frontend"
    assert layer("transpiler.ir.passes.layout_pass") == "passes"
    assert layer("transpiler.ir.shapes") == "ir"
    assert layer("transpiler.ir.passes") == "passes"
    assert layer("transpiler.ir.graph") == "ir"
    assert layer("transpiler.printers.torch.ops") == "printers"
    assert layer("transpiler.weights.mapping") == "weights"
    assert layer("transpiler.runtime") == "runtime"
    assert layer("transpiler.cli") == "driver"
    assert layer("transpiler.cst_fast") == "util"


def test_function_level_imports_are_edges():
    """The scan sees imports inside functions (most back-edges hide there to dodge cycles)."""
    edges = import_edges()
    assert ("transpiler.printers.keras.helper_calls", "transpiler.ir.program") in edges
    assert ("transpiler.printers.torch.training", "transpiler.printers.torch.printer") in edges


def test_no_new_back_edges():
    new = sorted(back_edges() - ALLOWED_BACK_EDGES)
    assert not new, (
        "imports against the layering (frontends -> ir; passes -> ir; printers -> ir, runtime; "
        "weights -> ir; runtime -> nothing):\n  " + "\n  ".join(new)
    )


def test_back_edge_allowlist_is_honest():
    gone = sorted(ALLOWED_BACK_EDGES - back_edges())
    assert not gone, "these back-edges are gone; delete them from ALLOWED_BACK_EDGES:\n  " + (
        "\n  ".join(gone)
    )


def test_runtime_imports_nothing_of_the_project():
    """Runtime modules are copied into generated programs: they may not import the transpiler."""
    offenders = sorted(
        f"{a} -> {b}"
        for a, b in import_edges()
        if layer(a) == "runtime" and layer(b) != "runtime"
    )
    assert not offenders, offenders


# ------------------------------------------------------------------------------- long functions


def _qualified_functions(tree: ast.Module):
    """(qualified name, node) for every function, methods and nested functions included."""

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def _has_long_reason(lines: list[str], node: ast.FunctionDef) -> bool:
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    # the line above the def (or its decorators), the def line(s), the first line of the body
    header = lines[max(first - 2, 0) : node.body[0].lineno]
    return any(LONG_MARK.search(line) for line in header)


@functools.cache
def long_functions_without_reason() -> frozenset[str]:
    found = set()
    for path in MODULES.values():
        lines = text(path).splitlines()
        for name, node in _qualified_functions(parsed(path)):
            if node.end_lineno - node.lineno + 1 <= MAX_FUNCTION_LINES:
                continue
            if not _has_long_reason(lines, node):
                found.add(f"{path.relative_to(ROOT.parent).as_posix()}::{name}")
    return frozenset(found)


def test_long_function_scan_sees_a_reason(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES + 1))
    tree_text = f"def f():\n{body}\n\n# long: a table of cases\ndef g():\n{body}\n"
    lines = tree_text.splitlines()
    fns = dict(_qualified_functions(ast.parse(tree_text)))
    assert not _has_long_reason(lines, fns["f"])
    assert _has_long_reason(lines, fns["g"])


def test_long_functions_carry_a_reason():
    new = sorted(long_functions_without_reason() - LONG_FUNCTIONS_TODAY)
    assert not new, (
        f"functions over {MAX_FUNCTION_LINES} lines need a `# long: <reason>` comment "
        "(or a split):\n  " + "\n  ".join(new)
    )


def test_long_function_allowlist_is_honest():
    gone = sorted(LONG_FUNCTIONS_TODAY - long_functions_without_reason())
    assert not gone, (
        "these functions are short now (or say why they are long); delete them from "
        "LONG_FUNCTIONS_TODAY:\n  " + "\n  ".join(gone)
    )


#: the project's rule (issue 17, "Layout of folders"): no file in transpiler/ over this many lines
MAX_FILE_LINES = 1000


def _file_lines(path: pathlib.Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_file_size_scan_counts_lines(tmp_path):
    """The scan counts physical lines: a file of MAX_FILE_LINES + 1 lines is over the limit."""
    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * (MAX_FILE_LINES + 1), encoding="utf-8")
    assert _file_lines(big) == MAX_FILE_LINES + 1


def test_no_file_over_the_line_limit():
    """Every Python file in ``transpiler/`` has at most MAX_FILE_LINES lines: split a module by
    concern when it grows past it (a new module per family, not a helper dumping ground)."""
    over = {str(p.relative_to(ROOT)): _file_lines(p) for p in sorted(ROOT.rglob("*.py"))
            if _file_lines(p) > MAX_FILE_LINES}
    assert not over, f"files over {MAX_FILE_LINES} lines: {over}"
