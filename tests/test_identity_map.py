"""transpiler/ir/identity.py: a map keyed by identity never answers for a freed object's
successor at the same address (the Keras reader's ``dict[id(obj)]`` tables did: a statement of
another model, or another model's definition, was found for a new object, so a translation
changed with what the process had allocated before: a flaky test_training_helpers in CI)."""

from __future__ import annotations

import gc

from transpiler.ir.identity import IdentityMap


class _Obj:
    pass


def _successor_at_the_same_address(address: int) -> _Obj | None:
    made = []
    for _ in range(10_000):
        obj = _Obj()
        if id(obj) == address:
            return obj
        made.append(obj)
    return None


def test_a_freed_keys_address_reused_is_not_a_hit():
    table: IdentityMap[str] = IdentityMap()
    first = _Obj()
    address = id(first)
    table[first] = "first"
    del first
    gc.collect()
    # the map keeps its key alive, so the address is never handed to another object while
    # the entry exists; a dict keyed by id() loses its key and answers for the successor
    successor = _successor_at_the_same_address(address)
    assert successor is None or table.get(successor) is None
    other = _Obj()
    assert table.get(other) is None and other not in table
    assert list(table.values()) == ["first"] and len(table) == 1


def test_a_plain_id_table_is_fooled_by_address_reuse():
    """Why the map exists: CPython hands a freed object's address to the next one."""
    plain: dict[int, str] = {}
    first = _Obj()
    address = id(first)
    plain[address] = "first"
    del first
    successor = _successor_at_the_same_address(address)
    assert successor is not None and plain.get(id(successor)) == "first"


def test_lookup_by_identity_not_equality():
    table: IdentityMap[int] = IdentityMap()
    a, b = [1], [1]  # equal, unhashable
    table[a] = 1
    assert table.get(a) == 1 and table.get(b) is None and b not in table
    table[b] = 2
    assert table[a] == 1 and table[b] == 2 and sorted(table.values()) == [1, 2]
