"""The sample of the corpora the default run and CI take through the whole-program suites
that cost seconds a program (training 20 steps in both frameworks, running the generated
program, round trips, checkpoint conversions): every other script in name order, every
fourth for the costliest suites. ``pytest -m corpus_all`` runs the rest
(CI's budget is 20 minutes with the install)."""

import pytest


def sampled(params: list, every: int = 2) -> list:
    """``params`` (pytest params or values, in corpus order) with all but every ``every``-th
    one marked ``corpus_all`` (every=4 for the suites that cost the most per case)."""
    out = []
    for i, p in enumerate(params):
        if i % every == 0:
            out.append(p)
        elif isinstance(p, type(pytest.param(None))):
            out.append(pytest.param(*p.values, id=p.id, marks=[*p.marks, pytest.mark.corpus_all]))
        else:
            out.append(pytest.param(p, marks=pytest.mark.corpus_all))
    return out


def each_value(cases: list) -> set[int]:
    """The indices of a deterministic subset of ``cases`` (the parametrised cases of one test
    function, each a dict of argument name -> value, in collection order) in which every value
    of every argument appears at least once: the case covering the most values not covered yet,
    first in collection order on a tie, until every value is covered. A matrix of options
    a x b x c keeps about max(a, b, c) cases instead of a * b * c, and no option value leaves
    the default run."""
    values = [{(name, repr(v)) for name, v in case.items()} for case in cases]
    missing = set().union(*values) if values else set()
    kept: set[int] = set()
    while missing:
        best = max(range(len(cases)), key=lambda i: (len(values[i] & missing), -i))
        kept.add(best)
        missing -= values[best]
    return kept or {0}


def sample_each_value(items: list) -> None:
    """Marks the cases of every test function carrying ``@pytest.mark.each_value(MARKER)``
    (directly or through the module's ``pytestmark``) that ``each_value`` leaves out with
    ``MARKER``: the default run takes every option value once, ``pytest -m MARKER`` the rest."""
    groups: dict = {}
    for item in items:
        mark = item.get_closest_marker("each_value")
        if mark is not None and hasattr(item, "callspec"):
            key = (item.module.__name__, item.originalname)
            groups.setdefault(key, (mark.args[0], []))[1].append(item)
    for marker, group in groups.values():
        kept = each_value([item.callspec.params for item in group])
        for i, item in enumerate(group):
            if i not in kept:
                item.add_marker(getattr(pytest.mark, marker))
