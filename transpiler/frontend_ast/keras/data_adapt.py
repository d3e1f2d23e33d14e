"""``adapt()`` inside a helper called on a model's tensors (issue 18, keras.io's
structured_data_classification_from_scratch).

A helper such as ``encode_numerical_feature(age, "age", train_ds)`` makes a preprocessing layer,
adapts it on data it derives from its arguments (``dataset.map(lambda x, y: x[name])``) and
calls it on the model's tensor. The layer call becomes part of the torch module; the data side
must still run, before the model is built, in the generated program. So the ``adapt()`` becomes
a runtime statement standing where the helper was called at module level, its data the helper's
expression rewritten to read module names only: each local followed back to the assignment
above it (``feature_ds = feature_ds.map(...)`` after ``feature_ds = dataset.map(...)``), each
parameter replaced by the caller's argument (``train_ds``, ``"age"``). A Normalization's
statistics and a StringLookup / IntegerLookup's vocabulary are then computed at run time
exactly as Keras computes them (runtime/torch/preprocessing.py), and a lookup's encoding
width, which sizes the layers after it, is a run-time size (``adapted_depth("string_lookup")``)
the generated module takes as a constructor argument. Anything that cannot be rewritten so
(a helper called from another function, a local bound in a loop or a branch) stays a stub.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.keras.runtime_sizes import (_bound_in_expression, _locals_of, _parameters_of,
                                                          _read_names, _Substitute)

#: runtime functions of the statements made here (printers/torch/data_utils.py PREAMBLE)
ADAPT_LOOKUP = "adapt_lookup"
ADAPT_NORMALIZATION = "adapt_normalization"
#: Keras' layer names of the lookup classes (their first instance; then ``_1``, ``_2``, ...)
_SNAKE = {"StringLookup": "string_lookup", "IntegerLookup": "integer_lookup"}


def in_helper_on_tensors(fe) -> bool:
    """The reader is inside a helper function called on a model's tensors."""
    return any(getattr(fe, "helper_tensor_args", ()))


def _refuse(what: str) -> None:
    raise Unsupported(f"{what}.adapt() inside a function called on the model's tensors: its data is not code "
                      "the program can compute where the function is called (a local bound in a loop or a "
                      "branch, or a function called from another function): not translated yet")


def _function_of(fe, node):
    functions = fe._functions_around(node)
    return functions[-1] if functions else None


def _call_site(fe, fn: cst.FunctionDef):
    """The one call of ``fn`` in the module-level statement the reader is running it for, or None."""
    stmts = getattr(fe, "helper_call_stmts", [])
    if len(stmts) != 1 or len(fe.scope_stack) != 1 or stmts[0] is None:
        return None
    calls = getattr(fe, "helper_call_nodes", [])
    call = calls[-1] if len(calls) == 1 else None
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name) or call.func.value != fn.name.value:
        return None
    return call


def _arguments(fn: cst.FunctionDef, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
    """``fn``'s parameters bound to the code of ``call``'s arguments (or their defaults)."""
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if fn.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or fn.params.star_kwarg is not None:
        return None
    bound: dict[str, cst.BaseExpression] = {}
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or len(positional) > len(params):
        return None
    for param, arg in zip(params, positional):
        bound[param.name.value] = arg.value
    for arg in call.args:
        if arg.keyword is not None:
            bound[arg.keyword.value] = arg.value
    for param in params + list(fn.params.kwonly_params):
        if param.name.value not in bound and param.default is not None:
            bound[param.name.value] = param.default
    return bound


def _line(fe, node) -> int | None:
    where = fe.positions.get(node)
    return where.start.line if where is not None else None


def _assignments(fn: cst.FunctionDef, name: str):
    """The plain ``name = value`` statements of ``fn``'s top level, or None when ``name`` is
    bound anywhere else too (a loop, a branch, an augmented assignment)."""
    from transpiler.frontend_ast.keras.runtime_sizes import _binding_count

    found = []
    for stmt in fn.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name:
                    found.append(small)
    return found if len(found) == _binding_count(fn, name) else None


def module_code(fe, node: cst.BaseExpression) -> str | None:
    """``node`` (an expression of the helper being run) as code of the module's top level at
    the statement calling the helper, or None."""
    fn = _function_of(fe, node)
    call = _call_site(fe, fn) if fn is not None else None
    arguments = _arguments(fn, call) if call is not None else None
    if arguments is None:
        return None
    line = _line(fe, node)
    code = _rewrite(fe, fn, node, line, arguments, 0)
    return None if code is None else cst.Module([]).code_for_node(code)


def _rewrite(fe, fn, node, line, arguments, depth):
    if depth > 16 or line is None:
        return None
    bound_inside = _bound_in_expression(node)
    replacements: dict[str, cst.BaseExpression] = {}
    params, local = _parameters_of(fn), _locals_of(fn)
    for name in {n.value for n in _read_names(node)} - bound_inside:
        if name in params:
            if name not in arguments:
                return None
            replacements[name] = arguments[name]
        elif name in local:
            assigns = _assignments(fn, name)
            above = [a for a in assigns or () if (_line(fe, a) or line) < line]
            if not above:
                return None
            code = _rewrite(fe, fn, above[-1].value, _line(fe, above[-1]), arguments, depth + 1)
            if code is None:
                return None
            replacements[name] = code
        elif name not in fe.globals.vars and name not in fe.BUILTINS:
            return None
    if not replacements:
        return node
    if isinstance(node, cst.Name):
        return replacements[node.value]
    return node.visit(_Substitute(replacements))


def record(fe, function: str, args: str, node) -> None:
    """A ``data_util`` statement calling the runtime's ``function(args)`` where the helper is
    called at module level (it stands there, before the model is built)."""
    from transpiler.frontend_ast.interp.core import code_of
    from transpiler.ir import training as T

    fe.program.training.append(T.TrainingStatement("data_util", "", (function, T.Code(args)), fe._span(node),
                                                   fe.helper_call_stmts[0], call=None, source=code_of(node)))


def _data_argument(node: cst.Call):
    positional = [a for a in node.args if a.keyword is None]
    if len(node.args) != 1:
        return None
    if positional:
        return positional[0].value
    return node.args[0].value if node.args[0].keyword.value == "data" else None


def record_normalization(fe, layer, node, axis) -> None:
    """``normalizer.adapt(data)`` of a Normalization made in the helper: adapted at run time
    where the helper is called."""
    data = _data_argument(node)
    code = module_code(fe, data) if data is not None else None
    if code is None:
        _refuse(layer.cls_name)
    layer.adapt_key = layer.keras_name
    fe.program.from_keras.adapted_layers.append(layer.keras_name)
    record(fe, ADAPT_NORMALIZATION, f"{layer.keras_name!r}, {code}, axis={tuple(axis)!r}", node)


def record_lookup(fe, layer, node) -> None:
    """``lookup.adapt(data)`` of a StringLookup / IntegerLookup (``layer``: the reader's value
    of it) made in the helper: the runtime's lookup of the same arguments adapted where the
    helper is called, under a name of its own (``layer.adapt_key``) that the model's module
    reads its vocabulary and width by."""
    data = _data_argument(node)
    code = module_code(fe, data) if data is not None else None
    if code is None or layer.made is None:
        _refuse(layer.cls_name)
    args, kwargs = layer.made
    if args:
        _refuse(layer.cls_name)
    for value in kwargs.values():
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise Unsupported(f"{layer.cls_name}.adapt() inside a function called on the model's tensors: an "
                              "argument of the layer is computed when the program runs: not translated yet")
    counts = fe.__dict__.setdefault("_lookup_names", {})
    base = _SNAKE[layer.cls_name]
    n = counts[base] = counts.get(base, -1) + 1
    key = base if n == 0 else f"{base}_{n}"
    layer.adapt_key = key
    fe.program.from_keras.adapted_layers.append(key)
    made = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    record(fe, ADAPT_LOOKUP, f"{key!r}, {layer.cls_name}({made}), {code}", node)


def depth_size(fe, key: str):
    """The run-time size of the adapted lookup ``key``'s encoding width."""
    from transpiler.frontend_ast.interp.values import Unknown

    source = cst.parse_expression(f"adapted_depth({key!r})")
    return fe._interned(Unknown("an adapted lookup's width", source=source), f"{key}_depth")
