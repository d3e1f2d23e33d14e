"""torch.* functions the torch model reader understands, one handler per path in a registry
(``@torch_function("torch.cat", "torch.concat")``), as keras_tensor_ops registers Keras'.

A handler is ``fn(fe, path, args, kwargs, node, span)``; it may return ``PASS`` (its guard
does not hold) to leave the call to the prefix rules (``nn.X`` constructors, ``nn.init``,
``F.*``) and the fallback: any other ``torch.*`` is a reported stub, ``math.*`` runs on
static values, the rest is Unknown.
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst

from transpiler.frontend_ast.torch import const_arrays
from transpiler.frontend_ast.torch import params as torch_params
from transpiler.frontend_ast.interp import PASS, Unknown
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.values import (_FILLED_LIKE, _FUNCTION_ALIASES, _MERGE_FUNCTIONS, _TENSOR_MAKERS,
                                                  _UNARY_FUNCTIONS, Tensor, _Super, _tensor_values, _ZeroState,
                                                  torch_api)
from transpiler.ir.shapes import einsum_problem

TORCH_FUNCTIONS: dict[str, list[Callable]] = {}


def torch_function(*paths: str) -> Callable[[Callable], Callable]:
    def deco(fn: Callable) -> Callable:
        for path in paths:
            TORCH_FUNCTIONS.setdefault(path, []).append(fn)
        return fn
    return deco


def call_torch_function(fe: Any, path: str, args: list, kwargs: dict, node, span) -> Any:
    for fn in TORCH_FUNCTIONS.get(path, ()):
        value = fn(fe, path, args, kwargs, node, span)
        if value is not PASS:
            return value
    if path.startswith("torchvision.models."):  # (a torchvision network: its definition, zoo.py)
        from transpiler.frontend_ast.torch import zoo

        built = zoo.construct(fe, path, args, kwargs, node)
        if built is not None:
            return built
    api = torch_api(path)
    if api is not None and api.startswith("nn.") and "." not in api[3:]:
        return fe._construct(api[3:], args, kwargs, span)
    if path == "torch.nn.init.calculate_gain":  # (a number: the gain an init call is given)
        gain = torch_params._gain(*(list(args) + [kwargs.get("param")] * (2 - len(args)))[:2]) \
            if args and isinstance(args[0], str) else None
        if gain is None:
            raise Unsupported(f"nn.init.calculate_gain{tuple(args)}: not a nonlinearity torch names")
        return gain
    if path == "torch.nn.init" or path.startswith("torch.nn.init."):
        return fe._nn_init(path.rsplit(".", 1)[1], args, kwargs)
    if api is not None and api.startswith("F."):
        return fe._functional(api[2:], args, kwargs, span)
    root = path.split(".")[0]
    if root == "torch":
        raise Unsupported(f"{path} is not supported yet")
    if root == "math":
        import math

        fn = getattr(math, path.split(".", 1)[1], None)
        if fn is not None and not any(isinstance(a, (Unknown, Tensor)) for a in args):
            return fn(*args)
    return Unknown(path)


@torch_function("builtins.super")
def _super(fe, path, args, kwargs, node, span):
    from transpiler.frontend_ast.torch.module_inherit import super_of

    return super_of(fe, args)


@torch_function("builtins.print")
def _print(fe, path, args, kwargs, node, span):
    """``print(...)`` in a module's code (``print("number of parameters: ...")`` in a constructor):
    the Keras class is the module's layers and computation, it prints nothing; said, not dropped."""
    fe.program.warn(span, "print(...) in a module's code is not translated (the Keras model does not print)",
                    fe.source_line(span))
    return None


@torch_function("collections.OrderedDict")
def _ordered_dict(fe, path, args, kwargs, node, span):  # nn.Sequential(OrderedDict([(name, module), ...]))
    if any(isinstance(a, (Unknown, Tensor)) for a in list(args) + list(kwargs.values())):
        return Unknown("OrderedDict of an unknown value")
    return dict(*args, **kwargs)


@torch_function(*sorted(_TENSOR_MAKERS))
def _tensor_maker(fe, path, args, kwargs, node, span):
    if fe.graph is None:
        return torch_params.tensor_data(path, args, kwargs)
    if path == "torch.zeros" and set(kwargs) <= {"device", "dtype", "requires_grad"}:
        return _ZeroState()  # (an RNN's initial state; anything else refuses it)
    return PASS


def _first(*paths: str) -> Callable[[Callable], Callable]:
    """Like ``torch_function``, tried before the handlers registered so far."""
    def deco(fn: Callable) -> Callable:
        for path in paths:
            TORCH_FUNCTIONS.setdefault(path, []).insert(0, fn)
        return fn
    return deco


@_first("torch.arange", *(f"torch.{n}" for n in const_arrays.UNARY))
def _constant_array(fe, path, args, kwargs, node, span):
    """A constant computed in ``__init__`` (const_arrays.py): ``torch.arange``, ``torch.sin`` of one."""
    name = path.split(".")[1]
    if name == "arange":
        return const_arrays.arange(args, kwargs) if fe.graph is None else PASS
    arr = const_arrays.as_const(args[0]) if args else None
    return PASS if arr is None else const_arrays.unary(name, arr, args[1:], kwargs)


@torch_function("torch.nn.functional.linear")
def _linear(fe, path, args, kwargs, node, span):
    return fe._linear(args, kwargs, span)


@torch_function(*_FUNCTION_ALIASES)
def _function_alias(fe, path, args, kwargs, node, span):
    return fe._functional(_FUNCTION_ALIASES[path], args, kwargs, span)


@torch_function(*_MERGE_FUNCTIONS)
def _merge(fe, path, args, kwargs, node, span):
    return fe._add(_MERGE_FUNCTIONS[path], _tensor_values(path, args[:2]), {}, span, _MERGE_FUNCTIONS[path])


@torch_function("torch.cat", "torch.concat")
def _cat(fe, path, args, kwargs, node, span):
    tensors = args[0] if args else kwargs["tensors"]
    _tensor_values(path, tensors)
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    if dim == 0:
        raise Unsupported("torch.cat along the batch axis is not supported")
    return fe._add("concat", [t.value for t in tensors], {"axis": dim}, span, "concat")


@torch_function("torch.flatten", "torch.amax", "torch.mean", "torch.permute", "torch.transpose", "torch.reshape",
                "torch.squeeze", "torch.unsqueeze", "torch.sum", "torch.amin", "torch.clamp", "torch.clip",
                *(f"torch.{name}" for name in _UNARY_FUNCTIONS))
def _as_tensor_method(fe, path, args, kwargs, node, span):
    return fe._tensor_method(args[0], path.split(".")[1], args[1:], kwargs, node)


@torch_function("torch.max")
def _max(fe, path, args, kwargs, node, span):
    if len(args) + len(kwargs) >= 2:
        return fe._tensor_method(args[0], "max", args[1:], kwargs, node)
    return PASS


@torch_function("torch.chunk", "torch.split", "torch.norm", "torch.std", "torch.var")
def _method_of_first(fe, path, args, kwargs, node, span):
    return fe._tensor_method(args[0], path.split(".")[1], args[1:], kwargs, node) if args else PASS


_BINARY = {"torch.matmul": cst.MatrixMultiply, "torch.bmm": cst.MatrixMultiply, "torch.mm": cst.MatrixMultiply, "torch.pow": cst.Power,
           "torch.div": cst.Divide, "torch.true_divide": cst.Divide}


@torch_function(*_BINARY)
def _binary(fe, path, args, kwargs, node, span):
    given = list(args) if args or "input" not in kwargs else [kwargs["input"]]
    x, y = (given + [kwargs.get("other", kwargs.get("exponent", kwargs.get("mat2")))])[:2]
    if not isinstance(x, Tensor):
        raise Unsupported(f"{path}: the first argument is not a tensor")
    return fe._tensor_binop(_BINARY[path], x, y, node)


@torch_function("torch.randn_like")
def _randn_like(fe, path, args, kwargs, node, span):
    x = args[0] if args else kwargs.get("input")
    if not isinstance(x, Tensor) or set(kwargs) - {"input"}:
        raise Unsupported("torch.randn_like: only of a tensor, without dtype/device arguments")
    return fe._add("random_normal", [x.value], {"shape": tuple(x.value.shape[1:])}, span, "noise")


@torch_function("torch.where")
def _where(fe, path, args, kwargs, node, span):
    return fe._tensor_operands("where", args, span) if len(args) == 3 else PASS


@torch_function("torch.stack")
def _stack(fe, path, args, kwargs, node, span):
    tensors = args[0] if args else kwargs["tensors"]
    _tensor_values(path, tensors)
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    if dim % (len(tensors[0].value.shape) + 1) == 0:
        raise Unsupported("torch.stack along the batch axis is not supported")
    return fe._add("stack", [t.value for t in tensors], {"axis": dim}, span, "stack")


@torch_function(*_FILLED_LIKE)
def _filled_like(fe, path, args, kwargs, node, span):
    return fe._filled_like(path, list(args), dict(kwargs), span)


@torch_function("torch.einsum")
def _einsum(fe, path, args, kwargs, node, span):
    operands = list(args[1:2][0]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
    if kwargs or not args or not isinstance(args[0], str) or not operands or \
            not all(isinstance(t, Tensor) for t in operands):
        raise Unsupported("torch.einsum: give the equation and the operand tensors")
    problem = einsum_problem(args[0], [t.value.shape for t in operands])
    if problem:
        raise Unsupported(f"torch.einsum: {problem}")
    return fe._add("einsum", [t.value for t in operands], {"equation": args[0].replace(" ", "")}, span, "einsum")
