"""tf.data pipelines of a dict of columns → the runtime's ``FeatureDataset`` (runtime/torch/tabular.py).

``tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))`` (keras.io's structured-data
examples) yields (a dict of features keyed by column, label) and ``fit`` matches the keys with
the model's ``keras.Input(name=...)``. Here each statement of such a pipeline keeps its code
with ``FeatureDataset`` in place of ``from_tensor_slices`` (its ``shuffle``/``batch``/
``prefetch``/``cache``/``map`` are the runtime's, so a pipeline a function returns may be batched
after the call; a ``.map()`` function is translated as tf.data pipelines' are), and ``fit``/``evaluate`` take the model's inputs by name from it, in forward()'s
order (``ds.column(name, shape)``), with its labels, batch size and shuffling.
"""

from __future__ import annotations

import libcst as cst

from transpiler.ir import training as T
from transpiler.printers.code import lit

#: the runtime class (runtime/torch/tabular.py; data_utils.UTILITIES copies it)
RUNTIME_CLASS = "FeatureDataset"
#: tf.data.experimental.make_csv_dataset's runtime function (runtime/torch/tabular.py)
CSV_FUNCTION = "make_csv_dataset"
#: tf.data methods the runtime class has (any other on such a pipeline: not translated)
METHODS = {"shuffle", "batch", "prefetch", "cache", "take"}


def _is_dict(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Dict) or isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and \
        expr.func.value == "dict" and len(expr.args) == 1


def is_feature_data(code: str) -> bool:
    """``from_tensor_slices``' argument is a dict of columns or a (dict of columns, labels) pair."""
    try:
        expr = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return False
    if isinstance(expr, cst.Tuple) and len(expr.elements) == 2:
        return _is_dict(expr.elements[0].value)
    return _is_dict(expr)


def is_features(ds) -> bool:
    """The dataset (a DatasetObj) yields dicts of columns: ``from_tensor_slices`` of a dict of
    columns (or a (dict, labels) pair), or ``make_csv_dataset``."""
    return getattr(ds, "csv", None) is not None or is_feature_data(ds.code)


def _has_labels(ds) -> bool:
    return ds.csv == "labels" if getattr(ds, "csv", None) is not None else \
        is_feature_data(ds.code) and ds.code.startswith("(")


class _Slices(cst.CSTTransformer):
    def __init__(self, map_function=None):
        self.found = 0
        self.map_function = map_function  # (a .map() argument's code → its torch code)

    def visit_Lambda(self, node) -> bool:
        return False  # (a .map() function's own calls: translated with it, not methods of the pipeline)

    def leave_Call(self, original, updated):
        func = cst.Module([]).code_for_node(updated.func)
        if func.endswith("from_tensor_slices"):
            self.found += 1
            return updated.with_changes(func=cst.Name(RUNTIME_CLASS))
        if func.endswith("make_csv_dataset"):  # (the runtime's function: a FeatureDataset of batches)
            self.found += 1
            return updated.with_changes(func=cst.Name(CSV_FUNCTION))
        if isinstance(updated.func, cst.Attribute) and updated.func.attr.value == "map" and \
                self.map_function is not None and updated.args and updated.args[0].keyword is None:
            code = self.map_function(cst.Module([]).code_for_node(updated.args[0].value))
            args = [updated.args[0].with_changes(value=cst.parse_expression(code))]
            return updated.with_changes(args=args + [a for a in updated.args[1:]
                                                     if a.keyword is not None and a.keyword.value != "num_parallel_calls"])
        if isinstance(updated.func, cst.Attribute) and updated.func.attr.value not in METHODS:
            raise NotImplementedError(f"tf.data .{updated.func.attr.value}() on a dataset of feature columns")
        return updated


def statement_lines(printer, ts: T.TrainingStatement) -> list[str]:
    """A statement of a feature-columns pipeline: its code, on the runtime's class."""
    ops = {op.partition(":")[0] for op in ts.config.ops}
    if ops - METHODS - {"batch", "map"}:
        raise NotImplementedError(f"tf.data {sorted(ops - METHODS - {'map'})} on a dataset of feature columns")
    printer.datasets.add(RUNTIME_CLASS)
    if ts.config.csv is not None:
        printer.datasets.add(CSV_FUNCTION)
    expr = cst.parse_expression(ts.source).visit(_Slices(printer._map_function))
    target = f"{ts.model} = " if ts.model else "return "
    return [f"{target}{cst.Module([]).code_for_node(expr)}"]


def fit_data(printer, x: T.Code, ts: T.TrainingStatement | None, ds, labels_needed: bool = True):
    """``fit``/``evaluate`` on a feature-columns pipeline bound to ``x``: the model's inputs by
    name (a list in forward()'s order), the labels, the batch size and the shuffling, read from
    the runtime object; in the shape of ``TrainingPrinter._from_dataset``'s answer."""
    mapped = any(op.partition(":")[0] == "map" for op in ds.ops)
    md = ts.model_def if ts is not None else None
    inputs = md.graph.inputs if md is not None and md.graph is not None else []
    if not inputs or not all(v.var for v in inputs):
        raise NotImplementedError("fit on a dataset of feature columns for a model whose inputs have no names")
    if not labels_needed:
        pass
    elif not _has_labels(ds) and not _map_gives_labels(printer, ds):
        raise NotImplementedError("fit on a dataset of feature columns without labels")
    if any(v.dtype == "string" for v in inputs):
        printer.features.add("text")  # (make_loader keeps string columns as arrays of str)
    columns = ", ".join(f"{x.text}.column({lit(v.var)}, {lit(tuple(v.shape[1:]))})" for v in inputs)
    # (a mapped pipeline: its mapped elements, made once in order; weights when the map gives them)
    made = f"{x.text}.materialized()" if mapped else x.text
    weights = T.Code(f"{made}.sample_weights") if mapped and labels_needed and _gives_weights(printer, ds) else None
    return (T.Code(f"[{columns}]"), T.Code(f"{made}.labels"), T.Code(f"{x.text}.batch_size"),
            T.Code(f"{x.text}.shuffle_each_pass"), False, None, False, weights)


def _map_gives_labels(printer, ds) -> bool:
    """The pipeline's last ``.map()`` is a function of the script each of whose returns is a
    (features, labels) pair (keras.io movielens: ``process`` splits the target off a CSV
    dataset made without ``label_name``)."""
    from transpiler import cst_fast
    from transpiler.printers.torch.tensor_definitions import nested_mapped

    maps = [op.partition(":")[2] for op in ds.ops if op.partition(":")[0] == "map"]
    module = cst_fast.parse(printer.program.source) if printer.program.source and maps else None
    if module is None:
        return False
    functions = {s.name.value: s for s in [*nested_mapped(module), *module.body] if isinstance(s, cst.FunctionDef)}
    fn = functions.get(maps[-1].strip())
    returned = [r.value for r in cst_fast.nodes_of(fn, cst.Return)] if fn is not None else []
    return bool(returned) and all(isinstance(r, cst.Tuple) and len(r.elements) == 2 for r in returned)


def _gives_weights(printer, ds) -> bool:
    """Some ``.map()`` function of the pipeline returns three parts (features, labels, sample
    weights: keras.io's tabtransformer), or its result is not known here (then: assumed so, the
    runtime gives None for two)."""
    from transpiler import cst_fast

    module = cst_fast.parse(printer.program.source) if printer.program.source else cst.Module([])
    from transpiler.printers.torch.tensor_definitions import nested_mapped

    functions = {s.name.value: s for s in [*nested_mapped(module), *module.body] if isinstance(s, cst.FunctionDef)}
    for op in ds.ops:
        kind, _, code = op.partition(":")
        if kind != "map":
            continue
        try:
            expr = cst.parse_expression(code)
        except cst.ParserSyntaxError:
            return True
        if isinstance(expr, cst.Lambda):
            returned = [expr.body]
        elif isinstance(expr, cst.Name) and expr.value in functions:
            returned = [r.value for r in cst_fast.nodes_of(functions[expr.value], cst.Return)]
        else:
            return True
        if any(not isinstance(r, cst.Tuple) or len(r.elements) != 2 for r in returned):
            return True
    return False


def keyed_inputs(code: str, names: list, layouts: list, shapes: list = ()) -> str | None:
    """A model's several inputs given as a dict the program computes (``{name: ... for name in
    ...}``, ``dict(...)``), keyed by ``keras.Input(name=...)`` as Keras matches them: the arrays
    in forward()'s order, the dict evaluated once. A variable (``model.predict(x)``) may hold
    such a dict or a list of the arrays in order: either, decided when the program runs. None
    for other code (or inputs that need a layout change: not this case)."""
    from transpiler.ir.layout import is_channels_first

    try:
        expr = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return None
    keyed = isinstance(expr, cst.DictComp) or isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) \
        and expr.func.value == "dict"
    variable = isinstance(expr, (cst.Name, cst.Attribute))
    if not (keyed or variable) or len(names) != len(layouts) or not all(names) or \
            any(lay is not None and is_channels_first(lay) for lay in layouts):
        return None
    item = "inputs[name] if isinstance(inputs, dict) else inputs[i]" if variable else "inputs[name]"
    ranks = [len(shape) + 1 if shape and shape[-1] == 1 else 0 for shape in shapes]
    if len(ranks) == len(names) and any(ranks):
        # Keras' functional model gives an input one rank short, whose last axis should be 1,
        # that axis (``convert_to_tensor([value])`` per name: (1,) where (None, 1) is taken)
        pairs = lit(tuple(zip(names, ranks)))
        return (f"[v[..., None] if getattr(v, 'ndim', r) == r - 1 else v for inputs in [{code}] "
                f"for i, (name, r) in enumerate({pairs}) for v in [{item}]]")
    if variable:
        return (f"[inputs[name] if isinstance(inputs, dict) else inputs[i] for inputs in [{code}] "
                f"for i, name in enumerate({lit(tuple(names))})]")
    return f"[inputs[name] for inputs in [{code}] for name in {lit(tuple(names))}]"


def bound_dataset(program, name: str, before: T.TrainingStatement | None):
    """The feature-columns pipeline bound to ``name`` before the statement ``before`` (its
    DatasetObj), or None when ``name`` holds something else."""
    made = [t for t in program.training if t.kind == "dataset" and t.model == name]
    if before is not None and before in program.training:
        made = [t for t in made if program.training.index(t) < program.training.index(before)] or made
    ds = made[-1].config if made else None
    return ds if ds is not None and is_features(ds) else None


def predict_data(printer, x: T.Code, ts: T.TrainingStatement):
    """``predict(ds)`` on a feature-columns pipeline: (the model's inputs, the batch size), or
    None when ``x`` is no such pipeline (Keras predicts on its inputs, the labels ignored)."""
    ds = bound_dataset(printer.program, x.text, ts)
    if ds is None:
        return None
    made = fit_data(printer, x, ts, ds, labels_needed=False)
    return made[0], made[2]


def with_weights(fit, dataset):
    """``fit``'s config with the sample weights a feature-columns pipeline gives (``fit_data``'s
    eighth part), if any."""
    import dataclasses

    if len(dataset) <= 7 or dataset[7] is None:
        return fit
    if fit.sample_weight is not None:
        raise NotImplementedError("fit(sample_weight=...) on a dataset that gives sample weights")
    return dataclasses.replace(fit, sample_weight=dataset[7])


def unweighted(dataset, what: str) -> None:
    """Refuses a pipeline giving sample weights where the runtime would not weigh the loss
    (evaluate(), validation data)."""
    if dataset is not None and len(dataset) > 7 and dataset[7] is not None:
        raise NotImplementedError(f"{what} that gives sample weights (a .map() returning three parts): its "
                                  "loss would not be weighted")
