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
