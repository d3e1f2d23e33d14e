"""Differential fuzzing: random valid Keras programs, transpiled and run against Keras.

hypothesis draws Keras scripts (``fuzz_strategies.keras_programs``: a ``build_model()``
over ``keras.Input`` + the Functional API -- chains and DAGs over the ops of
``docs/ops.md``, random attributes, small random input sizes, shapes tracked so every
program is valid Keras). For each one the transpiler must either

- refuse explicitly: raise ``FrontendError`` or report a 'stub' diagnostic (and then
  not translate the builder), which is required for the constructs it documents as
  refused; or
- produce a module equal to the Keras model: random Keras weights mapped in with
  ``load_state_dict(strict=True)``, every output compared, max abs error <= 1e-4,
  the same parameter count (``harness.check_source``, as for the corpus).

Anything else -- a wrong number, a missing output, an exception from the transpiler,
the generated module or the weight mapping -- fails and hypothesis shrinks it to a
minimal program (printed as source). Each failure found is kept as a named test with
the literal source in ``tests/test_fuzz_regressions.py``.

The default run and CI draw 40 examples, deterministically (``derandomize=True``, no
example database); ``-m fuzz`` draws 200 (about a minute on one core, measured 49-57 s;
tests/conftest.py sets the count). A longer run, deterministic too (5000 examples: 38 min,
passing):

    TRANSPILER_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest -m fuzz tests/test_fuzz.py

``TRANSPILER_FUZZ_SEED=<int>`` draws another (reproducible) sequence of programs.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, event, given, seed, settings

from fuzz_strategies import assert_faithful, keras_programs

EXAMPLES = int(os.environ.get("TRANSPILER_FUZZ_EXAMPLES", "40"))  # (200 under -m fuzz: conftest.py)
SEED = os.environ.get("TRANSPILER_FUZZ_SEED")

pytestmark = pytest.mark.fuzz


def _seeded(test):
    return seed(int(SEED))(test) if SEED is not None else test


@_seeded
@settings(max_examples=EXAMPLES, deadline=None, derandomize=SEED is None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(program=keras_programs())
def test_fuzz_keras_program_translates_faithfully(program):
    outcome = assert_faithful(program.source, outputs=program.outputs, refused=program.refused)
    # (--hypothesis-show-statistics: how many programs were compared, refused as expected,
    # or refused although they hold no documented-refused construct)
    event(outcome if outcome == "equal" or program.refused else "refused (unexpected)")
