"""What a tf.data pipeline's ops become in a generated PyTorch program (Keras -> PyTorch):
the facts the training printer reads from ``.map``/``.batch``/``.repeat``/``.prefetch``/``.cache``."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transpiler.cst_fast import nodes_of, walk


@dataclass
class Pipeline:
    """What a tf.data pipeline's ``.map``/``.repeat``/``.prefetch``/``.cache`` became."""

    element_map: str | None = None  # a function of one element's tensors (.map before .batch)
    batch_map: str | None = None  # a function of one batch's tensors (.map after .batch)
    repeat: str | None = None  # .repeat(count): the count's source text
    drop_last: bool = False  # .batch(n, drop_remainder=True)
    notes: list[str] = field(default_factory=list)


PIPELINE_NO_OPS = {
    "prefetch": "nothing to do for in-memory arrays (DataLoader(num_workers=...) overlaps loading)",
    "cache": "nothing to do, the arrays already live in memory",
}


def refuse_negative_steps(node, name: str) -> None:
    """A .map() function slicing with a negative step (``image[:, ::-1]``): torch tensors
    refuse such slices when run, so the pipeline is a stub (torch.flip is the spelling)."""
    for n in walk(node):
        if isinstance(n, cst.Slice) and isinstance(n.step, cst.UnaryOperation) and \
                isinstance(n.step.operator, cst.Minus):
            raise NotImplementedError(f"tf.data .map({name}): a slice with a negative step "
                                      "(torch tensors have none; torch.flip)")


def pipeline_of(printer, ds) -> Pipeline:
    """A tf.data pipeline's ops after ``from_tensor_slices``: where its ``.map()`` functions
    run (``printer._map_function`` translates them), its ``.repeat(count)`` and what
    ``.prefetch()``/``.cache()`` became."""
    pipe = Pipeline()
    batched = False
    for op in ds.ops:
        name, _, arg = op.partition(":")
        if name == "batch":
            batched = True
            pipe.drop_last = arg == "drop"
        elif name == "map":
            if reads_files(printer, arg):
                printer.features |= {"text", "file_paths"}  # (make_loader keeps the paths as str for the map)
            if pipe.repeat is not None:
                raise NotImplementedError("tf.data .map() after .repeat(count)")
            made = cst.parse_expression(arg)
            if isinstance(made, cst.Call) and any(isinstance(n, cst.Name) for a in made.args for n in walk(a)):
                # (``.map(make_fn(flag))``: the loader is printed where the pipeline is used, where
                # the call's arguments, a building function's variables, may be unbound)
                raise NotImplementedError(f"tf.data .map({arg}): a function made from variables, in a loader "
                                          "printed elsewhere")
            key = "batch_map" if batched else "element_map"
            if getattr(pipe, key) is not None:
                raise NotImplementedError(f"several tf.data .map() calls {'after' if batched else 'before'} "
                                          ".batch()")
            setattr(pipe, key, printer._map_function(arg))
        elif name == "repeat" and arg:
            if not batched:
                raise NotImplementedError("tf.data .repeat(count) before .batch() (batches across passes)")
            pipe.repeat = arg
            pipe.notes.append(f".repeat({arg}): {arg} passes over the data" + (", each reshuffled" if ds.shuffle
                                                                             else ""))
        elif name in ("prefetch", "cache"):
            pipe.notes.append(f".{name}(): {PIPELINE_NO_OPS[name]}")
    pipe.notes = sorted(set(pipe.notes), key=pipe.notes.index)
    return pipe


def mapped_function_names(module: cst.Module) -> set[str]:
    """The names a tf.data ``.map(...)`` call's arguments read (``ds.map(preprocess(True))``,
    ``ds.map(lambda x, y: augment(x), ...)``): functions the data pipeline calls, which the
    generated program needs as torch functions even where a model builder also inlines them."""
    names: set[str] = set()
    for node in nodes_of(module, cst.Call):  # (the module's index: no walk of its own)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "map":
            names |= {n.value for arg in node.args for n in walk(arg.value) if isinstance(n, cst.Name)}
    return names


def function_factory(expr: cst.BaseExpression, module: cst.Module) -> cst.FunctionDef | None:
    """The script's function a ``.map()`` argument calls to get the mapped function
    (``ds.map(preprocess_dataset(is_training))``, keras.io's MobileViT and DeiT): a top-level
    def that defines a function and returns it; None for anything else. The call stays as
    written: the def is translated whole, its inner function with it."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Name):
        return None
    fn = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == expr.func.value), None)
    if fn is None:
        return None
    inner = {s.name.value for s in fn.body.body if isinstance(s, cst.FunctionDef)}
    returns = [n for n in walk(fn.body) if isinstance(n, cst.Return) and isinstance(n.value, cst.Name)]
    return fn if inner and returns and all(r.value.value in inner for r in returns) else None


#: TensorFlow functions reading files (canonical names, printers/torch/loss_functions.py)
FILE_READERS = ("tf.io.read_file", "tf.read_file", "tf.audio.decode_wav")


def reads_files(printer, code: str) -> bool:
    """The ``.map()`` function ``code`` (a function of the script, a factory's call or a lambda)
    reads files, itself or through the script's functions it calls: its elements are paths
    (strings), which the loader keeps as str."""
    from transpiler import cst_fast
    from transpiler.printers.torch import loss_functions

    if not printer.program.source:
        return False
    module = cst_fast.parse(printer.program.source)
    aliases = loss_functions.module_aliases(module)
    defs = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    try:
        expr = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return False
    factory = function_factory(expr, module)
    todo = [factory or defs.get(expr.value) if isinstance(expr, cst.Name) or factory else expr]
    seen: set[int] = set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for call in (n for n in walk(node) if isinstance(n, cst.Call)):
            path = loss_functions.resolve(call.func, aliases)
            if path is not None and loss_functions.canonical(path) in FILE_READERS:
                return True
            if isinstance(call.func, cst.Name) and call.func.value in defs:
                todo.append(defs[call.func.value])
    return False
