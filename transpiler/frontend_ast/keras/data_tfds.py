"""``tensorflow_datasets.load(...)`` (Keras -> PyTorch): a ``data_util`` statement whose
datasets are pipelines of single elements (``data_utils.ElementsVal``).

What a PyTorch engineer writes for a TFDS dataset is ``tfds.data_source(name, split=...)``
(random access to numpy records, no TensorFlow at run time) wrapped in a torch dataset; the
printer puts the runtime's ``load_tfds`` (runtime/torch/tfds_data.py) in place of the call,
with the call's own arguments. Its datasets are the runtime's ``ElementPipeline``, so the
tf.data methods the program calls on them (``.shuffle``, ``.map``, ``.batch``, ``.prefetch``,
``.cache``: data_zip.element_method) translate as they do for pipelines of arrays zipped
before batching, and fit() takes the batched pipeline.

The value returned follows tfds' shape: one pipeline per split of a list (``split=["train[:90%]",
"train[90%:]"]``), one for a single split, and ``(datasets, info)`` with ``with_info=True``
(info: tfds' own ``DatasetInfo`` at run time, unknown here). Without ``split`` tfds gives a dict
of every split: not translated (a stub naming the dataset).
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.interp.core import code_of
from transpiler.frontend_ast.interp.values import Unknown
from transpiler.frontend_ast.keras import data_utils

#: tfds.load's parameters, in order (the positional ones a call may give)
PARAMETERS = ("name", "split", "data_dir", "batch_size", "shuffle_files", "download", "as_supervised",
              "decoders", "read_config", "with_info", "builder_kwargs", "download_and_prepare_kwargs",
              "as_dataset_kwargs", "try_gcs")
#: the ones the runtime's load_tfds takes (the others: a stub)
SUPPORTED = {"name", "split", "data_dir", "shuffle_files", "download", "as_supervised", "with_info", "try_gcs"}


def _target_names(stmt, call, with_info: bool) -> str:
    """The names the call's datasets are bound to (``a, b = load(...)``, ``(a, b), info =
    load(..., with_info=True)``, ``(ds,) = load(...)``), comma-joined; "" when not names."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not isinstance(small, cst.Assign) or small.value is not call or len(small.targets) != 1:
        return ""
    target = small.targets[0].target
    if with_info:
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != 2:
            return ""
        target = target.elements[0].value
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
        return ",".join(e.value.value for e in target.elements)
    return ""


def tfds_load(fe, args, kwargs, node, span):
    """``tfds.load(...)``: a ``tfds_load`` statement and its pipelines (see the module's
    docstring), or an Unknown (the statement stays a stub naming the dataset) for a call the
    runtime does not take."""
    from transpiler.ir import training as T

    data_utils.record_tfds_load(fe.program, span, list(args), dict(kwargs))
    given = dict(zip(PARAMETERS, args))
    given.update(kwargs)
    if set(given) - SUPPORTED or len(args) > len(PARAMETERS) or any(a.star for a in node.args):
        return Unknown("tensorflow_datasets.load()")
    split, with_info = given.get("split"), given.get("with_info", False)
    if split is None or not isinstance(with_info, bool) or \
            not isinstance(given.get("as_supervised", False), bool):
        return Unknown("tensorflow_datasets.load()")  # (every split as a dict; a flag known at run time)
    stmt = fe.stmt_stack[-1] if fe.stmt_stack else None
    ts = T.TrainingStatement("data_util", _target_names(fe._current_stmt(), node, with_info),
                             ("tfds_load", T.Code(", ".join(code_of(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
                                                                for a in node.args))), span, stmt,
                             call=fe.source_file.sid(node), source=code_of(node))
    fe.program.training.append(ts)
    if isinstance(split, (list, tuple)):
        datasets = tuple(data_utils.ElementsVal("tfds.load()", statement=ts) for _ in split)
    else:
        datasets = data_utils.ElementsVal("tfds.load()", statement=ts)
    return (datasets, Unknown("tfds.load() info")) if with_info else datasets
