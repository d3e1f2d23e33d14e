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


def argument_values(params: dict) -> set:
    """The default coverage items of a case: its (argument name, value) pairs."""
    return {(name, repr(v)) for name, v in params.items()}


def option_names(params: dict) -> set:
    """Coverage items of a case whose arguments are a kind and a dict of options (an optimizer
    and its hyperparameters): every non-dict value, and the NAME of every option together with
    the case's other values (``("sgd", {"momentum": 0.9})`` covers SGD's "momentum", whatever
    its value): each option of each kind stays in the sample once."""
    plain = tuple(sorted((name, repr(v)) for name, v in params.items() if not isinstance(v, dict)))
    items = set(plain)
    for name, v in params.items():
        if isinstance(v, dict):
            items |= {(plain, name, option) for option in v}
    return items


def each_value(cases: list, key=argument_values) -> set[int]:
    """The indices of a deterministic subset of ``cases`` (the parametrised cases of one test
    function, each a dict of argument name -> value, in collection order) in which every value
    of every argument appears at least once: the case covering the most values not covered yet,
    first in collection order on a tie, until every value is covered. A matrix of options
    a x b x c keeps about max(a, b, c) cases instead of a * b * c, and no option value leaves
    the default run. ``key``: a case's coverage items (``option_names``: an option's name
    rather than its value)."""
    values = [set(key(case)) for case in cases]
    missing = set().union(*values) if values else set()
    kept: set[int] = set()
    while missing:
        best = max(range(len(cases)), key=lambda i: (len(values[i] & missing), -i))
        kept.add(best)
        missing -= values[best]
    return kept or {0}


def sample_each_value(items: list) -> None:
    """Marks the cases of every test function carrying ``@pytest.mark.each_value(MARKER)``
    (directly or through the module's ``pytestmark``; ``key=`` as for ``each_value``) that
    ``each_value`` leaves out with ``MARKER``: the default run takes every option value once,
    ``pytest -m MARKER`` the rest. Cases already marked ``MARKER`` stay out of the sample."""
    groups: dict = {}
    for item in items:
        mark = item.get_closest_marker("each_value")
        if mark is not None and hasattr(item, "callspec") and not item.get_closest_marker(mark.args[0]):
            name = (item.module.__name__, item.originalname)
            groups.setdefault(name, (mark.args[0], mark.kwargs.get("key", argument_values), []))[2].append(item)
    for marker, key, group in groups.values():
        kept = each_value([item.callspec.params for item in group], key)
        for i, item in enumerate(group):
            if i not in kept:
                item.add_marker(getattr(pytest.mark, marker))
