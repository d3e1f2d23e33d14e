"""The ``realworld`` marker: the whole real-world harness (minutes to an hour) runs only when
asked for (``pytest -m realworld``); the default run deselects it and keeps the small sample.
Every test runs the originals afresh: the kept runs (bench/realworld/cache.py) go to a folder
of the session's own."""

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


@pytest.fixture(autouse=True, scope="session")
def _own_run_cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("RW_CACHE_DIR", str(tmp_path_factory.mktemp("rw_cache")))
    yield
    mp.undo()
