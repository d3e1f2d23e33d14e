"""A configuration object a module's constructor reads its sizes from (issue 19 item a).

``GPT(config)`` with ``nn.Linear(config.n_embd, 4 * config.n_embd)``; ``Encoder(config)``
over an argparse namespace: the constructor takes one object and reads its sizes as
attributes. Traced for a :class:`Fields` value, each attribute the trace reads becomes a
size named ``config.<attr>`` (``sizes.named``): its default when the parameter's annotation
names a config class of the file giving one (a dataclass field), else a placeholder number
(distinct primes, as ``lazy_inputs.PLACEHOLDERS`` are for plain parameters). The printed
Keras class then takes the same ``config`` and reads the same attributes (``config.n_embd``
in its ``__init__``); an attribute whose number the translation needed (a loop count, a
truth test) is specialised and the class refused, as a plain parameter's would be.

Imports no deep-learning framework.
"""

from __future__ import annotations

from typing import Any, Iterator

from transpiler.ir import sizes


def _primes(start: int) -> Iterator[int]:
    n = start
    while True:
        if n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1)):
            yield n
        n += 1


class Fields:
    """The object a constructor parameter ``name`` stands for: attribute → size (see the module doc).

    ``defaults``: the config class's field defaults (attribute → value; None for none);
    ``counted``: the attributes that count a repeated block (traced with ``counted_value``, small:
    frontend_ast/torch/repeated_blocks)."""

    def __init__(self, name: str, defaults: dict[str, Any] | None = None, first_placeholder: int = 163,
                 counted: set[str] = frozenset(), counted_value: int = 2):
        self.name = name
        self.counted, self.counted_value = set(counted), counted_value
        self.defaults = dict(defaults or {})
        self.values: dict[str, Any] = {}
        #: the attributes read as the config class's default (in reading order)
        self.from_default: list[str] = []
        self._placeholders = _primes(first_placeholder)

    def get(self, attr: str) -> Any:
        """``config.<attr>``: the default (a number as a size named ``config.<attr>``) or a
        placeholder size of that name."""
        if attr not in self.values:
            default = self.defaults.get(attr)
            value = default if default is not None else self.counted_value if attr in self.counted \
                else next(self._placeholders)
            self.values[attr] = sizes.named(value, f"{self.name}.{attr}", kind="placeholder" if default is None
                                            else "param")
            if default is not None:
                self.from_default.append(attr)
        return self.values[attr]

    def set(self, attr: str, value: Any) -> None:
        """``config.<attr> = value`` in the traced code."""
        self.values[attr] = value

    def symbols(self) -> list:
        """The named sizes of the attributes read so far."""
        return [s for s in (sizes.symbol_of(v) for v in self.values.values()) if s is not None]

    def placeholder_symbols(self) -> list:
        """The named sizes of the attributes read without a default (the caller's numbers)."""
        return [s for a, v in self.values.items() if a not in self.from_default
                for s in [sizes.symbol_of(v)] if s is not None]

    def guards(self) -> list[tuple[str, Any]]:
        """``(attribute, default)`` of the attributes the translation took as the config class
        gives them (a rate, a flag, a size whose number it used): the Keras class refuses a
        config with other values there."""
        found = []
        for attr in self.from_default:
            value = self.values[attr]
            sym = sizes.symbol_of(value)
            if sym is None or sym.specialised:
                found.append((attr, self.defaults[attr]))
        return found

    def __repr__(self) -> str:
        return f"Fields({self.name!r})"


def symbols_of(value: Any) -> list:
    """The source names a builder argument stands for: a size's one, a config object's per
    attribute read."""
    if isinstance(value, Fields):
        return value.symbols()
    sym = sizes.symbol_of(value)
    return [] if sym is None else [sym]


def free(value: Any) -> bool:
    """A builder argument the translated body takes as it is: sizes whose numbers it never used
    (a config object: every attribute it read)."""
    if isinstance(value, Fields):  # (a default it used by its number is guarded: Fields.guards)
        return not any(s.specialised for s in value.placeholder_symbols())
    sym = sizes.symbol_of(value)
    return sym is not None and not sym.specialised


def specialised(value: Any) -> list[str]:
    """What of ``value`` the translation used by its number (``config.n_layer: range``)."""
    if isinstance(value, Fields):
        return [f"{s.name} ({', '.join(sorted(s.specialised))})" for s in value.placeholder_symbols() if s.specialised]
    sym = sizes.symbol_of(value)
    return sorted(sym.specialised) if sym is not None else []


def guard_lines(name: str, value: Any) -> list[str]:
    """The lines of a Keras ``__init__`` refusing a config (parameter ``name``) whose
    attributes differ from the defaults the translation used (``Fields.guards``)."""
    if not isinstance(value, Fields) or not value.guards():
        return []
    pairs = value.guards()
    got = ", ".join(f"{name}.{a}" for a, _ in pairs)
    want = ", ".join(repr(v) for _, v in pairs)
    if len(pairs) > 1:
        got, want = f"({got})", f"({want})"
    shown = ", ".join(f"{a}={v!r}" for a, v in pairs)
    return [f"    if {got} != {want}:",
            f"        raise NotImplementedError({('transpiler: the model was translated for ' + shown + ' only')!r})"]
