"""A model's own methods that forward does not call (``GPT.generate``) → functions of the model.

A torch model class often carries code that uses the model rather than being part of it: a
sampling loop (``generate``: crop the context, call ``self(idx)``, take the last step's
logits, top-k, softmax, ``torch.multinomial``, append with ``torch.cat``), an evaluation
helper. The Keras model is its layers and ``call``; such a method becomes a function of the
program, named after the class and the method (``gpt_generate(model, idx, ...)``), whose
first parameter is the model where torch's had ``self``.

The method is read as any function of the program the file never calls (its other
parameters' kinds guessed from their use, frontend_ast/torch/tensor_params.py), ``self`` being
the model: ``self(x)`` is a call of the Keras model, ``self.block_size`` an attribute of
the constructor's arguments (``model_attribute``). A method with any statement not
translated stays one marked stub (its first reason), as before: a function half translated
around stubs is no use.

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

#: decorators that make a method something else than a function of the instance
_NOT_PLAIN = frozenset({"staticmethod", "classmethod", "property", "abstractmethod"})


def plain_method(fn: cst.FunctionDef) -> bool:
    """``fn`` takes the instance first and is not a property, static or class method."""
    for dec in fn.decorators:
        d = dec.decorator
        name = d.attr.value if isinstance(d, cst.Attribute) else d.value if isinstance(d, cst.Name) else ""
        if name in _NOT_PLAIN or name in ("setter", "getter", "deleter"):
            return False
    return bool(fn.params.params) and not isinstance(fn.params.star_arg, cst.Param) and \
        fn.params.star_kwarg is None


def read_methods(reader) -> None:
    """Read the pending methods of every model (``graph.from_torch.method_functions``, recorded
    by the frontend): translated ones are printed as functions (``method_functions_read``),
    the others are stubs (``unread_methods``)."""
    for md in reader.program.models:
        pending = md.graph.from_torch.method_functions
        md.graph.from_torch.method_functions = []
        for name, params, span, message, fn in pending:
            _read_one(reader, md, name, params, span, message, fn)


def _read_one(reader, md, name: str, params: str, span, message: str, fn: cst.FunctionDef) -> None:
    from transpiler.cst_fast import walk
    from transpiler.frontend_ast.torch.reader_values import ModelV

    model = ModelV(md.builder or md.class_name, md, var=fn.params.params[0].name.value)
    reader.guessing += 1
    try:
        reader.read_function(fn, [model] + reader._guess_params(fn)[1:], {}, key=f"{md.class_name}.{name}")
    finally:
        reader.guessing -= 1
    inside = {reader.sid(n) for n in walk(fn)}
    failed = [ts for nid, ts in reader.facts.items() if nid in inside and ts.kind == "stub"]
    if not failed:
        md.graph.from_torch.method_functions_read.append((name, params, fn))
        return
    gone = {(ts.span, ts.config) for ts in failed}
    reader.program.diagnostics[:] = [d for d in reader.program.diagnostics if not (
        d.severity == "stub" and (d.span, d.message) in gone)]
    reason = min(failed, key=lambda ts: (ts.span.line, ts.span.col) if ts.span else (0, 0)).config
    message = f"{message} (read as a function of the model: {reason})"
    reader.program.stub(span, message, f"def {name}{cst.Module([]).code_for_node(fn.params).join('()')}")
    md.graph.from_torch.unread_methods.append((name, params, span, message))


#: expressions an attribute of the constructor's arguments may be (``config.block_size``, ``2 * n``)
_PLAIN = (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString, cst.BinaryOperation,
          cst.UnaryOperation)


def constructor_attribute(reader, model, name: str, node: cst.Attribute):
    """``self.block_size`` in a method read as a function of the model (or ``model.block_size``
    in the program), where ``__init__`` assigned it once from its parameters
    (``self.block_size = config.block_size``): the same expression of the arguments the Keras
    class keeps (``model.constructor_args["config"].block_size``: a class printed for its
    constructor's arguments, printers/keras/subclass.on_call_class). None when it is not such an
    attribute (a parameter rebound before the assignment, an expression of anything else)."""
    from transpiler.cst_fast import nodes_of

    md = model.md
    graph = md.graph if md is not None else None
    if graph is None or md.builder or not graph.from_torch.lazy_class or graph.from_torch.own_step or \
            graph.from_torch.composed:
        return None
    cls = next((s for s in reader.fe.module.body if isinstance(s, cst.ClassDef) and s.name.value == md.class_name),
               None)
    init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
                None) if cls is not None else None
    if init is None or not init.params.params:
        return None
    this = init.params.params[0].name.value
    params = {p.name.value for p in init.params.params[1:] + init.params.kwonly_params}
    found, rebound = None, set()
    for stmt in init.body.body:
        for assign in nodes_of(stmt, cst.Assign) if not isinstance(stmt, cst.SimpleStatementLine) else \
                [s for s in stmt.body if isinstance(s, cst.Assign)]:
            for target in assign.targets:
                t = target.target
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == this and \
                        t.attr.value == name:
                    if found is not None or not isinstance(stmt, cst.SimpleStatementLine):
                        return None  # (assigned twice, or under a condition)
                    found = (assign.value, set(rebound))
        rebound |= {n.value for a in nodes_of(stmt, cst.AssignTarget) for n in _bound_names(a.target)}
    if found is None:
        return None
    expr, before = found
    if any(isinstance(n, cst.BaseExpression) and not isinstance(n, _PLAIN) for n in _all_nodes(expr)):
        return None
    heads = [n for n in _heads(expr)]
    if not heads or any(h.value not in params or h.value in before for h in heads):
        return None
    class Args(cst.CSTTransformer):
        def leave_Name(self, original, updated):
            if any(original is h for h in heads):
                return cst.Name(f"__ARG_{original.value}__")
            return updated

    text = cst.Module([]).code_for_node(expr.visit(Args())).replace("{", "{{").replace("}", "}}")
    for p in params:
        text = text.replace(f"__ARG_{p}__", "{0}.constructor_args[" + repr(p) + "]")
    reader.runtime_expr(node, text, [node.value], [])
    from transpiler.frontend_ast.torch.reader_values import OTHER

    return OTHER


def _bound_names(target) -> list[cst.Name]:
    """The names an assignment target binds (``a``, ``a, b``; not ``self.a`` nor ``x[i]``)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _bound_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return []


def _all_nodes(expr) -> list:
    from transpiler.cst_fast import walk

    return list(walk(expr))


def _heads(expr) -> list[cst.Name]:
    """The names an expression reads from (``config`` in ``config.block_size * 2``), not
    attribute names."""
    out: list[cst.Name] = []

    def visit(n):
        if isinstance(n, cst.Name):
            out.append(n)
        elif isinstance(n, cst.Attribute):
            visit(n.value)
        elif isinstance(n, cst.BinaryOperation):
            visit(n.left)
            visit(n.right)
        elif isinstance(n, cst.UnaryOperation):
            visit(n.expression)

    visit(expr)
    return out
