"""Statistics a layer holds for some axes of its input (Keras' Normalization mean and
variance), placed for broadcasting: shared by the printers that compute with them."""

from __future__ import annotations

from typing import Any


def keras_stat(values: Any, src_view: tuple, kept: list) -> Any:
    """A given mean/variance (a numpy array) aligned to the kept axes from the right, as Keras
    does: reshaped to the rank of ``src_view`` with size 1 on every other axis."""
    if values.ndim == 0:
        return values
    shape = [1] * len(src_view)
    for i in range(1, values.ndim + 1):
        shape[kept[-i]] = values.shape[-i]
    return values.reshape(shape)
