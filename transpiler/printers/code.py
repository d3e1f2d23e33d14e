"""A tiny code model for generated Python: literals, calls, and a namespace.

Generated code is built from these helpers (never by pasting user text into format
strings), so every literal is rendered the same way and output is deterministic.
"""

from __future__ import annotations

import keyword
import math
import re
from typing import TYPE_CHECKING, Any

from transpiler.ir.sizes import Scalar, Size, SymbolicSize, render

if TYPE_CHECKING:
    from transpiler.ir.graph import Graph, Node

#: the first line of a script this tool wrote (it names the source it was translated from)
GENERATED_HEADER = re.compile(r"# Transpiled from .* to (PyTorch|Keras) by transpiler\b")


def lit(value: Any) -> str:
    """A Python literal for ``value`` (tuples, lists, floats incl. inf, strings, None)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, Scalar):
        return render(value)  # a float of sizes: their expression where the code sees them
    if isinstance(value, float):
        if math.isinf(value):
            return 'float("-inf")' if value < 0 else 'float("inf")'
        return repr(value)
    if isinstance(value, (Size, SymbolicSize)):
        return render(value)  # its source expression where the printed code can see it
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, str):
        return '"' + _escaped(value, '"') + '"'
    if isinstance(value, tuple):
        inner = ", ".join(lit(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(lit(v) for v in value) + "]"
    raise TypeError(f"no literal for {value!r}")


def _escaped(text: str, quote: str = "", keep: str = "") -> str:
    """``text`` as the body of a (non-raw) string literal: backslashes doubled, ``quote``
    characters escaped, and every character that is not printable (newlines, NUL, line
    separators, ...) but those in ``keep`` written as an escape, so the literal's value
    is ``text`` exactly and the literal cannot end early or span lines."""
    out = []
    for ch in text:
        if ch == "\\" and ch not in keep:
            out.append("\\\\")
        elif ch in quote:
            out.append("\\" + ch)
        elif ch in keep or ch.isprintable():
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])
    return "".join(out)


def docstring(text: str, indent: str = "") -> str:
    """A docstring literal whose value is ``text``, whatever ``text`` holds: source
    docstrings (``\"\"\"``, backslashes, ``r`` prefixes, NUL, unbalanced quotes) cannot
    end it or change the program. Lines after the first get ``indent``; the first line
    is returned without it (the caller places the literal)."""
    # a run of three quotes, or quotes the closing ones would join, is escaped: nothing
    # inside can end the literal
    # (the last as \x22: a formatter pads a docstring that ends with a quote character)
    text = re.sub(r'"{3,}|"+\Z', lambda m: '\\"' * (len(m.group()) - 1) + "\\x22", text.replace("\\", "\\\\"))
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:  # (the closing quotes go on a line of their own anyway)
        lines.pop()
    body = [_escaped(ln, keep="\t\\") for ln in lines]
    # trailing blanks are part of the value, but formatters strip them: the last is escaped
    body = [ln[:-1] + ("\\t" if ln[-1] == "\t" else "\\x20") if ln[-1:] in (" ", "\t") else ln for ln in body]
    joined = "\n".join([body[0]] + [f"{indent}{ln}" if ln else "" for ln in body[1:]])
    return f'"""{joined}"""' if "\n" not in text else f'"""{joined}\n{indent}"""'


def docstring_lines(lines: list[str], indent: str) -> str:
    """The docstring of ``lines`` (joined by newlines), indented: ``indent`` + literal."""
    return indent + docstring("\n".join(lines), indent)


def comment_text(text: str) -> str:
    """``text`` made fit for one comment line: line breaks and other characters that are
    not printable are written as escapes (a source line quoted in a comment cannot start
    a new line of code)."""
    return "".join(ch if ch.isprintable() or ch == "\t" else repr(ch)[1:-1] for ch in text)


def comment_lines(text: str, prefix: str = "# ") -> list[str]:
    """Source text quoted as comment lines, one per line of ``text`` (split where Python
    splits lines), each made safe by ``comment_text``."""
    return [(prefix + comment_text(ln)).rstrip() for ln in re.split(r"\r\n|\r|\n", text)]


def call(func: str, *args: Any, **kwargs: Any) -> str:
    """``func(args..., key=value...)``; positional args are code, keyword values literals.

    Keyword values wrapped in ``Code`` are inserted as code.
    """
    parts = [a if isinstance(a, str) else lit(a) for a in args]
    for key, value in kwargs.items():
        parts.append(f"{key}={value.text if isinstance(value, Code) else lit(value)}")
    return f"{func}({', '.join(parts)})"


class Code:
    """Marks a keyword argument value as code rather than a literal."""

    def __init__(self, text: str):
        self.text = text


def size_arg(values: tuple) -> int | tuple:
    """``3`` for ``(3, 3)``; the tuple when the sizes differ."""
    return values[0] if len(set(values)) == 1 else tuple(values)


class Namespace:
    """Hands out unique, legal, non-shadowing Python names."""

    RESERVED = {"self", "torch", "nn", "F", "math", "np", "super", "print", "range", "len", "input"}

    def __init__(self, taken: set[str] | None = None):
        self.taken: set[str] = set(taken or ()) | self.RESERVED

    def fresh(self, hint: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "v"
        if base[0].isdigit() or keyword.iskeyword(base):
            base = "v_" + base
        name, i = base, 1
        while name in self.taken:
            name = f"{base}_{i}"
            i += 1
        self.taken.add(name)
        return name


def exclusive_cone(graph: Graph, select: Node, slot: int) -> list[Node]:
    """The nodes whose results only ``select``'s input ``slot`` needs (directly or through
    other such nodes): computed inside that branch, in graph order."""
    users: dict[int, list[tuple[Node, int]]] = {}
    for node in graph.nodes:
        for k, v in enumerate(node.inputs):
            users.setdefault(id(v), []).append((node, k))
    outputs = {id(v) for v in graph.outputs}
    cone: set[int] = set()
    index = {id(n): i for i, n in enumerate(graph.nodes)}
    for node in reversed(graph.nodes[:index[id(select)]]):
        uses = [u for v in node.outputs for u in users.get(id(v), ())]
        if uses and not any(id(v) in outputs for v in node.outputs) and \
                all((u is select and k == slot) or id(u) in cone for u, k in uses):
            cone.add(id(node))
    return [n for n in graph.nodes if id(n) in cone]
