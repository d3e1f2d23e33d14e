"""``try``/``except`` and ``raise`` in the code the torch reader runs (a module's ``__init__``,
its ``forward``, the helpers they call).

``try:`` runs its body; an exception the *program's* code raises there (a ``KeyError`` of
``{'RNN_TANH': 'tanh'}[rnn_type]``, an ``IndexError``) that one of the ``except`` clauses
names (builtin exception classes, a tuple of them, a bare ``except:``) runs that clause,
the exception bound as an unknown value; ``else:`` and ``finally:`` run as Python runs them.
What the reader itself cannot translate (``Unsupported``, ``FrontendError``) is never caught:
a ``try`` never hides a construct the translation does not follow.

``raise X(...)`` reached while the reader runs the code means the module, built for these
arguments, raises in torch too: nothing to translate, and the reason names the exception
(word_language_model's ``RNNModel`` raises ``ValueError`` for an ``rnn_type`` it does not
know; the reader gave it a number).

Imports no deep-learning framework.
"""

from __future__ import annotations

import builtins

import libcst as cst

from transpiler.frontend_ast.interp import Return, Unknown
from transpiler.frontend_ast.keras.frontend import FrontendError
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.values import _Return

#: what a ``try`` never catches: the reader's own refusals and control flow
_NEVER = (Unsupported, FrontendError, Return, _Return, RecursionError)


def _classes(node) -> tuple | None:
    """The builtin exception classes an ``except`` clause names; None for a name that is not one."""
    if node is None:
        return (Exception,)
    items = [e.value for e in node.elements] if isinstance(node, cst.Tuple) else [node]
    found = []
    for item in items:
        cls = getattr(builtins, item.value, None) if isinstance(item, cst.Name) else None
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return None
        found.append(cls)
    return tuple(found)


def exec_try(fe, stmt: cst.Try, env) -> None:
    """Run ``stmt`` (see the module doc) with ``fe``'s block runner."""
    try:
        try:
            fe._exec_block(stmt.body.body, env)
        except _NEVER:
            raise
        except Exception as exc:  # noqa: BLE001 - (the program's own exception: its clauses decide)
            for handler in stmt.handlers:
                classes = _classes(handler.type)
                if classes is None:
                    raise Unsupported(f"except {cst.Module([]).code_for_node(handler.type)}: only builtin "
                                      "exception classes are followed") from None
                if isinstance(exc, classes):
                    if handler.name is not None and isinstance(handler.name.name, cst.Name):
                        env.vars[handler.name.name.value] = Unknown(f"the caught {type(exc).__name__}")
                    fe._exec_block(handler.body.body, env)
                    break
            else:
                raise
        else:
            if stmt.orelse is not None:
                fe._exec_block(stmt.orelse.body.body, env)
    finally:
        if stmt.finalbody is not None:
            fe._exec_block(stmt.finalbody.body.body, env)


def raised(stmt: cst.Raise) -> Unsupported:
    """``raise X(...)`` reached: the refusal naming the exception and its message."""
    exc = stmt.exc
    what = "raise" if exc is None else cst.Module([]).code_for_node(exc.func if isinstance(exc, cst.Call) else exc)
    message = ""
    if isinstance(exc, cst.Call) and exc.args and isinstance(exc.args[0].value, (cst.SimpleString,
                                                                                  cst.ConcatenatedString)):
        text = exc.args[0].value.evaluated_value
        message = " ".join(str(text).split())
        message = f" ({message[:80]}{'...' if len(message) > 80 else ''})"
    return Unsupported(f"built for these arguments it raises {what}{message}, as torch would")
