"""Keras' data utilities that become a function of the same name and arguments in the output.

``keras.utils.get_file(...)``, ``keras.utils.load_img(...)``, ``img_to_array``, ... take
files and arrays and give files and arrays: each is recorded as a ``data_util`` training
statement (config: the utility's name and its arguments as source code) and the printer of
the target framework puts its own implementation of the same function in its place. Every
spelling Keras has for a utility (``keras.utils.X``, ``keras.preprocessing.image.X``,
``keras.utils.data_utils.X``, ``tf.keras...``) maps to one name here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from transpiler.frontend_ast.interp.core import code_of
from transpiler.frontend_ast.interp.values import Unknown

#: module roots of the source framework: a name bound to one of them is Keras' to translate
#: (tensorflow_datasets gives TensorFlow tensors and imports TensorFlow)
FRAMEWORK_ROOTS = ("tensorflow", "keras", "tensorflow_datasets")

#: the utility's name → the Keras API paths (after the ``keras.`` root) that spell it
SPELLINGS = {
    "get_file": ("utils.get_file", "utils.data_utils.get_file", "utils.file_utils.get_file"),
    "load_img": ("utils.load_img", "preprocessing.image.load_img", "utils.image_utils.load_img"),
    "img_to_array": ("utils.img_to_array", "preprocessing.image.img_to_array", "utils.image_utils.img_to_array"),
    "array_to_img": ("utils.array_to_img", "preprocessing.image.array_to_img", "utils.image_utils.array_to_img"),
    "save_img": ("utils.save_img", "preprocessing.image.save_img", "utils.image_utils.save_img"),
    # (a drawing of the model in a file: its structure printed in torch; a statement of its own only)
    "plot_model": ("utils.plot_model", "utils.vis_utils.plot_model", "utils.model_visualization.plot_model"),
    "pad_sequences": ("utils.pad_sequences", "preprocessing.sequence.pad_sequences",
                      "utils.sequence_utils.pad_sequences"),
    "timeseries_dataset_from_array": ("utils.timeseries_dataset_from_array",
                                      "preprocessing.timeseries_dataset_from_array",
                                      "utils.timeseries_dataset_utils.timeseries_dataset_from_array"),
    "image_dataset_from_directory": ("utils.image_dataset_from_directory",
                                     "preprocessing.image_dataset_from_directory",
                                     "utils.image_dataset_utils.image_dataset_from_directory"),
    "text_dataset_from_directory": ("utils.text_dataset_from_directory",
                                    "preprocessing.text_dataset_from_directory",
                                    "utils.text_dataset_utils.text_dataset_from_directory"),
    # Keras' text and lookup layers used on data (outside a model): objects of the runtime
    **{name: (f"layers.{name}", f"layers.experimental.preprocessing.{name}")
       for name in ("TextVectorization", "StringLookup", "IntegerLookup")},
}
#: utilities whose call is its statement's whole code, which the output replaces (by comments
#: and code: ``plot_model`` → ``print(model)``); elsewhere (``img = plot_model(...)``) a stub
WHOLE_STATEMENT = {"plot_model"}
#: the utilities that give a dataset of (x, y) batches (a DataLoader in the output)
LOADERS = {"timeseries_dataset_from_array", "image_dataset_from_directory", "text_dataset_from_directory"}
#: what the output's DataLoader answers of a tf.data dataset a loader utility gave: anything
#: else (``.map``, ``.prefetch``, ``.unbatch``, ...) needs TensorFlow (a stub)
LOADER_ATTRIBUTES = {"take", "class_names", "file_paths", "batch_size"}
#: tf.data methods translated on such a dataset: ``.map(fn)`` (per batch), ``.prefetch()`` and
#: ``.cache()`` (nothing to do for a DataLoader); ``.shuffle()``/``.batch()`` on elements zipped
#: before batching only (``ElementsVal``: data_zip.element_method; elsewhere a stub)
LOADER_METHODS = {"map", "prefetch", "cache", "shuffle", "batch"}
_BY_PATH = {path: name for name, paths in SPELLINGS.items() for path in paths}


@dataclass(eq=False)
class BatchesVal(Unknown):
    """The batches a loader utility gives (``keras.utils.timeseries_dataset_from_array``):
    run-time data, whose statement learns the variable it is bound to (fit() takes it)."""

    statement: Any = None


@dataclass(eq=False)
class ElementsVal(BatchesVal):
    """A tf.data pipeline of elements zipped before batching (``Dataset.zip((a, b))`` of
    unbatched pipelines of arrays, frontend_ast/keras/data_zip.py), with the tf.data methods
    called on it since; ``batched`` once ``.batch(n)`` was."""

    batched: bool = False


#: Keras' text and lookup layers: on data (outside a model) objects of the runtime's class
TEXT_LAYERS = {"TextVectorization", "StringLookup", "IntegerLookup"}


@dataclass(eq=False)
class TextLayerVal(Unknown):
    """A Keras text or lookup layer made outside a model: a run-time object (its vocabulary
    comes from the data), whose methods and calls on data are kept as code."""

    cls_name: str = ""
    span: Any = None  # where it is made
    made: Any = None  # the constructor's (args, kwargs), as the interpreter read them
    #: the name its adapt() inside a helper called on a model's tensors keeps it by (data_adapt.py)
    adapt_key: Any = None


def text_layer_in_model(cls_name: str) -> str:
    """The stub message for a text or lookup layer called on a model's tensor."""
    return (f"{cls_name} called inside a model (on a symbolic tensor) is not translated (a vocabulary "
            "lookup in the torch module; strings are no torch tensors): tokenize in the data pipeline "
            "(a tf.data .map, or on the arrays) and feed the model ids")


def utility_of(api_name: str | None) -> str | None:
    """The utility a Keras API name (``utils.get_file``) spells, or None."""
    return _BY_PATH.get(api_name) if api_name else None


def needs_tensorflow(fe, node, what: str) -> None:
    """``node`` (a tf.data method or attribute on a loader utility's dataset, ``what``) has no
    translation on the output's DataLoader: its statement is a stub, reported with the reason,
    even where the statement names no Keras object (``ds = ds.shuffle(100)``)."""
    fe._mark_keras()
    fe.program.from_keras.tensorflow_only.append(
        (fe._span(node), f"{what} on a dataset of batches (the output's DataLoader) is not translated "
                         "(tf.data's .map(fn), .prefetch() and .cache() are)"))


def record_tfds_load(program, span, args: list, kwargs: dict) -> None:
    """``tensorflow_datasets.load(name, ...)``: the dataset's name (when it is known statically)
    for the printer, which says what the target framework offers for it in the stub."""
    name = args[0] if args else kwargs.get("name")
    program.from_keras.tfds_loads.append((span, name if isinstance(name, str) else None))


#: Keras layers whose adapt() the runtime computes: class → the runtime's function
ADAPTABLE = {"Normalization": "adapt_normalization"}


def record_adapt(fe, layer, node) -> bool:
    """``layer.adapt(data)`` on a Keras layer whose state the runtime computes from data
    (``Normalization``): recorded as a ``data_util`` statement calling the runtime's function
    with the layer's name and its kept axes, and the layer marked adapted (``adapt_key``: the
    torch modules built from it take its state). False for other layers."""
    import libcst as cst

    from transpiler.ir import training as T

    function = ADAPTABLE.get(layer.cls_name)
    spec_attrs = getattr(layer.spec, "attrs", {})
    if function is None or spec_attrs.get("mean") is not None:
        return False
    positional = [a for a in node.args if a.keyword is None]
    data = positional[0].value if positional else next(
        (a.value for a in node.args if a.keyword is not None and a.keyword.value == "data"), None)
    if data is None or len(node.args) != 1:
        return False  # adapt(data, batch_size=..., steps=...): Keras 2's arguments
    from transpiler.frontend_ast.keras import data_adapt

    if data_adapt.in_helper_on_tensors(fe):
        # a helper called on a model's tensors (keras.io's structured_data_classification_from_scratch:
        # ``encode_numerical_feature(age, "age", train_ds)`` makes, adapts and calls a layer): the
        # call becomes part of the model class, so adapt() runs where the helper is called
        # (data_adapt.py), or the statement is a stub (never statistics left at 0 and 1)
        data_adapt.record_normalization(fe, layer, node, spec_attrs.get("axis", (-1,)))
        return True
    layer.adapt_key = layer.keras_name
    fe.program.from_keras.adapted_layers.append(layer.keras_name)
    args = f"{layer.keras_name!r}, {cst.Module([]).code_for_node(data)}, axis={tuple(spec_attrs.get('axis', (-1,)))!r}"
    span = fe._span(node)
    stmt = fe.stmt_stack[-1] if fe.stmt_stack else None
    fe.program.training.append(T.TrainingStatement("data_util", "", (function, T.Code(args)), span, stmt,
                                                   call=fe.source_file.sid(node),
                                                   source=cst.Module([]).code_for_node(node)))
    return True


#: Keras layers whose ``set_weights`` the runtime maps into their torch module's parameters
#: (op → runtime/torch/preprocessing.py ``KERAS_WEIGHTS``' key)
SETTABLE_WEIGHTS = {"embedding": "embedding", "dense": "dense"}


def _whole_statement(fe, node) -> bool:
    """``node`` (a call) is its statement's only expression (``layer.build((1,))`` on a line)."""
    import libcst as cst

    stmt = fe._current_stmt()
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is node


def record_layer_weights(fe, layer, name: str, node) -> bool:
    """``layer.build(shape)`` / ``layer.set_weights([arrays])`` on a Keras layer before (or
    after) a model uses it (keras.io's pretrained word embeddings: a GloVe matrix set into an
    ``Embedding``): ``build`` is Keras' way to make the weights before setting them (a torch
    module has its own once made: the statement becomes a comment); ``set_weights`` becomes
    the runtime's ``set_layer_weights`` with the layer's name, which puts the arrays into every
    torch module built from that layer (``adapt_key``: the modules read that state, as an
    adapted Normalization's). False for other layers or calls (then: a stub, as before)."""
    import libcst as cst

    from transpiler.ir import training as T

    kind = SETTABLE_WEIGHTS.get(getattr(layer.spec, "op", None))
    if kind is None or not _whole_statement(fe, node):
        return False
    positional = [a for a in node.args if a.keyword is None]
    if name == "build":
        config = ("layer_built", T.Code(code_of(node)))
    elif len(node.args) == 1 and len(positional) == 1:
        layer.adapt_key = layer.keras_name
        fe.program.from_keras.adapted_layers.append(layer.keras_name)
        config = ("set_layer_weights", T.Code(f"{layer.keras_name!r}, {code_of(positional[0].value)}, {kind!r}"))
    else:
        return False
    stmt = fe.stmt_stack[-1] if fe.stmt_stack else None
    fe.program.training.append(T.TrainingStatement("data_util", "", config, fe._span(node), stmt,
                                                   call=fe.source_file.sid(node),
                                                   source=cst.Module([]).code_for_node(node)))
    return True


def unpacked_names(stmt, call) -> str | None:
    """``a, b = call`` (``subset="both"`` gives two datasets): "a,b", else None."""
    import libcst as cst

    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not isinstance(small, cst.Assign) or small.value is not call or len(small.targets) != 1:
        return None
    target = small.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or \
            not all(isinstance(e.value, cst.Name) for e in target.elements):
        return None
    return ",".join(e.value.value for e in target.elements)


def record_loader_method(fe, batches, name: str, node):
    """``ds.map(fn)`` / ``ds.prefetch(n)`` / ``ds.cache()`` on a loader utility's dataset: a
    ``data_util`` statement (``map_batches``: the receiver and the function's source;
    ``loader_no_op``: the receiver) whose result is a loader again, or None when the call has
    other arguments (then it needs TensorFlow)."""
    import libcst as cst

    from transpiler.ir import training as T

    if not isinstance(node.func, cst.Attribute):
        return None
    if isinstance(batches, ElementsVal):
        from transpiler.frontend_ast.keras import data_zip

        return data_zip.element_method(fe, batches, name, node)
    receiver = code_of(node.func.value)
    positional = [a for a in node.args if a.keyword is None]
    keywords = {a.keyword.value for a in node.args if a.keyword is not None}
    if name == "map":
        if len(positional) != 1 or keywords - {"num_parallel_calls", "deterministic"}:
            return None
        config = ("map_batches", T.Code(f"{receiver}, {code_of(positional[0].value)}"))
    elif name == "prefetch" and len(node.args) <= 1 or name == "cache" and not node.args:
        config = ("loader_no_op", T.Code(receiver))
    else:
        return None
    stmt = fe.stmt_stack[-1] if fe.stmt_stack else None
    ts = T.TrainingStatement("data_util", unpacked_names(fe._current_stmt(), node) or "", config, fe._span(node),
                             stmt, call=fe.source_file.sid(node), source=cst.Module([]).code_for_node(node))
    fe.program.training.append(ts)
    return BatchesVal(f"batches.{name}()", statement=ts)
