"""The guard of a PyTorch builder whose model is specialised for its arguments.

The generated module takes the builder's size parameters under the user's names (sizes with
provenance, ir/sizes.py); an argument the model was built with otherwise (a float, a string
choosing a branch, a size used by its number: a loop count, a comparison) is not a parameter.
The builder then holds the model for the arguments it was read with: it says so in a marked
comment with the reason, the translation reports it as a warning, and a call with other
arguments raises ``NotImplementedError`` instead of building another model silently.
"""

from __future__ import annotations

import re

from transpiler.ir import sizes
from transpiler.ir.graph import Span
from transpiler.ir.program import ModelDef, Program
from transpiler.printers.code import comment_text, lit

#: ir/sizes.py's reasons a size was used by its number, as the guard says them
_SPECIALISED_BECAUSE = {"printed": "its number is printed in the module", "compared": "compared while building",
                        "range": "a loop count of the model's structure", "repetition": "a repetition count",
                        "arithmetic": "arithmetic a size expression cannot carry"}


def specialised_because(value) -> str:
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


def _plain(value):
    """A builder argument as the plain value it was (sizes as their numbers)."""
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return int.__int__(value) if isinstance(value, sizes.Size) else value


def _literal_or_none(value):
    try:
        return lit(value)
    except TypeError:
        return None


def guard_lines(program: Program, md: ModelDef, builder: str, span: Span | None, source_text: str) -> list[str]:
    """The builder body's first lines refusing other arguments than those ``md`` was built for
    (none when every argument is a parameter of the module), reported in ``program``; only
    names ``source_text`` holds are guarded (a size the builder computes is passed as its code)."""
    # the parameters the module takes are forwarded; any other the model was specialised for
    # (a float, a loop count, a size printed as its number) is guarded (a size parameter the
    # module never needed, a sequence length, is accepted as it is)
    free = [n for n, v in md.builder_args.items()
            if sizes.symbol_of(v) is not None and not sizes.symbol_of(v).specialised]
    guarded = {n: v for n, v in md.builder_args.items() if n not in free and  # (a name of the source:
               re.search(rf"\b{n}\b", source_text)}  # not a size computed in the builder, a new name)
    if not guarded:
        return []
    names = list(guarded)
    got = ", ".join(names) + ("," if len(names) == 1 else "")
    want = _literal_or_none(tuple(_plain(guarded[n]) for n in names))
    if want is None:
        return []
    shown = ", ".join(f"{n}={_literal_or_none(_plain(guarded[n]))}" for n in names)
    why = "; ".join(f"{n}: {specialised_because(guarded[n])}" for n in names)
    message = f"{md.class_name} is translated for {builder}({shown}) only ({why})"
    program.warn(span, message + "; other arguments raise NotImplementedError", f"def {builder}(...)")
    return ["    " + comment_text(f"# TODO(transpiler): {message}"),
            f"    if ({got}) != {want}:",
            "        raise NotImplementedError(",
            f"            {(md.class_name + ' is translated for ' + builder + '(' + shown + ') only')!r}",
            "        )"]
