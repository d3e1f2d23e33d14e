"""Generated text placed into the rewritten script without a libcst round trip (issue 21).

The torch script printer keeps the user's module as a libcst tree and puts the code it
generates (model classes, builders, training helpers, imports and runtime helpers) into it.
It used to parse each generated text with ``cst.parse_module`` only to print the new nodes
back with ``Module.code``: libcst gives the text back as it was, so the round trip cost a
parse and a code generation of more text than the script itself, for nothing.

``RawChunks.statements(text)`` returns instead a one-line placeholder statement (a name no
program uses) that stands for the whole text; the printer moves it and sets its leading
lines like any statement, and ``put_back`` replaces each placeholder line of the printed
module by its text. The result is the same text as the round trip's, because a chunk is
only kept as text when that is certain:

- at the top level of the module (column 0: an indented placeholder would need the text
  re-indented, and the round trip re-indents with the module's own indentation), in a
  module indented with four spaces and ending lines with ``\\n``;
- the text starts with a statement at column 0 (no comment or blank line before it, which
  the parse would have made the module's header, dropped by ``.body``) and ends with one
  statement line (no comment or blank line after it: the module's footer, dropped too);
- where a caller reads the statements (the script printer looks for imports and a
  docstring at the top of the module), ``imports=False`` keeps any text holding a line
  that starts with ``import``/``from`` or a string at column 0 on the parsed path.

Anything else is parsed, as before. ``tests/test_raw_chunks.py`` compares both paths.
"""

from __future__ import annotations

import re

import libcst as cst

#: the placeholder's name (numbered); a script naming it keeps every chunk on the parsed path
MARK = "__transpiler_generated_text_"
_IMPORT_OR_STRING = re.compile(r"^(?:import\s|from\s|[rRbBuUfF]*['\"])", re.M)
_RAISE = re.compile(r"^raise\b", re.M)  # (the printer notes a raise at the top of what it adds)


class RawChunks:
    def __init__(self, module: cst.Module, source_text: str):
        self.enabled = module.default_indent == "    " and module.default_newline == "\n" \
            and MARK not in source_text
        self.texts: list[str] = []

    def statements(self, text: str, top_level: bool = True, imports: bool = False) -> list[cst.BaseStatement]:
        """``list(cst.parse_module(text).body)``, or a placeholder statement standing for it
        (see the module docstring for when)."""
        if not (self.enabled and top_level and plain(text, imports)):
            return list(cst.parse_module(text).body)
        self.texts.append(text if text.endswith("\n") else text + "\n")
        return [cst.SimpleStatementLine([cst.Expr(cst.Name(f"{MARK}{len(self.texts) - 1}"))])]

    def put_back(self, code: str) -> str:
        """The printed module with each placeholder line replaced by its text."""
        if not self.texts:
            return code
        seen: list[int] = []

        def text_of(match: re.Match) -> str:
            seen.append(int(match.group(1)))
            return self.texts[seen[-1]]

        out = re.sub(rf"^{MARK}(\d+)\n", text_of, code, flags=re.M)
        if sorted(seen) != list(range(len(self.texts))) or MARK in out:
            raise AssertionError("a generated text's placeholder was moved, repeated or indented")
        return out


def plain(text: str, imports: bool = False) -> bool:
    """Whether ``list(cst.parse_module(text).body)`` prints back as ``text`` (a newline added
    at the end when it has none): a statement at column 0 first, a statement line last."""
    if not text or text[0] in " \t\n\r\f#" or "\r" in text or "\f" in text or text.endswith("\n\n"):
        return False
    last = text.rstrip("\n").rsplit("\n", 1)[-1].lstrip()
    if not last or last.startswith("#") or last.endswith("\\"):
        return False
    return _RAISE.search(text) is None and (imports or _IMPORT_OR_STRING.search(text) is None)
