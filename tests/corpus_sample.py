"""The half of the Keras corpus the default run and CI take through the whole-program suites
that cost seconds a program (training 20 steps in both frameworks, running the generated
program): every other script in name order. ``pytest -m corpus_all`` runs the other half
(CI's budget is 20 minutes with the install)."""

import pytest


def sampled(params: list) -> list:
    """``params`` (pytest params or values, in corpus order) with every second one marked
    ``corpus_all``."""
    out = []
    for i, p in enumerate(params):
        if i % 2 == 0:
            out.append(p)
        elif isinstance(p, type(pytest.param(None))):
            out.append(pytest.param(*p.values, id=p.id, marks=[*p.marks, pytest.mark.corpus_all]))
        else:
            out.append(pytest.param(p, marks=pytest.mark.corpus_all))
    return out
