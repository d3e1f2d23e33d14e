"""A folder of texts this tool derived from its own files (runtime helpers in their black form,
runtime functions specialised for a set of features), kept between runs: every output holds
some, and deriving them again costs a cold translation as much as its own work (issue 21).

The folder is ``$TRANSPILE_CACHE_DIR``, else ``$XDG_CACHE_HOME/transpiler``, else
``~/.cache/transpiler``; ``TRANSPILE_NO_CACHE=1`` turns it off. An entry is named by the
SHA-256 of everything its text is derived from (the caller's key, which holds the tool's
and black's versions where they matter), written atomically; a folder that cannot be read or
written is no folder (same output, derived again). Text derived from the user's script is
never kept here.
"""

from __future__ import annotations

import hashlib
import os
import tempfile


def cache_dir() -> str | None:
    """The cache folder, or None when turned off."""
    if os.environ.get("TRANSPILE_NO_CACHE"):
        return None
    return os.environ.get("TRANSPILE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "transpiler")


def _path(kind: str, key: str) -> str | None:
    folder = cache_dir()
    return folder and os.path.join(folder, kind, hashlib.sha256(key.encode("utf-8")).hexdigest())


def read(kind: str, key: str) -> str | None:
    """The text kept under ``key`` (None: none)."""
    path = _path(kind, key)
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def write(kind: str, key: str, text: str) -> None:
    """Keep ``text`` under ``key`` (atomically: a reader sees the whole entry or none)."""
    write_bytes(kind, key, text.encode("utf-8"))


def read_bytes(kind: str, key: str) -> bytes | None:
    """The bytes kept under ``key`` (None: none)."""
    path = _path(kind, key)
    if not path:
        return None
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def write_bytes(kind: str, key: str, data: bytes) -> None:
    """Keep ``data`` under ``key`` (atomically: a reader sees the whole entry or none)."""
    path = _path(kind, key)
    if not path:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:  # (a read-only home, a full disk: derived again next time)
        pass
