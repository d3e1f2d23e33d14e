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


def _of_columns(code: str) -> bool:
    """``from_tensor_slices`` of a dict of columns (or a (dict, labels) pair): another runtime
    class (printers/torch/dataset_features.py), not zipped here."""
    try:
        expr = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return True
    first = expr.elements[0].value if isinstance(expr, cst.Tuple) and expr.elements else expr
    return isinstance(first, (cst.Dict, cst.DictComp)) or isinstance(first, cst.Call) and \
        isinstance(first.func, cst.Name) and first.func.value == "dict"


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
            if value.scope != tuple(fe.scope_stack) or value.returned or _of_columns(value.code) or \
                    "repeat" in {op.partition(":")[0] for op in value.ops}:
                return None  # (a dict of columns: FeatureDataset; endless or repeated passes)
            if value.batch is None and {op.partition(":")[0] for op in value.ops} - ELEMENT_OPS:
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

    from transpiler.frontend_ast.keras.values import DatasetObj

    values = args[0] if args else kwargs.get("datasets")
    names = _zipped_names(fe, values, node)
    unbatched = names is not None and [isinstance(v, DatasetObj) and v.batch is None for v in values]
    if names is None or any(unbatched) and not all(unbatched):
        fe._mark_keras()
        return Unknown("tf.data.Dataset.zip()")
    kind = "zip_elements" if all(unbatched) else "zip_loaders"
    stmt = fe.stmt_stack[-1] if fe.stmt_stack else None
    ts = T.TrainingStatement("data_util", data_utils.unpacked_names(fe._current_stmt(), node) or "",
                             (kind, T.Code(", ".join(names))), span, stmt,
                             call=fe.source_file.sid(node), source=code_of(node))
    fe.program.training.append(ts)
    if kind == "zip_elements":
        return data_utils.ElementsVal("tf.data.Dataset.zip()", statement=ts)
    return data_utils.BatchesVal("tf.data.Dataset.zip()", statement=ts)


#: tf.data methods of a pipeline of zipped elements (runtime/torch/pipelines.py), and the
#: keywords each takes
ELEMENT_OPS = {"shuffle", "map", "prefetch", "cache"}
_KEYWORDS = {"shuffle": {"buffer_size", "seed", "reshuffle_each_iteration"},
             "map": {"map_func", "num_parallel_calls", "deterministic"},
             "batch": {"batch_size", "drop_remainder", "num_parallel_calls", "deterministic"},
             "prefetch": {"buffer_size"}, "cache": {"filename"}}


def element_method(fe, elements, name: str, node):
    """``.shuffle``/``.map``/``.batch``/``.prefetch``/``.cache`` on a pipeline of zipped
    elements: a statement (``element_op``, or ``element_batches`` once batched: fit() takes
    those) keeping the call's source, the pipeline again; None (a stub) for other methods,
    keywords or a second ``.batch``."""
    from transpiler.ir import training as T

    keywords = {a.keyword.value for a in node.args if a.keyword is not None}
    if name not in _KEYWORDS or keywords - _KEYWORDS[name] or name == "batch" and elements.batched or \
            name == "map" and not node.args:
        return None
    batched = elements.batched or name == "batch"
    config = ("element_batches" if batched else "element_op", T.Code(code_of(node)))
    stmt = fe.stmt_stack[-1] if fe.stmt_stack else None
    ts = T.TrainingStatement("data_util", data_utils.unpacked_names(fe._current_stmt(), node) or "", config,
                             fe._span(node), stmt, call=fe.source_file.sid(node), source=code_of(node))
    fe.program.training.append(ts)
    return data_utils.ElementsVal(f"dataset.{name}()", statement=ts, batched=batched)
