"""The header of a function kept in the Keras output: ``def f(data: Dataset) -> DataLoader:``.

Python evaluates a def's annotations, defaults and decorators when the def runs, so one naming
a PyTorch binding the output no longer imports fails when the script starts (a NameError, with
no stub). An annotation only documents: it goes, with a note. A default or decorator naming
torch is code: the printer's safety net makes the function a marked stub (``header_probe``).
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import references


def names_in(node: cst.CSTNode | None, names: set[str]) -> set[str]:
    """The bindings of ``names`` that ``node`` refers to: attribute names (``x.torch``) and
    keyword names (``f(torch=1)``) name no binding."""
    return set() if node is None else {n.value for n in references(node) if n.value in names}


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    star = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return [*params.posonly_params, *params.params, *star, *params.kwonly_params]


def strip_torch_annotations(fn: cst.FunctionDef, names: set[str]) -> tuple[cst.FunctionDef, set[str]]:
    """``fn`` without the annotations that name ``names`` (torch bindings), and those names."""
    dropped: set[str] = set()

    def plain(p):
        if not isinstance(p, cst.Param) or p.annotation is None:
            return p
        used = names_in(p.annotation.annotation, names)
        dropped.update(used)
        return p.with_changes(annotation=None) if used else p

    params = fn.params
    params = params.with_changes(
        posonly_params=[plain(p) for p in params.posonly_params], params=[plain(p) for p in params.params],
        kwonly_params=[plain(p) for p in params.kwonly_params], star_arg=plain(params.star_arg),
        star_kwarg=plain(params.star_kwarg))
    returns = fn.returns
    if returns is not None and names_in(returns.annotation, names):
        dropped |= names_in(returns.annotation, names)
        returns = None
    if not dropped:
        return fn, dropped
    return fn.with_changes(params=params, returns=returns), dropped


def header_probe(fn: cst.FunctionDef) -> cst.Tuple:
    """What of ``fn``'s header runs when the def runs: its defaults and decorators."""
    parts = [p.default for p in _all_params(fn.params) if p.default is not None]
    parts += [d.decorator for d in fn.decorators]
    return cst.Tuple([cst.Element(p) for p in parts])
