"""Functions that compile the model they return, read at their call.

``def create_classifier(encoder, trainable=True): ... model.compile(...); return model``
called as ``classifier = create_classifier(encoder)`` (a function that takes a model is
read where it is called, not as a builder): Keras' ``classifier`` is compiled, so its
``fit``/``evaluate`` train with that optimizer and loss. The compile is read like a
builder's compile (``TrainingStatement.builder`` names the function): the printer puts the
optimizer and loss where the function's result lands, once per call, as Keras compiles
once per call. A compile that reads the function's own names (a parameter as the learning
rate) stays where it is (its fit is then a marked stub, as before).
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of


def _returned_names(fn: cst.FunctionDef) -> set[str]:
    """The plain names ``fn`` returns (``return model``), nested functions left out."""
    names = set()
    for node in nodes_of(fn.body, cst.Return):
        if isinstance(node.value, cst.Name):
            names.add(node.value.value)
    return names


def _local_names(fn: cst.FunctionDef) -> set[str]:
    """Names ``fn`` binds: its parameters and assignment, loop and with targets."""
    params = fn.params
    names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    targets = [t.target for t in nodes_of(fn.body, cst.AssignTarget)]
    for cls in (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.CompFor):
        targets += [n.target for n in nodes_of(fn.body, cls)]
    targets += [w.asname.name for w in nodes_of(fn.body, cst.WithItem) if w.asname is not None]
    for target in targets:
        names.update(n.value for n in nodes_of(target, cst.Name))
    return names


def mark_returned_compiles(program, module: cst.Module, span_of) -> None:
    """Give each compile statement inside a module-level function that returns the
    compiled model (and reads none of the function's own names besides it) the function's
    name as its ``builder``, and record which variables hold such a function's result
    (``program.from_keras.compiled_by``: variable -> function). ``span_of`` maps a CST node
    to its Span."""
    functions = []
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            span = span_of(stmt)
            functions.append((span.line, span.end_line or span.line, stmt))
    marked = set()
    for ts in program.training:
        if ts.kind != "compile" or ts.builder is not None or ts.span is None or not ts.source:
            continue
        bounds = next(((start, end, f) for start, end, f in functions if start <= ts.span.line <= end), None)
        fn = bounds[2] if bounds else None
        if fn is None or ts.model not in _returned_names(fn):
            continue
        if any(other.kind != "compile" and other.model == ts.model and other.span is not None
               and bounds[0] <= other.span.line <= bounds[1] for other in program.training):
            continue  # (the function trains it too, keras.io mobilevit's run_experiment: compiled there)
        try:
            call = cst.parse_expression(ts.source)
        except cst.ParserSyntaxError:
            continue
        read = {n.value for arg in call.args for n in nodes_of(arg.value, cst.Name)}
        if read & (_local_names(fn) - {ts.model}):
            continue
        ts.builder = fn.name.value
        marked.add(fn.name.value)
    compiled_by = program.from_keras.compiled_by
    for assign in nodes_of(module, cst.Assign):
        value = assign.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in marked \
                and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
            compiled_by[assign.targets[0].target.value] = value.func.value

