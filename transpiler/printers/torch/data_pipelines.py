"""tf.data pipelines of arrays zipped element by element (frontend_ast/keras/data_zip.py) →
the runtime's ``ElementPipeline`` (runtime/torch/pipelines.py).

keras.io's CutMix zips two shuffled, mapped ``from_tensor_slices`` pipelines before batching
and shuffles, maps and batches the zip. Each statement keeps its code, with
``ElementPipeline.from_tensor_slices`` / ``ElementPipeline.zip`` in place of tf.data's (the
methods are the runtime's, with tf.data's arguments), each ``.map()`` function in torch
(``TrainingPrinter._map_function``), tf.data's scheduling arguments dropped
(``num_parallel_calls=AUTOTUNE``: the generated program has no AUTOTUNE) and, for a model
taking channels-first images, ``layout=`` on ``.batch()`` (the maps see channels-last images,
as in Keras; the batches are permuted after them).
"""

from __future__ import annotations

import libcst as cst

from transpiler.printers.code import lit

RUNTIME_CLASS = "ElementPipeline"
#: the data_util statements of such pipelines (config[0]); ``element_batches``: batched
KINDS = ("zip_elements", "element_op", "element_batches", "tfds_load")
#: arguments with no effect on the elements (scheduling)
_DROPPED = {"num_parallel_calls", "deterministic"}


def _root(source: str) -> cst.BaseExpression:
    """The start of a pipeline's chain of calls (``from_tensor_slices(...)``, or a name)."""
    expr = cst.parse_expression(f"({source})")
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
            expr.func.attr.value != "from_tensor_slices":
        expr = expr.func.value
    return expr


def zipped_elements(program, ts) -> bool:
    """The unbatched tf.data pipeline of arrays ``ts`` bound is zipped element by element later,
    itself or through a pipeline made from it (``audio_ds = path_ds.map(f)``)."""
    names = [n for n in ts.model.split(",") if n]
    later = program.training[program.training.index(ts) + 1:]
    if not names:
        return False
    if any(o.kind == "data_util" and o.config[0] == "zip_elements" and
           set(o.config[1].text.replace(" ", "").split(",")) & set(names) for o in later):
        return True
    return any(o.kind == "dataset" and o.config.batch is None and isinstance(_root(o.source), cst.Name)
               and _root(o.source).value in names and zipped_elements(program, o) for o in later)


class _Chain(cst.CSTTransformer):
    """tf.data's calls → the runtime's: the root, the map functions, the scheduling arguments."""

    def __init__(self, printer, layout):
        self.printer, self.layout = printer, layout

    def leave_Call(self, original, updated):
        if not isinstance(updated.func, cst.Attribute):
            return updated
        method = updated.func.attr.value
        if method in ("from_tensor_slices", "zip"):
            return updated.with_changes(func=cst.parse_expression(f"{RUNTIME_CLASS}.{method}"))
        args = [a for a in updated.args if a.keyword is None or a.keyword.value not in _DROPPED]
        if method == "prefetch":
            args = []  # (its buffer size: AUTOTUNE in the source)
        if method == "map":
            fn = args[0].value if args[0].keyword is None or args[0].keyword.value == "map_func" else None
            if fn is None:
                raise NotImplementedError("tf.data .map() without its function first")
            text = self.printer._map_function(cst.Module([]).code_for_node(fn))
            args = [args[0].with_changes(value=cst.parse_expression(text)), *args[1:]]
        if method == "batch" and self.layout is not None:
            args = [*args, cst.Arg(cst.parse_expression(lit(self.layout)), keyword=cst.Name("layout"))]
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
        return updated.with_changes(args=args)


def _layout(printer):
    from transpiler.ir.layout import Layout, channels_last_of
    from transpiler.printers.torch import data_utils

    layouts = printer._single_model_layouts()
    return Layout(channels_last_of(layouts[0]), layouts[0]).perm if data_utils.channels_first(layouts) else None


def pipeline_text(printer, source: str) -> str:
    """A pipeline expression's source in the runtime's spelling."""
    printer.datasets.add(RUNTIME_CLASS)
    expr = cst.parse_expression(f"({source})").visit(_Chain(printer, _layout(printer)))
    return cst.Module([]).code_for_node(expr)


def dataset_lines(printer, ts) -> list[str]:
    """An unbatched ``from_tensor_slices`` pipeline zipped later: its statement, as the runtime's."""
    root = _root(ts.source)
    made = isinstance(root, cst.Call) or isinstance(root, cst.Name) and any(
        o.kind == "dataset" and root.value in o.model.split(",") and zipped_elements(printer.program, o)
        for o in printer.program.training[:printer.program.training.index(ts)])
    if not made:  # (a pipeline of something else: tf.data's, not translated)
        raise NotImplementedError("a tf.data pipeline zipped before .batch() made from another dataset")
    target = f"{ts.model} = " if ts.model else "return "
    return [f"{target}{pipeline_text(printer, ts.source)}"]


def statement_lines(printer, ts) -> list[str]:
    """``Dataset.zip((a, b))`` of unbatched pipelines, or a method called on such a zip (the
    receiver's source stays: the training printer puts its translation in)."""
    name, args = ts.config
    if name == "tfds_load":  # (its pipelines' root: printers/torch/data_sources.py)
        from transpiler.printers.torch import data_sources

        return data_sources.tfds_load_lines(printer, ts)
    if name == "zip_elements":
        printer.datasets.add(RUNTIME_CLASS)
        return [f"{RUNTIME_CLASS}.zip(({args.text},))"]
    # (parenthesised: a chain the source wrote over several lines)
    call = cst.parse_expression(f"({args.text})").with_changes(lpar=[], rpar=[])
    receiver = cst.Module([]).code_for_node(call.func.value)
    # only this call is rewritten: the receiver keeps its source (the nested one's key)
    method = call.with_changes(func=call.func.with_changes(value=cst.Name("_receiver")))
    text = pipeline_text(printer, cst.Module([]).code_for_node(method))
    return [text.replace("_receiver", receiver, 1)]  # (text is parenthesised: pipeline_text)
