"""The ``realworld`` marker: the whole real-world harness (minutes to an hour) runs only when
asked for (``pytest -m realworld``); the default run deselects it and keeps the small sample."""

import pytest


def pytest_collection_modifyitems(config, items):
    if "realworld" in (config.getoption("-m") or ""):
        return
    keep, drop = [], []
    for item in items:
        (drop if item.get_closest_marker("realworld") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
