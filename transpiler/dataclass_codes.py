"""Dataclass methods compiled once, not in every cold run (issue 21: a cold ``transpile`` was
two ``black --check`` runs, and most of it was importing the translation path).

Importing the translation path creates about a thousand dataclasses (libcst's node classes
alone are several hundred, then black's and the translator's own), and ``@dataclass``
writes each one's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ... as source text and
``exec``s it: over a thousand ``compile`` calls, about a third of the import time.

:func:`compiled_dataclass_methods` puts an ``exec`` in the ``dataclasses`` module's globals
(its ``exec(txt, globals, ns)`` finds that one before the builtin) which executes the code
object compiled from the same text, kept from an earlier run in the translator's cache folder
(printers/text_cache.py), instead of compiling the text again. ``exec(text)`` and
``exec(compile(text, "<string>", "exec", dont_inherit=True))`` are the same thing (the
``dataclasses`` module has no ``__future__`` imports for the text to inherit), so the classes
are the same; texts not seen before are compiled as ``exec`` would and added to the entry.
The entry is named by the Python version and its bytecode's magic number (code objects are
only valid for that interpreter); one that cannot be read is none.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import hashlib
import importlib.util
import marshal
import sys
from collections.abc import Iterator

from transpiler.printers import text_cache

_KIND = "dataclass-code"


def _key() -> str:
    return f"{sys.version}\n{importlib.util.MAGIC_NUMBER.hex()}\n{dataclasses.__file__}"


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def _usable() -> bool:
    """Whether ``dataclasses`` compiles its methods with a plain ``exec(text, ...)`` this
    module can stand in for: it does not define an ``exec`` of its own and imports nothing
    from ``__future__`` (whose flags ``exec`` would pass on to the text)."""
    import __future__

    module = vars(dataclasses)
    return "exec" not in module and not any(isinstance(v, __future__._Feature) for v in module.values())


def _load() -> dict[bytes, object]:
    data = text_cache.read_bytes(_KIND, _key())
    if not data:
        return {}
    try:
        codes = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return {}
    return codes if isinstance(codes, dict) else {}


@contextlib.contextmanager
def compiled_dataclass_methods() -> Iterator[None]:
    """While in the block, ``@dataclass`` runs the code objects kept from earlier runs in
    place of compiling its methods' source text; at the end the entry is brought up to date."""
    if text_cache.cache_dir() is None or not _usable():
        yield
        return
    known = _load()
    new: dict[bytes, object] = {}

    def cached_exec(source, globals=None, locals=None):
        if not isinstance(source, str):
            return builtins.exec(source, globals, locals)
        digest = _digest(source)
        code = known.get(digest)
        if code is None:
            code = new[digest] = compile(source, "<string>", "exec", dont_inherit=True)
        return builtins.exec(code, globals, locals)

    vars(dataclasses)["exec"] = cached_exec
    try:
        yield
    finally:
        del vars(dataclasses)["exec"]
        if new:
            text_cache.write_bytes(_KIND, _key(), marshal.dumps({**known, **new}))
