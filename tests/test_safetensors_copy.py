"""weights/safetensors_io.py: a tensor mapped from the checkpoint that needs no transform is
copied file to file by the kernel (os.copy_file_range), other tensors are written as before,
and where the kernel cannot copy the tensor is written by the process: the file is the same."""

from __future__ import annotations

import os

import numpy as np
import pytest

from transpiler.weights import safetensors_io
from transpiler.weights.safetensors_io import SafetensorsFile, write_safetensors
from transpiler.weights.transforms import Lazy


@pytest.fixture
def mapped(tmp_path):
    """A 5x3 float32 tensor mapped from a file at an odd offset (as an HDF5 dataset is)."""
    data = np.arange(15, dtype=np.float32).reshape(5, 3)
    path = tmp_path / "ckpt.bin"
    path.write_bytes(b"x" * 13 + data.tobytes() + b"tail")
    return data, np.memmap(path, dtype=np.float32, mode="r", offset=13, shape=(5, 3))


def _write_and_read(tmp_path, mm):
    tensors = [("whole", Lazy(mm)), ("transposed", Lazy(mm).permute((1, 0))), ("slice", Lazy(mm[1:])),
               ("rows", Lazy(mm).gather(0, np.array([4, 0, 1, 2, 3])))]
    out = tmp_path / "out.safetensors"
    write_safetensors(str(out), tensors)
    f = SafetensorsFile(str(out))
    return {k: f.read(k) for k in f.keys()}


@pytest.mark.skipif(not hasattr(os, "copy_file_range"), reason="no os.copy_file_range here")
def test_an_untransformed_mapped_tensor_is_copied_by_the_kernel(tmp_path, mapped, monkeypatch):
    data, mm = mapped
    calls = []
    real = os.copy_file_range

    def counted(*args):
        calls.append(args[2:])
        return real(*args)

    monkeypatch.setattr(os, "copy_file_range", counted)
    got = _write_and_read(tmp_path, mm)
    assert [c[1] for c in calls] == [13]  # only the whole mapping, from its offset in the file
    np.testing.assert_array_equal(got["whole"], data)
    np.testing.assert_array_equal(got["transposed"], data.T)
    np.testing.assert_array_equal(got["slice"], data[1:])
    np.testing.assert_array_equal(got["rows"], data[[4, 0, 1, 2, 3]])


def test_where_the_kernel_cannot_copy_the_tensor_is_written(tmp_path, mapped, monkeypatch):
    data, mm = mapped

    def refuse(*args):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "copy_file_range", refuse, raising=False)
    got = _write_and_read(tmp_path, mm)
    np.testing.assert_array_equal(got["whole"], data)
    np.testing.assert_array_equal(got["rows"], data[[4, 0, 1, 2, 3]])


def test_a_derived_view_is_no_file_span(mapped):
    _, mm = mapped
    want = np.dtype(np.float32).newbyteorder("<")
    assert safetensors_io._file_span(Lazy(mm), want) == (mm.filename, 13, 60)
    assert safetensors_io._file_span(Lazy(mm[1:]), want) is None
    assert safetensors_io._file_span(Lazy(mm.reshape(15)), want) is None
    assert safetensors_io._file_span(Lazy(mm), np.dtype(np.float64)) is None


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int8"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 70), (70, 3), (33, 17), (64, 256), (257, 129)])
def test_transposed_chunks_are_the_transpose(dtype, shape):
    """The tiled transpose (tiles of one cache line per output row) gives ``a.T`` for every
    dtype width and for shapes that are not multiples of a tile, chunk by chunk, with rows
    and columns gathered."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape) * 50).astype(dtype)
    lazy = Lazy(a).permute((1, 0))
    got = np.concatenate(list(lazy.chunks(max_bytes=64 * a.dtype.itemsize)))
    assert got.flags.c_contiguous and np.array_equal(got, a.T)
    rows, cols = rng.permutation(shape[1]), rng.permutation(shape[0])
    gathered = lazy.gather(0, rows).gather(1, cols)
    assert np.array_equal(np.concatenate(list(gathered.chunks(max_bytes=200))), a.T[rows][:, cols])
