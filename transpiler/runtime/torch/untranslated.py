"""The value of a name a module-level stub did not bind, for generated PyTorch programs.

A statement the transpiler could not translate at module level is printed as a comment (so
importing the program stays harmless); the names it would have bound are bound to an
``Untranslated`` that raises ``NotImplementedError`` (naming the stub's line) at its first use:
the program stops at the stub with its message, not one line later on a wrong value.
"""

_UNTRANSLATED_USES = (
    "getattr", "setattr", "delattr", "call", "getitem", "setitem", "delitem", "iter", "len", "contains",
    "bool", "int", "float", "index", "complex", "str", "repr", "format", "hash", "eq", "ne", "lt", "le",
    "gt", "ge", "add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv",
    "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "neg", "pos", "abs", "invert", "and",
    "rand", "or", "ror", "xor", "rxor", "enter", "exit", "array", "fspath")


def _untranslated_raise(self, *args, **kwargs):
    raise NotImplementedError(object.__getattribute__(self, "_message"))


def _raising_on_use(cls):
    for use in _UNTRANSLATED_USES:
        setattr(cls, f"__{use}__", _untranslated_raise)
    return cls


@_raising_on_use
class Untranslated:
    """Any use (attribute, call, index, iteration, arithmetic, conversion, printing) raises."""

    __slots__ = ("_message",)

    def __init__(self, message):
        object.__setattr__(self, "_message", message)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        values = [*args, *(kwargs or {}).values()]
        for value in values:
            if isinstance(value, (list, tuple)):
                values += value  # torch.stack([...]): the untranslated value among the tensors
            elif isinstance(value, Untranslated):
                _untranslated_raise(value)
        raise NotImplementedError("transpiler: a value an untranslated statement did not compute")
