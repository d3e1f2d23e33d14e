"""A module imported on first attribute access (keeps the translation path's start-up short)."""

from __future__ import annotations

import importlib
from typing import Any


class _LazyModule:
    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


def lazy_module(name: str) -> Any:
    """``name``, imported when first used."""
    return _LazyModule(name)
