"""``try``/``except`` and ``raise`` in the code the torch reader runs
(frontend_ast/torch/try_statements.py; word_language_model's ``RNNModel`` picks its
nonlinearity in a ``try: {...}[rnn_type] except KeyError as e: raise ValueError(...)``).

Before: every class with a ``try`` statement was a stub "Try statements are not supported
here". Now the body runs, a clause naming what the program's code raised runs instead, and
a ``raise`` reached is the stub's reason; the reader's own refusals are never caught."""

from __future__ import annotations

import torch  # noqa: F401  (torch before Keras in one process)

from torch_keras_harness import check_torch_source
from transpiler.translate import translate

SRC = '''import torch
import torch.nn as nn

INPUT_SHAPE = (6,)


class Picked(nn.Module):
    def __init__(self, kind="relu", width=5):
        super().__init__()
        try:
            act = {"relu": nn.ReLU(), "gelu": nn.GELU()}[kind]
        except KeyError as e:
            raise ValueError("unknown kind") from e
        try:
            extra = {"gelu": nn.GELU()}[kind]
        except (KeyError, IndexError):
            extra = nn.Identity()
        else:
            extra = nn.Sigmoid()
        finally:
            self.fc = nn.Linear(6, width)
        self.act = act
        self.extra = extra

    def forward(self, x):
        return self.extra(self.act(self.fc(x)))


def build_model():
    return Picked(KIND)
'''


def test_a_try_runs_its_body_else_the_clause_naming_what_the_program_raised():
    # relu: the second lookup fails (its except clause: Identity); gelu: it does not (else: Sigmoid)
    for kind, last in (("relu", None), ("gelu", "sigmoid")):
        err, n_t, n_k, tr = check_torch_source(SRC.replace("KIND", repr(kind)))
        assert err <= 1e-5 and n_t == n_k, (kind, err)
        assert not tr.stubs, [str(d) for d in tr.stubs]
        assert kind in tr.text.lower()
        assert (last in tr.text.lower()) if last else "sigmoid" not in tr.text.lower()


def test_a_raise_reached_is_the_stubs_reason():
    tr = translate(SRC.replace("KIND", "'swish'"), "model.py", "keras")
    messages = [d.message for d in tr.stubs]
    assert any("raises ValueError (unknown kind)" in m for m in messages), messages


def test_a_try_never_hides_a_construct_the_reader_refuses():
    """``except Exception:`` around a layer the translation does not follow: still a stub
    naming that layer, never the fallback silently."""
    src = SRC.replace('act = {"relu": nn.ReLU(), "gelu": nn.GELU()}[kind]',
                      'act = nn.LPPool1d(2, 3)').replace("except KeyError as e:", "except Exception as e:")
    tr = translate(src.replace("KIND", "'relu'"), "model.py", "keras")
    messages = [d.message for d in tr.stubs]
    assert any("LPPool1d" in m for m in messages), messages
