"""Keras' data utilities (frontend_ast/keras/data_utils.py) → their runtime functions.

Each utility is a function of the same name and arguments in ``transpiler/runtime/torch/``
(real code, tested against Keras), copied into the generated program through
``printers/runtime_source.py``; the call keeps the user's arguments.
"""

from __future__ import annotations

from transpiler.printers.torch import data_image_ops, data_pipelines, data_strings, data_tensors

#: utility name → (runtime module, definition)
UTILITIES = {
    "get_file": ("torch.downloads", "get_file"),
    "load_img": ("torch.images", "load_img"),
    "img_to_array": ("torch.images", "img_to_array"),
    "array_to_img": ("torch.images", "array_to_img"),
    "save_img": ("torch.images", "save_img"),
    "pad_sequences": ("torch.sequences", "pad_sequences"),
    "adapt_normalization": ("torch.preprocessing", "adapt_normalization"),
    "adapt_lookup": ("torch.preprocessing", "adapt_lookup"),  # (adapted in a helper: data_adapt.py)
    "set_layer_weights": ("torch.preprocessing", "set_layer_weights"),  # (layer.set_weights before a model)
    "timeseries_dataset_from_array": ("torch.timeseries", "timeseries_dataset_from_array"),
    "image_dataset_from_directory": ("torch.directories", "image_dataset_from_directory"),
    "text_dataset_from_directory": ("torch.directories", "text_dataset_from_directory"),
    **{name: ("torch.text", name) for name in ("TextVectorization", "StringLookup", "IntegerLookup")},  # (TEXT_LAYERS)
    "MappedLoader": ("torch.timeseries", "MappedLoader"),
    "ZippedLoader": ("torch.timeseries", "ZippedLoader"),  # (tf.data.Dataset.zip: frontend_ast/keras/data_zip.py)
    "ElementPipeline": ("torch.pipelines", "ElementPipeline"),  # (zipped before batching: data_pipelines.py)
    "FeatureDataset": ("torch.tabular", "FeatureDataset"),
    "make_csv_dataset": ("torch.tabular", "make_csv_dataset"),  # (tf.data.experimental.make_csv_dataset)
    "convert_to_tensor": ("torch.tabular", "convert_to_tensor"),  # (tf.convert_to_tensor on data)
    "load_tfds": ("torch.tfds_data", "load_tfds"),  # (tensorflow_datasets.load: data_sources.py)  # (printers/torch/dataset_features.py)
    # tf.image calls in functions a tf.data pipeline maps (printers/torch/data_image_ops.py)
    **{name: ("torch.image_ops", name) for name in data_image_ops.HELPERS},
    # tf.strings calls there (printers/torch/data_strings.py)
    **{name: ("torch.text", name) for name in data_strings.HELPERS},
    **{name: ("torch.image_ops", name) for name in data_tensors.HELPERS},  # (tf.gather, tf.split)
}

#: Keras' text and lookup layers: classes of runtime/torch/text.py
TEXT_LAYERS = ("TextVectorization", "StringLookup", "IntegerLookup")
#: utilities that give a DataLoader of (x, y) batches, which fit()/evaluate() take as it is
#: (``map_batches``/``loader_no_op``: tf.data's .map/.prefetch/.cache on one of them)
LOADERS = {"timeseries_dataset_from_array", "image_dataset_from_directory", "text_dataset_from_directory",
           "map_batches", "loader_no_op", "zip_loaders", *data_pipelines.KINDS}
#: tf.data methods on such a loader: not runtime functions (``loader_op_lines``); ``zip_loaders``:
#: ``tf.data.Dataset.zip`` of named loaders (whose batches are pairs: fit() takes it mapped only)
LOADER_OPS = {"map_batches", "loader_no_op", "zip_loaders", *data_pipelines.KINDS}
#: loader ops whose result fit() cannot take: batches of pairs, or elements not batched yet
NOT_FIT_DATA = {"zip_loaders", "zip_elements", "element_op", "tfds_load"}
#: loaders of images, whose layout the loader sets (``data_format``) for the model
IMAGE_LOADERS = {"image_dataset_from_directory"}


def uses_text_layers(program) -> bool:
    """The program makes Keras text or lookup layers (runtime objects working on strings)."""
    return any(ts.kind == "data_util" and ts.config[0] in TEXT_LAYERS for ts in program.training)


def call_lines(name: str, args: str, layouts: list) -> list[str]:
    """The runtime call for utility ``name`` with the source's ``args``: an image loader gives
    channels-first images when the program's one model takes them (the layout is handled
    once, at the loader), unless the source chose a data_format."""
    import re

    from transpiler.ir.layout import is_channels_first

    if name in IMAGE_LOADERS and channels_first(layouts) and not re.search(r"\bdata_format\s*=", args):
        return [f'{name}({args}, data_format="channels_first")']
    return [f"{name}({args})"]


def channels_first(layouts: list) -> bool:
    """The program's one model takes channels-first images."""
    from transpiler.ir.layout import is_channels_first

    return len(layouts) == 1 and layouts[0] is not None and is_channels_first(layouts[0])


def _mapped_later(program, ts) -> bool:
    """A later ``.map()`` reads the dataset ``ts`` bound (its images must stay channels-last)."""
    import libcst as cst

    names = [n for n in ts.model.split(",") if n]
    for later in program.training[program.training.index(ts) + 1:]:
        if later.kind == "data_util" and later.config[0] in LOADER_OPS:
            if _reads(later, names, ts.source) and (later.config[0] == "map_batches" or
                                                    _mapped_later(program, later)):
                return True
    return False


def _reads(later, names: list[str], source: str) -> bool:
    """The loader op ``later`` reads a dataset bound to one of ``names`` (or made by the call
    ``source`` itself: ``ds.map(f).map(g)``): its receiver, or any zipped dataset."""
    import libcst as cst

    args = cst.parse_expression(f"f({later.config[1].text})").args
    receivers = [a.value for a in (args if later.config[0] == "zip_loaders" else args[:1])]
    return any(isinstance(r, cst.Name) and r.value in names or cst.Module([]).code_for_node(r) == source
               for r in receivers)


def zipped_and_mapped(program, ts) -> bool:
    """The tf.data pipeline of arrays ``ts`` bound is zipped with others and the zip mapped
    (``Dataset.zip((a, b)).map(fn)``): its images stay channels-last for ``fn``, as in Keras
    (the mapped loader puts the model's layout on what ``fn`` returns)."""
    names = [n for n in ts.model.split(",") if n]
    return bool(names) and any(
        later.kind == "data_util" and later.config[0] == "zip_loaders" and _reads(later, names, ts.source)
        and _mapped_later(program, later) for later in program.training[program.training.index(ts) + 1:])


def loader_lines(printer, ts) -> list[str]:
    """A loader utility's call, or tf.data's .map/.prefetch/.cache on its dataset. Images are
    made channels-first for the model by the last step of the chain: the loader when nothing
    maps them, else the last .map() (its function sees channels-last images, as in Keras)."""
    import libcst as cst

    from transpiler.ir.layout import Layout, channels_last_of
    from transpiler.printers.code import lit

    name, args = ts.config
    if name in data_pipelines.KINDS:  # (zipped before batching: runtime/torch/pipelines.py)
        return data_pipelines.statement_lines(printer, ts)
    layouts = printer._single_model_layouts()
    mapped = _mapped_later(printer.program, ts)
    if name not in LOADER_OPS:
        return call_lines(name, args.text, [None] if mapped else layouts)
    parts = cst.parse_expression(f"f({args.text})").args
    receiver = cst.Module([]).code_for_node(parts[0].value)
    if name == "loader_no_op":
        return [receiver]  # (nothing to do: a DataLoader loads as it is iterated)
    if name == "zip_loaders":  # (tuples of the loaders' batches, as many as the shortest has)
        printer.datasets.add("ZippedLoader")
        return [f"ZippedLoader({args.text})"]
    function = printer._map_function(cst.Module([]).code_for_node(parts[1].value))
    printer.datasets.add("MappedLoader")
    layout = ""
    if channels_first(layouts) and not mapped:
        layout = f", layout={lit(Layout(channels_last_of(layouts[0]), layouts[0]).perm)}"
    return [f"MappedLoader({receiver}, {function}{layout})"]


def loader_statement(program, name: str, before=None):
    """The data_util statement that bound ``name`` to a DataLoader of (x, y) batches (the last
    one before the training statement ``before``), or None."""
    made = [ts for ts in program.training if ts.kind == "data_util" and name in ts.model.split(",")
            and ts.config[0] in LOADERS]  # (``a, b = image_dataset_from_directory(..., subset="both")``)
    if before is not None and before in program.training:
        made = [ts for ts in made if program.training.index(ts) < program.training.index(before)]
    if made and made[-1].config[0] in NOT_FIT_DATA:
        return None  # (batches of (x, y) batches, or single elements: no loader fit() takes)
    return made[-1] if made else None

#: utilities whose runtime module holds state the model classes' ``__init__`` read
#: (``adapted_state``): copied once, right after the imports (before any module is built),
#: never with the other helpers (a second copy would reset that state)
PREAMBLE = {"adapt_normalization": ("torch.preprocessing", ("adapt_normalization", "adapted_state")),
            "set_layer_weights": ("torch.preprocessing", ("set_layer_weights", "adapted_state")),
            "adapt_lookup": ("torch.preprocessing", ("adapt_lookup", "adapted_depth", "adapted_state"))}
#: ``layer.build(shape)`` before its set_weights: nothing to do in torch (a comment in its place)
LAYER_BUILT = "layer_built"
#: utilities that replace their whole statement (comments and code): ``layer.build()``,
#: ``keras.utils.plot_model(model, ...)``
STATEMENTS = {LAYER_BUILT, "plot_model"}


def statement_util_lines(name: str, args: str) -> list[str]:
    """The lines of a STATEMENTS utility with the source's arguments ``args``."""
    import libcst as cst

    if name == LAYER_BUILT:
        return [f"# {args}: a torch module has its weights once it is made"]
    call = cst.parse_expression(f"f({args})")
    model = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "model"), None)
    if model is None:
        raise NotImplementedError("keras.utils.plot_model() without a model")
    return ["# keras.utils.plot_model draws the model into an image file (torch has no such drawing "
            "built in): its structure printed", f"print({cst.Module([]).code_for_node(model)})"]


def _preamble_used(program) -> list[str]:
    """The PREAMBLE utilities the program calls (in PREAMBLE's order)."""
    used = {ts.config[0] for ts in program.training if ts.kind == "data_util"}
    return [name for name in PREAMBLE if name in used]


def preamble_texts(program) -> tuple[list[str], set[str]]:
    """The runtime definitions a program that adapts preprocessing layers holds after its
    imports, and their imports (none when no layer is adapted)."""
    from transpiler.printers import runtime_source
    from transpiler.printers.torch import data_lookups

    lookups = data_lookups.lookup_classes(program)
    if not program.from_keras.adapted_layers and not lookups:
        return [], set()
    copy = runtime_source.Copier()
    texts = []
    if program.from_keras.adapted_layers:
        for name in _preamble_used(program) or list(PREAMBLE)[:1]:
            module, names = PREAMBLE[name]
            texts += copy.take(module, *names)
    if lookups:  # (the lookups a model holds: built in its __init__)
        texts += copy.take(data_lookups.RUNTIME, *lookups)
    return texts, copy.imports


def preamble_names(program) -> set[str]:
    """The runtime definitions ``preamble_texts`` puts after the imports (the helpers copied
    later leave them out: one definition each)."""
    from transpiler.printers.torch import data_lookups

    names = set(data_lookups.lookup_classes(program))
    if program.from_keras.adapted_layers:
        names |= set(_preamble_used(program) or list(PREAMBLE)[:1])
    return names


def image_helpers_used(code) -> set[str]:
    """The tf.image runtime functions the translated code (functions a pipeline maps, the
    loader statements with their lambdas) calls: copied into the program."""
    texts = ["\n".join(lines) for lines in code.functions.values()]
    texts += ["\n".join(lines) if isinstance(lines, list) else str(lines) for lines in code.statements.values()]
    texts += [str(text) for text in code.expressions.values()]
    return {h for text in texts for h in data_image_ops.helpers_used(text)}


def refuse_loader(program, name: str, before, call: str) -> None:
    """``call`` (predict) handed a loader utility's dataset of (x, y) batches, which the array
    helpers cannot take (the model would be called on (x, y); a channels-first model's input
    permutation would transpose the loader): a stub."""
    zipped = [ts for ts in program.training if ts.kind == "data_util" and name in ts.model.split(",")
              and ts.config[0] in NOT_FIT_DATA]
    if loader_statement(program, name, before) is not None or zipped:
        raise NotImplementedError(f"{call}() on a dataset of (x, y) batches from a Keras data utility "
                                  "(give it the images: an array or a loop over the batches)")


def data_side(tcode, sid, stmt) -> list:
    """What stands where a statement building the model was (``x = helper(tensor, ...)``): the
    data side of a helper called on the model's tensors (its ``adapt()``, run there:
    frontend_ast/keras/data_adapt.py), or nothing."""
    import libcst as cst

    lines = tcode.model_statement_lines.get(sid) if tcode is not None else None
    if not lines:
        return []
    new = list(cst.parse_module("\n".join(lines) + "\n").body)
    return [new[0].with_changes(leading_lines=stmt.leading_lines), *new[1:]]
