"""A builder function's arguments in the generated script: which are forwarded to the module,
which the model was specialised for (the guard's reasons), and defaults naming the source
framework (a part of printers/torch/script.py)."""

from __future__ import annotations

import libcst as cst

from transpiler.ir import sizes
from transpiler.cst_fast import nodes_of


def _builder_arguments(md, code) -> list[str]:
    """What the generated builder passes its module: its own parameters by name, a size the
    program computes at run time (read inside the builder from module names) as its code."""
    out = []
    for name in code.init_params:
        sym = sizes.symbol_of(md.builder_args[name])
        out.append(sym.arg if sym is not None and sym.kind == "runtime" and isinstance(sym.arg, str) else name)
    return out


def _without_framework_defaults(params: cst.Parameters, names: set[str]) -> cst.Parameters:
    """A builder's parameters with defaults that name the source framework (``keras=keras``,
    ``act=layers.ReLU``) set to None: the output imports no Keras, and the generated builder
    builds its module without them (it never reads such a parameter)."""
    def fix(param: cst.Param) -> cst.Param:
        if param.default is None:
            return param
        used = {n.value for n in nodes_of(param.default, cst.Name)}
        return param.with_changes(default=cst.Name("None")) if used & names else param

    return params.with_changes(params=[fix(p) for p in params.params],
                               kwonly_params=[fix(p) for p in params.kwonly_params],
                               posonly_params=[fix(p) for p in params.posonly_params])


def _plain(value):
    """A builder argument as the plain value it was (sizes as their numbers)."""
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return int.__int__(value) if isinstance(value, sizes.Size) else value


#: ir/sizes.py's reasons a size was used by its number, as the guard's stub says them
_SPECIALISED_BECAUSE = {"printed": "its number is printed in the module", "compared": "compared while building",
                        "range": "a loop count of the model's structure", "repetition": "a repetition count",
                        "arithmetic": "arithmetic a size expression cannot carry"}


def _specialised_because(value) -> str:
    """Why a builder argument is not a parameter of the generated module (the guard's reason)."""
    sym = sizes.symbol_of(value)
    if sym is not None and sym.specialised:
        return ", ".join(_SPECIALISED_BECAUSE.get(why, why) for why in sorted(sym.specialised))
    if isinstance(value, (bool, str)) or value is None:
        return f"a {type(value).__name__} choosing how the model is built"
    if isinstance(value, float):
        return "a float the layers are built with"
    if isinstance(value, (tuple, list, dict)):
        return f"a {type(value).__name__} the model is built from"
    return "the model is built with its number"


def _literal_or_none(value):
    from transpiler.printers.code import lit

    try:
        return lit(value)
    except TypeError:
        return None
