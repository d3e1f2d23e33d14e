"""The input of a module whose program never says its shape: what its first layer implies.

torch modules do not declare their input's shape, and a library file (``model.py``) or a
class built from command-line sizes never feeds one data the reader can size. The layers
still say much: a ``Conv2d(3, 32, ...)`` takes ``(N, 3, H, W)``, a ``Linear(784, 10)``
``(N, 784)``, an ``Embedding`` integer ids ``(N, L)``, a batch-first ``LSTM(16, ...)``
``(N, L, 16)``. The reader then traces ``forward`` with the sizes the layer does not fix
(``H``, ``W``, ``L``) unknown (``None``): Keras builds its layers from the channels or
features alone, so the model is translated with ``keras.Input(shape=(None, None, 3))``, and
only what needs an unknown size as a number (a ``view`` flattening the spatial axes into a
``Linear``) is refused, with a stub saying which size is missing.

The first layer is the first *informative* leaf the constructor makes (activations,
dropout, padding and pooling say nothing about the channels); a guess the forward does not
accept fails the trace like any wrong shape, and the model is a stub naming the reason.

Imports no deep-learning framework.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from transpiler.frontend_ast.interp import Unknown

#: torch layer class → (what it implies: "channels" with a spatial rank, "features",
#: "ids", "sequence")
_RANKED = re.compile(r"^(Conv|ConvTranspose|LazyConv|BatchNorm|InstanceNorm|LazyBatchNorm)([123])d$")


def _txt(value) -> str:
    """A size for a message: its source expression (``in_channels``), never marking it."""
    from transpiler.ir import sizes

    return sizes.expr_text(value.expr) if isinstance(value, sizes.Size) else str(value)


def implied_input(leaf) -> tuple[tuple, str, str] | None:
    """``(shape without the batch axis, dtype, what implied it)`` for a leaf module
    (``values.Mod``) whose input the layer fixes up to unknown sizes, else None."""
    layer, cls = leaf.layer, leaf.cls_name
    if layer is None:
        return None
    feats = layer.in_features
    m = _RANKED.match(cls)
    if m and isinstance(feats, int):
        rank = int(m.group(2))
        if m.group(1).endswith("BatchNorm") and rank == 1:
            return (feats,), "float32", f"nn.{cls}({_txt(feats)})"  # (N, C): the common use
        return (feats, *[None] * rank), "float32", f"nn.{cls}({_txt(feats)}, ...)"
    if layer.op == "embedding":
        return (None,), "int64", f"nn.{cls}"
    if layer.kind == "rnn_cell" and isinstance(feats, int):  # (one step: (N, input_size))
        return (feats,), "float32", f"nn.{cls}({_txt(feats)}, ...)"
    if layer.kind == "rnn" and isinstance(feats, int):
        return (None, feats), "float32", f"nn.{cls}({_txt(feats)}, ..., batch_first=True)"
    if layer.op == "dense" and isinstance(feats, int):
        return (feats,), "float32", f"nn.{cls}({_txt(feats)}, ...)"
    if layer.kind == "attention" and isinstance(feats, int):  # (batch_first=True: (N, L, E))
        return (None, feats), "float32", f"nn.{cls}({_txt(feats)}, ..., batch_first=True)"
    shape = layer.extra.get("normalized_shape") if layer.op == "layer_norm" else None
    if shape and all(isinstance(s, int) for s in shape):
        return tuple(shape), "float32", f"nn.{cls}({', '.join(map(_txt, shape))})"
    return None


def first_layer_input(leaves) -> tuple[tuple, str, str] | None:
    """The input the first informative of ``leaves`` (in construction order) implies."""
    for leaf in leaves:
        found = implied_input(leaf)
        if found is not None:
            return found
    return None


def as_sequence(mod, implied):
    """``implied`` (a last-axis layer's ``(F,)``: nn.Linear, nn.LayerNorm) as ``(L, F)`` when
    ``mod`` holds a sequence layer (a batch_first RNN or attention reads (N, L, F)): a
    transformer block normalises or projects its sequence before its attention does."""
    from transpiler.frontend_ast.torch.support import _walk

    if implied is None or len(implied[0]) != 1 or implied[1] != "float32":
        return implied
    if not any(m.kind == "leaf" and m.layer is not None and m.layer.kind in ("rnn", "attention")
               for _, m in _walk(mod)):
        return implied
    shape, dtype, why = implied
    return (None, *shape), dtype, f"{why} (a sequence: the module holds a sequence layer)"


def steps_cells(mod) -> list[str]:
    """The recurrent cells (``nn.LSTMCell``...) ``mod`` holds: stepped by forward's own loop
    over the time axis, which the translation unrolls for a length it must know."""
    from transpiler.frontend_ast.torch.support import _walk

    return list(dict.fromkeys(m.cls_name for _, m in _walk(mod)
                              if m.kind == "leaf" and m.layer is not None and m.layer.kind == "rnn_cell"))


def cell_loop_message(mod) -> str:
    """Why a module of recurrent cells has no input shape here."""
    return (f"no input shape: its {', '.join(steps_cells(mod))} step through the input in forward's own loop, "
            "unrolled for the sequence length, which this file does not fix (no INPUT_SHAPE, no data of a "
            "literal shape fed to it); give INPUT_SHAPE = (L, F)")


def any_input(mod) -> tuple[tuple, str, str] | None:
    """A module whose layers all take any number of channels (Dropout, activations; issue 19
    item 1): the Keras layers build on their first call, so it needs no input shape. Traced for
    an input of unknown sizes, of the rank of the largest tensor it holds (a positional table
    of (L, 1, E) added to its input: rank 3), else a (N, C) input; None for a module holding
    no layer at all (a mixin: ``super().forward``)."""
    from transpiler.frontend_ast.torch.support import _walk, _walk_params

    leaves = [m for _, m in _walk(mod) if m.kind == "leaf"]
    if not leaves:
        return None
    ranks = [len(p.shape) for _, p in _walk_params(mod) if getattr(p, "shape", None)]
    rank = max(ranks, default=2)
    names = ", ".join(dict.fromkeys(m.cls_name for m in leaves))
    held = f"of rank {rank} as the tensor it holds" if ranks else "of rank 2"
    return (None,) * (rank - 1), "float32", f"its layers ({names}) take any input; traced for one {held}"


def one_input(fe, mod, forward: cst.FunctionDef, names: list[str], span) -> list[tuple[tuple, str]]:
    """The input shape of a module of one input its file never gives (``TorchFrontend.
    _input_specs``): what the layer forward first hands it to implies, else the first layer
    built (a last-axis layer's as a sequence in a module of sequence layers: ``as_sequence``),
    else any input (``any_input``); the assumption is kept for the report
    (``program.from_torch.lazy_inputs``). Raises FrontendError when none fits, and for recurrent
    cells stepped over the input (their loop is unrolled for a length the file must fix)."""
    from transpiler.frontend_ast.keras.frontend import FrontendError
    from transpiler.frontend_ast.torch.support import _walk

    lazy = fe.program.from_torch.lazy_inputs
    fed = inputs_by_parameter(mod, forward, names) if mod.kind == "user" else None
    if not fed and steps_cells(mod):
        raise FrontendError(cell_loop_message(mod), span)
    implied = fed[0] if fed else first_layer_input(m for _, m in _walk(mod) if m.kind == "leaf")
    implied = as_sequence(mod, implied)
    if implied is not None:  # (unknown sizes: None; the report says so)
        shape, dtype, why = implied
        lazy[fe.graph.name] = (describe(shape, dtype), f"its first layer {why} implies")
        return [(shape, dtype)]
    implied = any_input(mod) if mod.kind == "user" else None
    if implied is None:
        raise FrontendError(no_layer_message(mod), span)
    shape, dtype, why = implied  # (layers that take any input: they build on the first call)
    fe.graph.from_torch.any_input = True  # (no rank the Keras class insists on: runtime call_module)
    lazy[fe.graph.name] = (f"({', '.join(['N'] + [f'd{i}' for i in range(1, len(shape) + 1)])}) {dtype}", why)
    return [(shape, dtype)]


#: builtins a forward hands its input to only to read about it (its length, its type)
_READS_ONLY = frozenset({"len", "isinstance", "print", "type", "id", "hasattr"})


def _fed_module(mod, fn: cst.FunctionDef, name: str, depth: int = 0):
    """The submodule the parameter ``name`` of ``mod``'s method ``fn`` is first handed as it
    is (``self.encoder(x1)``, also through a method of the class: ``self.forward_once(x1)``),
    in source order; None when it is first handed to something else."""
    from transpiler.cst_fast import nodes_of

    kids = dict(mod.children())
    calls = sorted((c for c in nodes_of(fn, cst.Call)
                    if any(isinstance(a.value, cst.Name) and a.value.value == name and not a.keyword and not a.star
                           for a in c.args)), key=lambda c: _position(fn, c))
    for call in calls:
        func = call.func
        if isinstance(func, cst.Name) and func.value in _READS_ONLY:  # (``len(src)``: not where src goes)
            continue
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return None
        attr = func.attr.value
        if attr in kids:
            return kids[attr]
        method = mod.cls.method(attr) if mod.cls is not None else None
        if method is None or depth > 4:
            return None
        index = next(i for i, a in enumerate(call.args) if isinstance(a.value, cst.Name) and a.value.value == name)
        params = method.params.params[1:]
        return _fed_module(mod, method, params[index].name.value, depth + 1) if index < len(params) else None
    return None


#: the arguments of nn.MultiheadAttention that are masks, and their positions
_MASK_ARGS = {"key_padding_mask": 3, "attn_mask": 5}


def _fed_mask(mod, fn: cst.FunctionDef, name: str, depth: int = 0) -> bool:
    """True when the parameter ``name`` of ``mod``'s method ``fn`` reaches an attention only as
    one of its masks (``attn_mask=``, ``key_padding_mask=``), handed on as it is through the
    forwards of the submodules and the methods that take it (nn.Transformer's ``src_mask``):
    a (L, S) or (N, S) mask, not a sequence."""
    from transpiler.cst_fast import nodes_of

    if depth > 8 or fn is None:
        return False
    kids = dict(mod.children())
    hits = 0
    for call in nodes_of(fn, cst.Call):
        for i, a in enumerate(call.args):
            if not (isinstance(a.value, cst.Name) and a.value.value == name) or a.star:
                continue
            func = call.func
            looped = _loop_items(fn, func, kids) if isinstance(func, cst.Name) else None
            if looped:  # (``for layer in self.layers: x = layer(x, mask=mask)``: each layer's forward)
                if not all(m.kind == "user" and _fed_mask(m, m.cls.method("forward"), _param_of(
                        m.cls.method("forward"), a, i), depth + 1) for m in looped):
                    return False
                hits += 1
                continue
            if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                    and func.value.value == "self"):
                return False
            child = kids.get(func.attr.value)
            if child is not None and child.kind == "leaf":
                if child.layer is None or child.layer.kind != "attention":
                    return False
                key = a.keyword.value if a.keyword else next((k for k, p in _MASK_ARGS.items() if p == i), None)
                if key not in _MASK_ARGS:
                    return False
                hits += 1
                continue
            if child is not None and child.kind == "user":
                target, method = child, child.cls.method("forward")
            elif child is None and mod.cls is not None and mod.cls.method(func.attr.value) is not None:
                target, method = mod, mod.cls.method(func.attr.value)
            elif child is not None and child.kind in ("module_list", "sequential"):
                return False
            else:
                return False
            params = [p.name.value for p in method.params.params[1:]]
            param = a.keyword.value if a.keyword else (params[i] if i < len(params) else None)
            if param not in params or not _fed_mask(target, method, param, depth + 1):
                return False
            hits += 1
    return hits > 0


def _param_of(method, arg, index: int):
    """The parameter of ``method`` an argument (keyword or at ``index``) binds, else None."""
    if method is None:
        return None
    params = [p.name.value for p in method.params.params[1:]]
    name = arg.keyword.value if arg.keyword else (params[index] if index < len(params) else None)
    return name if name in params else None


def _loop_items(fn, func: cst.Name, kids: dict) -> list | None:
    """The modules a loop variable ``func`` takes (``for func in self.layers``: a ModuleList or
    Sequential child of ``fn``'s module), else None."""
    from transpiler.cst_fast import nodes_of

    for loop in nodes_of(fn, cst.For):
        it = loop.iter
        if isinstance(loop.target, cst.Name) and loop.target.value == func.value and \
                isinstance(it, cst.Attribute) and isinstance(it.value, cst.Name) and it.value.value == "self":
            child = kids.get(it.attr.value)
            if child is not None and child.kind in ("module_list", "sequential"):
                items = child.items.values() if isinstance(child.items, dict) else child.items
                return list(items) or None
    return None


def _position(fn, node) -> int:
    """``node``'s offset in ``fn``'s code (source order of calls)."""
    code = cst.Module([]).code_for_node(fn)
    return code.find(cst.Module([]).code_for_node(node))


def inputs_by_parameter(mod, forward: cst.FunctionDef, names: list[str]) -> list | None:
    """A forward of several inputs (``forward(self, input1, input2)``): per parameter, the
    input its first layer implies (``first_layer_input`` over the submodule it is first handed,
    ``_fed_module``); None when one of them is first handed to anything else (a ``torch.cat``,
    a tensor method): its shape is then unknown."""
    from transpiler.frontend_ast.torch.support import _walk

    found = []
    for name in names:
        if _fed_mask(mod, forward, name):
            # (boolean, torch's convention: True = may not attend; a float 0 / -inf mask given
            # to it is the same mask, other float values would not be added as torch adds them)
            found.append(((None,), "bool", "an attention's mask (True = may not attend)"))
            continue
        child = _fed_module(mod, forward, name)
        implied = None if child is None else first_layer_input(m for _, m in _walk(child) if m.kind == "leaf")
        if implied is None:
            return None
        found.append(implied)
    return found


def unknown_inputs_message(mod, forward: cst.FunctionDef, names: list[str]) -> str:
    """Why a forward of several inputs has no input shapes: which input is first handed to
    something other than a layer, and how to give them."""
    unknown = [n for n in names if _fed_module(mod, forward, n) is None]
    which = ", ".join(unknown) or ", ".join(names)
    return (f"cannot tell the shapes of the model's inputs {', '.join(names)}: torch modules do not declare them, "
            f"and {which} {'is' if len(unknown) == 1 else 'are'} first handed to something other than a layer "
            f"(whose first size would say it); add a module-level INPUT_SHAPE = ({', '.join(['(...)'] * len(names))}) "
            "(one example per input, without the batch axis)")


def child_blocks(mod) -> dict[str, tuple[str, str]]:
    """The user-module children of ``mod`` its ``__init__`` makes with arguments of literals and
    its own parameters only (``self.res1 = ResidualBlock(128)``, ``self.conv = Block(cin, 8)``):
    attribute → (class name, the call's arguments as source text). A Keras subclass of
    ``mod`` may make its own class's block there with the same arguments."""
    from transpiler.cst_fast import nodes_of

    init = mod.cls.method("__init__") if mod.cls is not None else None
    if init is None:
        return {}
    params = {p.name.value for p in init.params.params[1:]} | {"True", "False", "None"}
    kids = {k: m for k, m in mod.children() if m.kind == "user"}
    found: dict[str, tuple[str, str]] = {}
    for assign in nodes_of(init, cst.Assign):
        if len(assign.targets) != 1 or not isinstance(assign.value, cst.Call):
            continue
        target, call = assign.targets[0].target, assign.value
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and
                target.value.value == "self" and isinstance(call.func, cst.Name)):
            continue
        attr = target.attr.value
        child = kids.get(attr)
        if child is None or child.cls_name != call.func.value or attr in found or any(a.star for a in call.args):
            continue
        if all(n.value in params for a in call.args for n in nodes_of(a.value, cst.Name)) and \
                not any(isinstance(n, cst.Attribute) for a in call.args for n in nodes_of(a.value, cst.Attribute)):
            found[attr] = (child.cls_name, ", ".join(cst.Module([]).code_for_node(a).strip().rstrip(",").strip()
                                                     for a in call.args))
    return found


def _axis_names(value) -> str:
    """``(N, 3, H, W)``-style text of ``value``'s shape, the unknown sizes named by their axis."""
    layout = value.layout or ""
    names = []
    for i, d in enumerate(value.shape):
        if i == 0:
            names.append("N")
        elif d is not None:
            names.append(_txt(d))
        else:
            names.append(layout[i] if len(layout) == len(value.shape) and layout[i] not in "NC" else "?")
    return f"({', '.join(names)})"


def axis_size(value, index: int):
    """``x.size(i)`` / ``x.shape[i]``: the size, or an ``AxisSize`` saying it is not fixed here
    (the model's input shape is unknown: any use of it as a number is refused there; a slice
    bound may be it, ``self.pos_emb[:, :t]``: ``axis_of``). A slice (``x.size()[:2]``) is the
    tuple of those sizes, the batch axis's a ``BatchDim``."""
    if isinstance(index, slice):
        from transpiler.frontend_ast.interp import BatchDim

        return tuple(BatchDim(value) if i == 0 else axis_size(value, i) for i in range(len(value.shape))[index])
    size = value.shape[index]
    if size is None:
        axis = index % len(value.shape)
        return AxisSize(f"axis {axis} of a tensor of shape {_axis_names(value)}: a size this "
                                 "file does not fix (the model's input shape is unknown here)", value, axis)
    return size


@dataclass(eq=False)
class AxisSize(Unknown):
    """The size of axis ``axis`` of the tensor ``value`` (an IR Value), unknown until the program runs."""

    value: object = None
    axis: int = 0


def axis_of(value):
    """``(tensor value, axis)`` when ``value`` is the run-time size of a tensor's axis
    (``axis_size``, also read back through a name), else None."""
    from transpiler.frontend_ast.interp import BatchDim
    from transpiler.ir.graph import Value

    while value is not None:
        if isinstance(value, AxisSize):
            return value.value, value.axis
        if isinstance(value, BatchDim) and isinstance(value.value, Value):  # (``x.size(0)``)
            return value.value, 0
        value = getattr(value, "origin", None)
    return None


def flatten_message(value, what: str) -> str:
    """Why ``what`` (a view/reshape/flatten) is refused on ``value`` of unknown sizes."""
    return (f"{what} of a tensor of shape {_axis_names(value)}: it needs the sizes this file does not fix "
            "(the model's input shape is unknown here: give it as INPUT_SHAPE, or translate the script "
            "that feeds the model data)")


def describe(shape: tuple, dtype: str) -> str:
    """``(N, 3, H, W) float32`` for an implied input shape (without the batch axis)."""
    letters = {1: ["L"], 2: ["H", "W"], 3: ["D", "H", "W"]}
    unknown = [i for i, d in enumerate(shape) if d is None]
    names = letters.get(len(unknown), [f"d{i}" for i in range(len(unknown))])
    if len(shape) == 2 and shape[0] is None and shape[1] is not None:
        names = ["L"]
    if len(shape) == len(unknown) and len(shape) in (1, 2):  # (nothing known: a sequence's letters)
        names = ["C"] if len(shape) == 1 else ["L", "C"]
    it = iter(names)
    dims = ["N"] + [next(it) if d is None else _txt(d) for d in shape]
    return f"({', '.join(dims)}) {dtype}"


#: the numbers a required constructor size is traced with: distinct primes (no two parameters
#: compare equal, nor one a round literal of the program, by accident; a model built for them
#: takes no data shape from the program: ``TorchFrontend._input_specs``); the printed model
#: never holds them (a parameter whose number the translation needed is refused: ``check_required``)
PLACEHOLDERS = (101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157)


def _init_params(cls):
    init = cls.method("__init__")
    if init is None:
        return None
    ps = init.params
    if ps.star_arg not in (None,) and not isinstance(ps.star_arg, cst.MaybeSentinel) or ps.star_kwarg is not None \
            or ps.kwonly_params or ps.posonly_params:
        return None
    return list(ps.params[1:])


def named_argument(value, name: str):
    """A constructor argument as the traced code sees it: a size named after its parameter
    (``sizes.named``), and a float too (``dropout=0.1``: a ``sizes.Scalar``, so a rate prints as
    the parameter and the Keras class takes the caller's, instead of refusing any other)."""
    from transpiler.ir import sizes

    if isinstance(value, float) and type(value) is float:
        return sizes.Scalar(value, sizes.Sym(name))
    return sizes.named(value, name)


def constructor_sizes(fe, cls) -> dict | None:
    """A module class whose constructor takes required arguments (``Net(upscale_factor)``) and
    that nothing in the file builds: its arguments as sizes with provenance, each required one a
    placeholder number named after its parameter (``sizes.named``), the others their defaults;
    None when every parameter has a default (built as before) or the constructor takes
    ``*args``/``**kwargs``."""
    from transpiler.ir import sizes

    params = _init_params(cls)
    if not params or all(p.default is not None for p in params) or len(params) > len(PLACEHOLDERS):
        return None
    args = {}
    fe.program.from_torch.placeholder_params[cls.node.name.value] = \
        [p.name.value for p in params if p.default is None]
    for i, p in enumerate(params):
        if p.default is None:
            fields = config_object(fe, cls, p)
            args[p.name.value] = fields if fields is not None else _placeholder(cls, i, p.name.value)
        else:
            try:
                default = fe._eval(p.default, fe.globals)
            except Exception:  # noqa: BLE001 - (a default the reader cannot evaluate: not built)
                return None
            args[p.name.value] = named_argument(default, p.name.value)
    return args


def _placeholder(cls, i: int, name: str):
    """The size a required constructor parameter ``name`` (the ``i``-th) is traced with: the
    ``i``-th placeholder prime, or ``COUNT_PLACEHOLDER`` for a repeated block's count
    (frontend_ast/torch/repeated_blocks)."""
    from transpiler.frontend_ast.torch.repeated_blocks import COUNT_PLACEHOLDER, counted_names
    from transpiler.ir import sizes

    value = COUNT_PLACEHOLDER if name in counted_names(cls) else PLACEHOLDERS[i]
    return sizes.named(value, name, kind="placeholder")


def config_object(fe, cls, param):
    """A required constructor parameter the constructor reads as an object of sizes
    (``config.n_embd``; handed on whole to a block: ``Block(config)``; kept: ``self.config =
    config``): a ``fields.Fields`` whose attribute defaults are those of the config class the
    parameter's annotation names (``config: GPTConfig``, a dataclass of the file); None for a
    parameter used any other way (a size, a flag)."""
    from transpiler.cst_fast import nodes_of
    from transpiler.ir.fields import Fields

    init = cls.method("__init__")
    name = param.name.value
    reads = [a for a in nodes_of(init.body, cst.Attribute) if isinstance(a.value, cst.Name) and a.value.value == name]
    if not reads:
        return None
    uses = sum(1 for n in nodes_of(init.body, cst.Name) if n.value == name) - \
        sum(1 for a in nodes_of(init.body, cst.Attribute) if a.attr.value == name)  # (``self.config``)
    passed = sum(1 for c in nodes_of(init.body, cst.Call) for a in c.args
                 if isinstance(a.value, cst.Name) and a.value.value == name and not a.star)
    kept = sum(1 for a in nodes_of(init.body, cst.Assign)
               if isinstance(a.value, cst.Name) and a.value.value == name)
    rebound = sum(1 for a in nodes_of(init.body, cst.Assign)  # (``config = self._fill(config)``)
                  for t in a.targets if isinstance(t.target, cst.Name) and t.target.value == name
                  and isinstance(a.value, cst.Call) and any(
                      isinstance(x.value, cst.Name) and x.value.value == name for x in a.value.args))
    if uses != len(reads) + passed + kept + rebound:
        return None
    from transpiler.frontend_ast.torch.repeated_blocks import COUNT_PLACEHOLDER, counted_names

    counted = {c.split(".", 1)[1] for c in counted_names(cls) if c.startswith(name + ".")}
    return Fields(name, _config_defaults(fe, param), counted=counted, counted_value=COUNT_PLACEHOLDER)


def _config_defaults(fe, param) -> dict:
    """``config: GPTConfig``: the class-level defaults of the file's class ``GPTConfig``
    (``n_embd: int = 768``, ``vocab_size = 50257``), evaluated; {} without one."""
    ann = param.annotation.annotation if param.annotation is not None else None
    ref = fe.classes.get(ann.value) if isinstance(ann, cst.Name) else None
    if ref is None or ref.is_module:
        return {}
    found = {}
    for stmt in ref.node.body.body:
        for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
            if isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
                target, value = small.target.value, small.value
            elif isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                    isinstance(small.targets[0].target, cst.Name):
                target, value = small.targets[0].target.value, small.value
            else:
                continue
            try:
                found[target] = fe._eval(value, fe.globals)
            except Exception:  # noqa: BLE001 - (a default the reader cannot evaluate: a placeholder)
                found[target] = None
    return found


def required_params(cls, program=None) -> list[str]:
    """The constructor parameters traced with a placeholder number (those without a default,
    or those a call gave a run-time value: ``call_sizes``)."""
    if program is not None and cls.node.name.value in program.from_torch.placeholder_params:
        return list(program.from_torch.placeholder_params[cls.node.name.value])
    return [p.name.value for p in (_init_params(cls) or []) if p.default is None]


def call_sizes(fe, cls, call: cst.Call) -> dict | None:
    """``model = Net(opt.upscale_factor, 3)``: a class built from values known at run time only
    (command-line arguments). Its constructor's arguments as sizes with provenance: each given
    a run-time value is a placeholder named after its parameter (``constructor_sizes``), the
    others what the call or the default gives. None when no argument is a run-time value, or
    the call cannot be bound."""
    from transpiler.frontend_ast.interp import Unknown
    from transpiler.ir import sizes

    params = _init_params(cls)
    if params is None or any(a.star for a in call.args):
        return None
    try:
        pos = [_run_time_value(fe, a.value) for a in call.args if a.keyword is None]
        kw = {a.keyword.value: _run_time_value(fe, a.value) for a in call.args if a.keyword is not None}
    except Exception:  # noqa: BLE001 - (not read statically)
        return None
    names = [p.name.value for p in params]
    if len(pos) > len(names) or set(kw) - set(names):
        return None
    given = dict(zip(names, pos), **kw)
    unknown = [n for n, v in given.items() if isinstance(v, Unknown)]
    if not unknown or len(names) > len(PLACEHOLDERS):
        return None
    args = {}
    for i, p in enumerate(params):
        name = p.name.value
        if name in unknown:  # (an object read as config.<attr>: ir/fields.py)
            fields = config_object(fe, cls, p) if p.default is None else None
            args[name] = fields if fields is not None else _placeholder(cls, i, name)
        elif name in given:
            args[name] = named_argument(given[name], name)
        elif p.default is not None:
            try:
                args[name] = named_argument(fe._eval(p.default, fe.globals), name)
            except Exception:  # noqa: BLE001
                return None
        else:
            return None
    fe.program.from_torch.placeholder_params[cls.node.name.value] = unknown
    return args


def _run_time_value(fe, node):
    """A constructor argument of ``call_sizes``: its static value, or Unknown when it is computed
    from data loaded at run time (``labels.max().item() + 1``, ``len(vocab)``: the reader raises
    Unsupported on a call of an unknown value), a size the caller gives as any other run-time one."""
    from transpiler.frontend_ast.interp import Unknown
    from transpiler.frontend_ast.torch.modules import Unsupported

    try:
        return fe._eval(node, fe.globals)
    except Unsupported as exc:
        return Unknown(f"computed at run time ({exc})")


def unbuilt_reason(cls, exc) -> str:
    """Why a module class nothing builds could not be built for named sizes either."""
    required = required_params(cls)
    if not required:
        return str(exc)
    return (f"its constructor takes {', '.join(required)} (no default), which this file does not give; "
            f"built for them as sizes, it failed: {exc}")


def check_required(cls, args: dict, program=None) -> None:
    """Refuse a class built for placeholder constructor sizes (``constructor_sizes``) when the
    translation used one's number (a loop count, a comparison, a float): the output would hold
    the placeholder, not the caller's value."""
    from transpiler.frontend_ast.torch.modules import Unsupported
    from transpiler.ir import sizes

    from transpiler.ir import fields

    used = []
    for name in required_params(cls, program):
        value = args.get(name)
        if not fields.free(value):
            why = fields.specialised(value)
            used.append(f"{name}: {', '.join(why) if why else 'not a size'}")
    if used:
        raise Unsupported(f"built for its constructor's {', '.join(u.split(':')[0] for u in used)} as sizes, the "
                          f"translation needs their numbers ({'; '.join(used)}); build it in the script with "
                          "literal arguments")


def is_library(module: cst.Module) -> bool:
    """A file that only defines things (imports, classes, functions, constants; no statement
    that runs the program, no ``if __name__ == "__main__":``): a ``model.py`` other files import.
    Each of its module classes is translated on its own, also one another class nests (main.py
    may import either)."""
    for stmt in module.body:
        if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
            continue
        if isinstance(stmt, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Import, cst.ImportFrom, cst.Assign, cst.AnnAssign))
                or isinstance(s, cst.Expr) and isinstance(s.value, (cst.SimpleString, cst.ConcatenatedString))
                for s in stmt.body):
            if not any(isinstance(s, (cst.Assign, cst.AnnAssign)) and s.value is not None
                       and next(iter(_calls(s.value)), None) is not None and not _constant_call(s.value)
                       for s in stmt.body):
                continue
        return False
    return True


def _calls(node):
    from transpiler.cst_fast import nodes_of

    return nodes_of(node, cst.Call)


def _constant_call(value) -> bool:
    """A module-level value computed by a call that builds no model and runs nothing of the
    program's (``math.sqrt(2)``, ``namedtuple(...)``, ``logging.getLogger(...)``): anything
    but a call of a name the file defines or a torch constructor is taken as such."""
    return not any(isinstance(c.func, cst.Name) and c.func.value[:1].isupper() for c in _calls(value))


def no_layer_message(mod) -> str:
    """Why a module has no input shape at all: nothing in the file gives one and none of its
    layers takes a fixed number of channels or features (a mixin calling ``super().forward``,
    a module of activations and pads only)."""
    from transpiler.frontend_ast.torch.support import _walk

    leaves = [m.cls_name for _, m in _walk(mod) if m.kind == "leaf"]
    what = (f"its layers ({', '.join(dict.fromkeys(leaves))}) take any number of channels" if leaves
            else "it holds no layer of its own")
    return (f"no input shape: this file gives none (no INPUT_SHAPE, no data fed to it) and {what}; "
            "translate the script that builds it, or add INPUT_SHAPE = (C, H, W)")
