"""safetensors written and read with numpy alone, tensor by tensor.

The format: an 8-byte little-endian header length, a JSON header
(``{key: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}``,
offsets relative to the end of the header) and the raw little-endian data. Writing
streams each tensor in chunks (``Lazy.chunks``), so a transposed tensor is never
copied whole; a tensor mapped from the checkpoint that needs no transform is copied file to
file by the kernel (``os.copy_file_range``); the file appears only when complete (temp file +
rename).
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
import itertools
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable

import numpy as np

from transpiler.weights.errors import CheckpointError
from transpiler.weights.transforms import Lazy

DTYPES = {"float64": "F64", "float32": "F32", "float16": "F16", "int64": "I64", "int32": "I32",
          "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL"}
NUMPY = {v: k for k, v in DTYPES.items()}
MAX_HEADER = 100 << 20
#: threads computing transformed chunks ahead of the writer (numpy copies release the GIL)
WORKERS = 2


def write_safetensors(path: str, tensors: Iterable[tuple[str, "Lazy | np.ndarray"]],
                      metadata: dict[str, str] | None = None, chunk_bytes: int = 1 << 24) -> int:
    """Write ``(key, tensor)`` pairs in the given order; returns the bytes written.

    ``tensors`` may be a generator of lazily read tensors: each is produced, written
    and released before the next. Shapes come first, so the caller passes
    ``(key, shape, dtype, produce)`` through ``write_safetensors_streamed`` when the
    header must be known before any tensor is read.
    """
    items = [(k, t if isinstance(t, Lazy) else Lazy(np.asarray(t))) for k, t in tensors]
    specs = [(k, t.shape, t.dtype) for k, t in items]
    lookup = dict(items)
    return write_safetensors_streamed(path, specs, lambda key: lookup[key], metadata, chunk_bytes)


def write_safetensors_streamed(path: str, specs: list[tuple[str, tuple, np.dtype]], produce,
                               metadata: dict[str, str] | None = None, chunk_bytes: int = 1 << 24) -> int:
    """``specs`` = ``(key, shape, dtype)`` in file order; ``produce(key)`` → a ``Lazy`` of
    that shape, called once per key just before it is written."""
    header: dict = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    offset = 0
    for key, shape, dtype in specs:
        name = np.dtype(dtype).name
        if name not in DTYPES:
            raise CheckpointError(f"{key}: dtype {name} cannot be stored in safetensors")
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        header[key] = {"dtype": DTYPES[name], "shape": [int(s) for s in shape],
                       "data_offsets": [offset, offset + size]}
        offset += size
    blob = json.dumps(header, separators=(",", ":")).encode("utf-8")
    blob += b" " * (-len(blob) % 8)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".transpile-", suffix=".safetensors.tmp")
    try:
        from transpiler.paths import public_mode

        public_mode(fd)
        with os.fdopen(fd, "wb") as fh:
            fh.write(struct.pack("<Q", len(blob)))
            fh.write(blob)
            # chunks are computed by two threads, in order, while the main thread writes
            with ThreadPoolExecutor(WORKERS) as pool:
                for key, shape, dtype in specs:
                    lazy = produce(key)
                    if tuple(lazy.shape) != tuple(shape):
                        raise CheckpointError(f"{key}: produced shape {lazy.shape}, declared {tuple(shape)}")
                    want = np.dtype(dtype).newbyteorder("<")
                    span = _file_span(lazy, want)
                    if span is not None and _copy_span(fh, *span):
                        del lazy
                        continue
                    ranges = iter(lazy.chunk_ranges(chunk_bytes))
                    ahead = deque(pool.submit(lazy.block, i, j) for i, j in itertools.islice(ranges, WORKERS))
                    while ahead:
                        chunk = ahead.popleft().result()
                        for i, j in itertools.islice(ranges, 1):
                            ahead.append(pool.submit(lazy.block, i, j))
                        fh.write(memoryview(np.ascontiguousarray(chunk, dtype=want)).cast("B"))
                        del chunk
                    del lazy
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return 8 + len(blob) + offset


def _file_span(lazy: Lazy, want: np.dtype) -> tuple[str, int, int] | None:
    """(file, offset, bytes) when ``lazy`` is a whole tensor mapped from a file as it is to be
    written (no transform, the dtype and byte order written, C order): its bytes can be copied
    file to file. Only the mapping itself qualifies (``view.base`` is its mmap): a view derived
    from it (a slice, a reshape) carries the mapping's offset, not its own."""
    v = lazy.view
    if lazy.rows is not None or lazy.cols is not None or not isinstance(v, np.memmap):
        return None
    mm = getattr(v, "_mmap", None)
    if mm is None or v.base is not mm or not v.flags.c_contiguous or v.dtype != want or not v.filename:
        return None
    return v.filename, int(v.offset), int(v.nbytes)


def _copy_span(fh, path: str, offset: int, count: int) -> bool:
    """Append ``count`` bytes of ``path`` from ``offset`` to ``fh`` in the kernel
    (``os.copy_file_range``: no pass over the data in this process); False, with nothing
    appended, where the system cannot (then the caller writes the tensor itself)."""
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    fh.flush()
    start = fh.tell()
    try:
        with open(path, "rb") as src:
            done = 0
            while done < count:
                n = copy(src.fileno(), fh.fileno(), count - done, offset + done, start + done)
                if n <= 0:
                    raise OSError("the source ended early")
                done += n
    except OSError:
        fh.seek(start)
        fh.truncate()
        return False
    fh.seek(start + count)
    return True


class SafetensorsFile:
    """A safetensors file opened for reading; tensors are read one at a time."""

    def __init__(self, path: str):
        self.path = path
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise CheckpointError(f"{path}: truncated safetensors file (no header)")
            (n,) = struct.unpack("<Q", head)
            if n > min(MAX_HEADER, size - 8):
                raise CheckpointError(f"{path}: corrupt or truncated safetensors file (header of {n} "
                                      f"bytes in a {size}-byte file)")
            raw = fh.read(n)
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CheckpointError(f"{path}: corrupt safetensors header ({exc})") from None
        if not isinstance(header, dict):
            raise CheckpointError(f"{path}: corrupt safetensors header (not an object)")
        self.metadata = header.pop("__metadata__", {}) or {}
        self._data_start = 8 + n
        data_size = size - self._data_start
        self.entries: dict[str, tuple[str, tuple[int, ...], int, int]] = {}
        for key, spec in header.items():
            try:
                dtype = NUMPY[spec["dtype"]]
                shape = tuple(int(s) for s in spec["shape"])
                begin, end = (int(x) for x in spec["data_offsets"])
            except (KeyError, TypeError, ValueError):
                raise CheckpointError(f"{path}: corrupt safetensors entry {key!r}") from None
            want = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            if any(s < 0 for s in shape) or end - begin != want or begin < 0:
                raise CheckpointError(f"{path}: corrupt safetensors entry {key!r} ({spec})")
            if end > data_size:
                raise CheckpointError(f"{path}: truncated safetensors file ({key!r} ends at byte "
                                      f"{self._data_start + end}, the file has {size})")
            self.entries[key] = (dtype, shape, begin, end)
        spans = sorted((b, e, k) for k, (_d, _s, b, e) in self.entries.items() if e > b)
        for (_b1, e1, k1), (b2, _e2, k2) in zip(spans, spans[1:]):
            if b2 < e1:  # (two tensors sharing bytes: a crafted file, refused as the safetensors library does)
                raise CheckpointError(f"{path}: corrupt safetensors file: the bytes of {k1!r} and {k2!r} "
                                      "overlap")

    def keys(self) -> list[str]:
        return list(self.entries)

    def shape(self, key: str) -> tuple[int, ...]:
        return self.entries[key][1]

    def read(self, key: str) -> np.ndarray:
        dtype, shape, begin, end = self.entries[key]
        with open(self.path, "rb") as fh:
            fh.seek(self._data_start + begin)
            data = fh.read(end - begin)
        if len(data) != end - begin:
            raise CheckpointError(f"{self.path}: truncated while reading {key!r}")
        return np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape).astype(dtype)

    def to_dict(self) -> dict[str, np.ndarray]:
        return {k: self.read(k) for k in self.entries}
