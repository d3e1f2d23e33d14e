"""A mapping keyed by object identity that cannot confuse two objects.

``dict[id(obj)] = value`` goes wrong once ``obj`` is freed: CPython hands its address to the
next object allocated, which then finds the first one's entry. Which object inherits an
address depends on everything the process allocated before, so the bug shows up as output
that changes from run to run (a model's statement set, the model a training call belongs to).
``IdentityMap`` keeps every key alive and answers only for the very object that was stored.
"""

from __future__ import annotations

from typing import Any, Generic, Iterator, TypeVar

V = TypeVar("V")


class IdentityMap(Generic[V]):
    """``obj → value`` by ``obj``'s identity (not equality; unhashable keys are fine)."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[int, tuple[Any, V]] = {}

    def __setitem__(self, key: Any, value: V) -> None:
        self._items[id(key)] = (key, value)  # (the key kept: its id() stays its own)

    def __getitem__(self, key: Any) -> V:
        hit = self._items.get(id(key))
        if hit is None or hit[0] is not key:
            raise KeyError(key)
        return hit[1]

    def get(self, key: Any, default: Any = None) -> Any:
        hit = self._items.get(id(key))
        return hit[1] if hit is not None and hit[0] is key else default

    def __contains__(self, key: Any) -> bool:
        hit = self._items.get(id(key))
        return hit is not None and hit[0] is key

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> Iterator[Any]:
        return (k for k, _ in self._items.values())

    def values(self) -> Iterator[V]:
        return (v for _, v in self._items.values())
