"""The files one run names (source, output, report, checkpoints): no two may be the same
file, or one would overwrite another (issue 22 item 2)."""

from __future__ import annotations

import os


def same_file(a: str, b: str) -> bool:
    """Do ``a`` and ``b`` name one file: the same inode when both exist (hard links,
    symlinks), else the same resolved path (also for a path that does not exist yet)."""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def clash(named: list[tuple[str, str | None]], written: tuple[str, ...] = (),
          later: tuple[tuple[str, str], ...] = ()) -> str | None:
    """For ``(role, path)`` pairs (a path of None is not given), the message for the first
    two roles that name the same file, or None. ``written`` are the roles the run writes;
    ``later`` are pairs of roles the caller checks itself."""
    given = [(role, path) for role, path in named if path]
    for i, (role_a, a) in enumerate(given):
        for role_b, b in given[i + 1:]:
            if (role_a, role_b) not in later and same_file(a, b):
                shown = a if a == b else f"{a} and {b}"
                if role_b in written or role_a in written:
                    w, other = (role_b, role_a) if role_b in written else (role_a, role_b)
                    return (f"{role_a} and {role_b} are the same file ({shown}): {w} would overwrite "
                            f"{other}; give {role_b} another path")
                return f"{role_a} and {role_b} are the same file ({shown}); give {role_b} another path"
    return None


def public_mode(fd: int) -> None:
    """Give a file made by ``tempfile.mkstemp`` (0600) the mode a plain ``open`` would:
    0666 less the umask, so outputs honour the user's umask."""
    mask = os.umask(0)
    os.umask(mask)
    os.fchmod(fd, 0o666 & ~mask)


def not_regular(named: list[tuple[str, str | None]]) -> str | None:
    """The message for the first path written by the run that exists and is neither a
    regular file nor a folder (``-o /dev/stdout``: the rename would replace the device)."""
    import stat

    for role, path in named:
        if not path:
            continue
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            return (f"{role} {path} is not a regular file (a device, FIFO or socket); outputs are written "
                    "to a temporary file and renamed over it, which would replace it: give a file path")
    return None


def atomic_write(path: str, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8 with ``\\n`` line ends, or bytes) to ``path`` via a temp file
    in the same folder and a rename: a reader never sees half a file, and a failure leaves none."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".transpile-", suffix=".tmp")
    try:
        public_mode(fd)
        if isinstance(data, bytes):
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
