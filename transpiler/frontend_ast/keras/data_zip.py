"""``tf.data.Dataset.zip((a, b))`` of batched datasets (Keras -> PyTorch).

keras.io's MixUp and CutMix examples zip two shuffled, batched pipelines of the same arrays
and map a function over the pairs of batches (``train_ds.map(lambda one, two: mix_up(one,
two))``). Each zipped dataset is a name bound to a loader in the output (a tf.data pipeline
of arrays with ``.batch(n)``, or a loader utility's dataset), so the zip is a ``data_util``
statement (``zip_loaders``: the names, in order) that the printer makes a ``ZippedLoader``
of; its result is a loader again (``.map(fn)`` on it is the loader utilities' ``map_batches``).
Anything else (an unbatched dataset, a pipeline written inline, a nested zip) stays a stub.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.interp.core import code_of
from transpiler.frontend_ast.interp.values import Unknown
from transpiler.frontend_ast.keras import data_utils


def _zipped_names(fe, values, node) -> list[str] | None:
    """The names of the zipped datasets when each is a name bound to a batched loader of this
    scope, else None."""
    from transpiler.frontend_ast.keras.values import DatasetObj

    positional = [a for a in node.args if a.keyword is None]
    keywords = [a for a in node.args if a.keyword is not None and a.keyword.value != "datasets"]
    given = positional[0].value if positional else next(
        (a.value for a in node.args if a.keyword is not None and a.keyword.value == "datasets"), None)
    if keywords or len(positional) > 1 or not isinstance(given, (cst.Tuple, cst.List)):
        return None
    if not isinstance(values, (tuple, list)) or len(values) != len(given.elements) or len(values) < 2:
        return None
    names = []
    for element, value in zip(given.elements, values):
        if not isinstance(element.value, cst.Name):
            return None
        name = element.value.value
        if isinstance(value, DatasetObj):
            if value.batch is None or value.scope != tuple(fe.scope_stack) or value.returned:
                return None
        elif isinstance(value, data_utils.BatchesVal):
            if value.statement is None or name not in value.statement.model.split(","):
                return None
        else:
            return None
        names.append(name)
    return names


def zip_datasets(fe, func, args, kwargs, node, span):
    """``tf.data.Dataset.zip((a, b, ...))``: a ``zip_loaders`` statement and its loader, or an
    Unknown (the statement stays a stub) for datasets that are no named batched loaders."""
    from transpiler.ir import training as T

    values = args[0] if args else kwargs.get("datasets")
    names = _zipped_names(fe, values, node)
    if names is None:
        fe._mark_keras()
        return Unknown("tf.data.Dataset.zip()")
    stmt = fe.stmt_stack[-1] if fe.stmt_stack else None
    ts = T.TrainingStatement("data_util", data_utils.unpacked_names(fe._current_stmt(), node) or "",
                             ("zip_loaders", T.Code(", ".join(names))), span, stmt,
                             call=fe.source_file.sid(node), source=code_of(node))
    fe.program.training.append(ts)
    return data_utils.BatchesVal("tf.data.Dataset.zip()", statement=ts)
