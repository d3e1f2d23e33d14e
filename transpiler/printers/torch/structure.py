"""Print a model whose source had structure (Layer subclasses, lists of layers, block
helpers) as nested ``nn.Module`` classes.

``ir.modules.build_structure`` decided which scopes are modules; this prints one class per
user class or helper function (instances that differ only in sizes share one class whose
``__init__`` takes those sizes), ``nn.ModuleList`` for list attributes (looped over in
``forward`` where the source chained them), and the model's own class on top.
"""

from __future__ import annotations

import inspect
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Callable

from transpiler.ir import sizes
from transpiler.ir.graph import Graph, Node, Value
from transpiler.ir.modules import CallGroup, Member, ModuleInfo, Structure, level_items
from transpiler.printers.torch import ops as torch_ops
from transpiler.printers.torch.given_models import holds_given
from transpiler.printers.code import lit

#: the leading positional parameters of torch constructors, to name a size that varies
_TORCH_POSITIONAL = {
    "nn.Linear": ("in_features", "out_features"),
    "nn.Conv1d": ("in_channels", "out_channels", "kernel_size", "stride", "padding"),
    "nn.Conv2d": ("in_channels", "out_channels", "kernel_size", "stride", "padding"),
    "nn.Conv3d": ("in_channels", "out_channels", "kernel_size", "stride", "padding"),
    "nn.ConvTranspose1d": ("in_channels", "out_channels", "kernel_size", "stride", "padding"),
    "nn.ConvTranspose2d": ("in_channels", "out_channels", "kernel_size", "stride", "padding"),
    "nn.BatchNorm1d": ("num_features",), "nn.BatchNorm2d": ("num_features",),
    "nn.BatchNorm3d": ("num_features",), "nn.LayerNorm": ("normalized_shape",),
    "nn.Embedding": ("num_embeddings", "embedding_dim"), "nn.LSTM": ("input_size", "hidden_size"),
    "nn.GRU": ("input_size", "hidden_size"), "nn.RNN": ("input_size", "hidden_size"),
    "nn.Dropout": ("p",), "nn.MaxPool2d": ("kernel_size", "stride"), "nn.AvgPool2d": ("kernel_size", "stride"),
}


@dataclass
class ClassText:
    """One printed module class: its name, its source definition and its text."""

    name: str
    source: str | None  # the user's class or helper function it replaces
    text: str


@dataclass
class _Instance:
    info: ModuleInfo
    init: list[str]
    reset: list[str]
    forward: list[str]
    args: list[str]  # forward's parameter names
    imports: set[str]
    channels: int | None  # the first input's channel (feature) size
    rank: int = 0  # the first input's rank
    ctor: list[str] = field(default_factory=list)  # filled once the class is decided
    #: the constructor parameters its sizes name (``filters``): its own parameters, whose
    #: argument the caller's code prints (sizes with provenance)
    sized: list[str] = field(default_factory=list)
    #: sizes from outside printed as numbers in ``init``: specialised unless they become
    #: constructor arguments (the input channels)
    outside: list = field(default_factory=list)
    #: the run-time sizes among ``sized`` that are not its own parameters: the caller passes them
    runtime: dict = field(default_factory=dict)


def _emit(node: Node, ref: str) -> torch_ops.Emission:
    return torch_ops.emit_as(node, ref)


@dataclass(eq=False, repr=False)
class ModuleCall(Node):
    """A node of the printer's own graph of one module's ``forward``: a call of a child module
    (the nodes of that call run inside it)."""

    group: CallGroup | None = None


def _forward_graph(st: Structure, graph: Graph, prefix: tuple, inputs: list[Value], outputs: list[Value],
                   refs: dict[int, str], emissions: dict[int, torch_ops.Emission], name: str,
                   logits_outputs: dict[int, str] | None = None) -> Graph:
    """The graph one call of a module runs: its nodes, child calls as single nodes (the model's
    own call: with the outputs ``forward`` returns as logits)."""
    nodes = []
    for item in level_items(st, graph, prefix):
        if isinstance(item, CallGroup):
            node = ModuleCall("module_call", item.info.ref, list(item.inputs), list(item.outputs), group=item)
            emissions[id(node)] = _call_emission(f"self.{item.info.ref}", len(item.inputs), len(item.outputs))
            if not prefix:  # comments at the builder's line that called the helper
                node.comments = [c for n in item.nodes for c in n.from_keras.site_comments]
            nodes.append(node)
        else:
            emissions[id(item)] = _emit(item, f"self.{refs[item.name]}" if item.name in refs else
                                        f"self.{item.name}")
            nodes.append(item)
    return Graph(name, inputs=list(inputs), outputs=list(outputs), nodes=_fold_loops(nodes, emissions, st),
                 logits_outputs={} if logits_outputs is None else logits_outputs)


def _call_emission(ref: str, n_in: int, n_out: int) -> torch_ops.Emission:
    if n_out == 1:
        # a module call takes named values: never nested into another module call
        return torch_ops.Emission(call=lambda ins: f"{ref}({', '.join(ins)})")
    return torch_ops.Emission(statements=lambda ins, outs: [f"{', '.join(outs)} = {ref}({', '.join(ins)})"])


def _fold_loops(nodes: list[Node], emissions, st: Structure) -> list[Node]:
    """``self.blocks[0](x)``, ``self.blocks[1](...)``, ... chained over a whole list
    attribute → one ``for block in self.blocks: x = block(x)``."""
    out: list[Node] = []
    i = 0
    while i < len(nodes):
        run = _chain_at(nodes, i, st)
        if run:
            first, last = nodes[i], nodes[i + len(run) - 1]
            attr = run[0]
            var = _loop_var(attr, first)
            loop = Node("module_loop", attr, list(first.inputs), list(last.outputs))

            def statements(ins, outs, attr=attr, var=var):
                lines = [] if ins[0] == outs[0] else [f"{outs[0]} = {ins[0]}"]
                return lines + [f"for {var} in self.{attr}:", f"    {outs[0]} = {var}({outs[0]})"]

            emissions[id(loop)] = torch_ops.Emission(statements=statements)
            out.append(loop)
            i += len(run)
            continue
        out.append(nodes[i])
        i += 1
    return out


def _chain_at(nodes: list[Node], i: int, st: Structure) -> list[str]:
    """The list attribute whose every item is called, in order and chained, from nodes[i]."""
    node = nodes[i]
    group = node.group if isinstance(node, ModuleCall) else None
    if group is None or group.info.scope.index != 0 or len(node.inputs) != 1 or len(node.outputs) != 1:
        return []
    parent = next((m for m in _parent_members(st, group.info) if m.items and m.attr == group.info.scope.attr), None)
    if parent is None:
        return []
    n = len(parent.items)
    if i + n > len(nodes):
        return []
    for k in range(n):
        item = nodes[i + k]
        g = item.group if isinstance(item, ModuleCall) else None
        if g is None or g.info is not parent.items[k].scope or len(item.inputs) != 1 or len(item.outputs) != 1:
            return []
        if k and item.inputs[0] is not nodes[i + k - 1].outputs[0]:
            return []
        if k < n - 1 and _used_elsewhere(nodes, item.outputs[0], nodes[i + k + 1]):
            return []
    return [parent.attr] * n


def _used_elsewhere(nodes: list[Node], value: Value, only: Node) -> bool:
    return any(v is value for node in nodes if node is not only for v in node.inputs)


def _parent_members(st: Structure, info: ModuleInfo) -> list[Member]:
    def find(node: ModuleInfo):
        if info in node.children:
            return node
        for c in node.children:
            hit = find(c)
            if hit is not None:
                return hit
        return None

    parent = find(st.root)
    return parent.members if parent is not None else []


def _loop_var(attr: str, node: Node) -> str:
    base = attr[:-1] if attr.endswith("s") and len(attr) > 2 else "module"
    if base in ("self", "x", "torch", "nn", "F", "module_"):
        base = "module"
    return base


class StructurePrinter:
    """Prints the classes of one model with structure; ``classes`` is shared by all the
    models of a script (class name → text), so a class both use is printed once."""

    def __init__(self, graph: Graph, st: Structure, classes: dict[str, str], source_file: str):
        self.forward_buffers: list[str] = []
        self.graph = graph
        self.st = st
        self.classes = classes
        self.source_file = source_file
        self.out: list[ClassText] = []
        self.imports: set[str] = set()
        #: id(ModuleInfo) → its constructor call, printed where the parent's code is
        #: (``ConvBlock(filters * 2, 16)``: an argument is a size of the parent's names)
        self.ctor_of: dict[int, Callable[[], str]] = {}
        #: the models of the program the model takes as ``__init__`` arguments (Keras shares their
        #: layers: ``features = encoder(inputs)`` with the program's ``encoder``)
        self.given: list[str] = []
        #: the sizes the program computes at run time that the graph reads (issue 18 item 1):
        #: a child module reading one (a Layer's ``Dense(num_classes)``) takes it as an argument
        self.runtime = sizes.runtime_sizes_in([
            [n.attrs, [v.shape for v in n.inputs], [v.shape for v in n.outputs]] for n in graph.nodes])

    def run(self) -> list[ClassText]:
        """Decide and print every child module's class, innermost classes first."""
        infos: list[tuple[str, ModuleInfo]] = []

        def walk(info: ModuleInfo, above: tuple[str, ...]) -> None:
            for child in info.children:
                if holds_given(info, child):  # (the program's own instance: no class)
                    self.given.append(child.scope.given_as)
                    self.ctor_of[id(child)] = lambda name=child.scope.given_as: name
                    continue
                name = child.scope.class_name
                walk(child, above + (name,))
                # a recursive helper (``stack(x, depth)`` calling itself) nests its class in
                # itself: each depth is a class of its own, innermost first
                depth = above.count(name)
                infos.append((f"{name}Depth{depth + 1}" if depth else name, child))

        walk(self.st.root, ())
        by_class: dict[str, list[ModuleInfo]] = {}
        for key, info in infos:
            by_class.setdefault(key, []).append(info)
        remaining = list(by_class)
        while remaining:
            for name in remaining:
                if all(id(c) in self.ctor_of for info in by_class[name] for c in info.children):
                    self._decide(name, by_class[name])
                    remaining.remove(name)
                    break
            else:  # (each recursion depth is its own class, so no class contains itself)
                raise ValueError("cyclic module classes")
        return self.out

    # -- members ------------------------------------------------------------------
    def init_lines(self, info: ModuleInfo) -> tuple[list[str], list[str]]:
        """``__init__`` and ``reset_parameters`` lines of ``info``'s module."""
        init: list[str] = []
        reset: list[str] = []
        for m in info.members:
            if m.items is None:
                if m.node is not None:
                    em = _emit(m.node, f"self.{m.attr}")
                    self.imports |= em.imports
                    init += [torch_ops.buffer_line(f"{m.attr}_{suffix}", src, value) for suffix, src, value in em.buffers]
                    if em.module is None:
                        init += em.setup  # (of the buffers: a Normalization's adapted state)
                        continue
                    site = m.node.from_keras.site_comments if info.scope is not None else ()
                    init += [c for c in m.node.comments if c not in site]
                    init.append(f"self.{m.attr} = {em.module}")
                    for suffix, _source, size, fill in em.extra_params:
                        init.append(f"self.{m.attr}_{suffix} = nn.Parameter(torch.{fill}({size}))")
                    init += em.setup
                    reset += em.init
                else:
                    init += m.scope.scope.comments
                    init.append(f"self.{m.attr} = {self.ctor_of[id(m.scope)]()}")
                continue
            parts = []
            for item in m.items:
                init += item.node.comments if item.node is not None else item.scope.scope.comments
                if item.node is not None:
                    em = _emit(item.node, f"self.{m.attr}[{item.attr}]")
                    self.imports |= em.imports
                    parts.append(em.module)
                    reset += em.init
                    init += em.setup
                else:
                    parts.append(self.ctor_of[id(item.scope)]())
            if len(set(parts)) == 1 and len(parts) > 1:
                init.append(f"self.{m.attr} = nn.ModuleList([{parts[0]} for _ in range({len(parts)})])")
            else:
                init.append(f"self.{m.attr} = nn.ModuleList([{', '.join(parts)}])")
        return init, reset

    def refs(self, info: ModuleInfo) -> dict[str, str]:
        """node name → attribute reference inside ``info``'s module."""
        out = {}
        for m in info.members:
            for item in m.items if m.items is not None else [m]:
                if item.node is not None:
                    out[item.node.name] = m.attr if m.items is None else f"{m.attr}[{item.attr}]"
        return out

    def forward(self, info: ModuleInfo, prefix: tuple, inputs: list[Value], outputs: list[Value],
                params: list[str], logits_outputs: dict[int, str] | None = None) -> tuple[list[str], list[str]]:
        """``forward``'s parameter names and body for one call of ``info``'s module."""
        from transpiler.printers.torch.printer import _ForwardWriter

        emissions: dict[int, torch_ops.Emission] = {}
        g = _forward_graph(self.st, self.graph, prefix, inputs, outputs, self.refs(info), emissions,
                           info.scope.class_name if info.scope else self.graph.name, logits_outputs)
        members = self.refs(info)
        self.forward_buffers = []  # (a tensor op's constants, ops.arange: __init__ registers them)
        for em in emissions.values():
            self.imports |= em.imports
        for node in g.nodes:
            em = emissions[id(node)]
            if node.name not in members:
                self.forward_buffers += [torch_ops.buffer_line(f"{node.name}_{suffix}", src, value)
                                         for suffix, src, value in em.buffers]
        args = _arg_names(inputs, params if len(params) == len(inputs) else [])
        var_of: dict[int, str | None] = {}
        if info.scope is not None:  # the caller's variable names do not hold inside
            # (the module's own names for its results, where its code named them)
            var_of.update({id(v): v.scope_vars.get(id(info.scope)) for v in outputs})
            var_of.update({id(v): a for v, a in zip(inputs, args)})
        here = id(info.scope) if info.scope is not None else (
            id(self.graph.from_keras.root_scope) if self.graph.from_keras.root_scope is not None else None)
        for node in g.nodes:  # a module call's results: the names this code gave them
            if isinstance(node, ModuleCall):
                for v in node.outputs:
                    if here in v.scope_vars:
                        var_of[id(v)] = v.scope_vars[here]
        return args, _ForwardWriter(g, emissions, args, var_of).write()

    # -- classes ------------------------------------------------------------------
    def instance(self, info: ModuleInfo) -> _Instance:
        call = min(info.calls) if info.calls else self._first_call(info)
        prefix = self._prefix(info, call)
        group = self._group(info, call, prefix)
        # sizes with provenance: the module's code names its own parameters
        own = {k: sizes.symbol_of(v) for k, v in info.scope.args.items() if sizes.symbol_of(v) is not None}
        extra = {name: value for name, value in self.runtime.items() if name not in own}
        own.update({name: sizes.symbol_of(value) for name, value in extra.items()})
        with sizes.scope({k: k for k in own}, own.values(), alias=False) as size_scope:
            init, reset = self.init_lines(info)
            args, forward = self.forward(info, prefix, group.inputs, group.outputs, info.scope.params)
            init += self.forward_buffers
        outside: list = []
        init = [size_scope.code(ln, defer=outside) for ln in init]
        forward, kept = method_sizes(size_scope, forward, init)
        reset, kept_reset = method_sizes(size_scope, reset, init)
        init = [f"self.{n} = {n}" for n in own if n in kept | kept_reset] + init
        sized = [n for n in own if n in size_scope.used]
        first = group.inputs[0] if group.inputs else None
        channels = None
        if first is not None and first.shape and len(first.shape) >= 2:
            layout = first.layout or ""
            channels = first.shape[1] if layout.startswith("NC") and len(first.shape) > 2 else first.shape[-1]
        return _Instance(info, init, reset, forward, args, set(), channels, len(first.shape) if first is not None
                         and first.shape else 0, sized=sized, outside=outside,
                         runtime={n: v for n, v in extra.items() if n in sized})

    def _first_call(self, info: ModuleInfo) -> int:
        """The first call of a module whose nodes all sit in modules of its own (a model used
        as a layer that only calls other models): the calls its children's chains pass
        through (the scope's call numbers count every model that calls it, so the first
        one in this model need not be 1)."""
        calls = [c for ch in self.st.chains.values() for i, c in ch if i is info]
        return min(calls, default=1)

    def _prefix(self, info: ModuleInfo, call: int) -> tuple:
        for ch in self.st.chains.values():
            for k, (i, c) in enumerate(ch):
                if i is info and c == call:
                    return ch[:k + 1]
        raise ValueError(f"no call of {info.path}")

    def _group(self, info: ModuleInfo, call: int, prefix: tuple) -> CallGroup:
        for item in level_items(self.st, self.graph, prefix[:-1]):
            if isinstance(item, CallGroup) and item.info is info and item.call == call:
                return item
        raise ValueError(f"no call of {info.path}")

    def _decide(self, class_name: str, infos: list[ModuleInfo]) -> None:
        """Group the instances by their code with sizes masked out; each group is one
        class, whose sizes that differ (or are the user's constructor arguments) become
        ``__init__`` parameters."""
        variants: list[list[_Instance]] = []
        masks: list[tuple] = []
        for info in infos:
            inst = self.instance(info)
            mask = _mask(inst)
            if mask in masks:
                variants[masks.index(mask)].append(inst)
            else:
                masks.append(mask)
                variants.append([inst])
        for k, insts in enumerate(variants):
            params, values = _parameters(insts)
            sized = insts[0].sized if all(i.sized == insts[0].sized for i in insts) else []
            lead = sum(1 for n, _ in params if n in ("in_channels", "in_features"))  # (first, as torch's own)
            params = params[:lead] + [(n, []) for n in sized] + params[lead:]
            values = [v[:lead] + [_SIZED] * len(sized) + v[lead:] for v in values]
            note = _variant_note(insts, [v for j, v in enumerate(variants) if j != k])
            text_of = _class_text(insts[0], params, note, self.source_file)
            name = class_name if k == 0 else f"{class_name}{k + 1}"
            base, n = name, 1
            while name in self.classes and self.classes[name] != text_of(name):
                n += 1
                name = f"{base}_{n}"
            text = text_of(name)
            if name not in self.classes:
                self.classes[name] = text
                scope = insts[0].info.scope
                self.out.append(ClassText(name, scope.source_name, text))
            for j, inst in enumerate(insts):
                self.ctor_of[id(inst.info)] = _ctor(name, inst, values[j])
                # numbers from outside the module stay numbers in its class, except its input
                # channels where they became a constructor argument
                passed = [v.size for v in values[j] if isinstance(v, _Channels)]
                for value in inst.outside:
                    if not any(sizes.same_size(value, p) for p in passed):
                        sizes.specialise(value, "printed")


_SIZED = object()  # a constructor argument that is one of the instance's sized parameters


@dataclass
class _Channels:
    """A constructor argument that is the instance's input channels (a size)."""

    size: object


def _ctor(name: str, inst: _Instance, values: list) -> Callable[[], str]:
    """``ConvBlock(<its varying numbers and sized arguments>)``, printed when called: a
    sized argument that is a size of the caller's names prints as their expression there."""
    def text() -> str:
        sized = iter(inst.sized)
        with sizes.aliasing():
            args = [_sized_arg(inst, next(sized)) if v is _SIZED else
                    lit(v.size) if isinstance(v, _Channels) else v for v in values]
        return f"{name}({', '.join(args)})"
    return text


def _sized_arg(inst: _Instance, name: str) -> str:
    """The caller's argument for the sized parameter ``name``: what it passed the module's
    own parameter, or the run-time size itself (it reads it in its own scope)."""
    if name in inst.runtime:
        return lit(inst.runtime[name])
    return lit(sizes.symbol_of(inst.info.scope.args[name]).arg)


def method_sizes(size_scope: sizes.scope, lines: list[str], init_lines: list[str]):
    """The sizes of a method other than ``__init__`` (``forward``) read the constructor
    parameters ``__init__`` keeps as attributes (``self.filters // 2``); where the module
    already has an attribute of that name, the number (the parameter is then specialised).
    Module constants read themselves. Returns the lines and the parameter names kept."""
    before = set(size_scope.used)
    size_scope.used = set()
    taken = {n for n in size_scope.names
             if any(ln.startswith((f"self.{n} ", f"self.{n}.", f"self.{n}[", f"self.{n}=")) for ln in init_lines)}
    # a module constant reads itself, unless the method assigns a local of its name
    consts = {s.name for v in size_scope.entries for s in sizes.leaves(v.expr) if s.kind == "const"}
    taken |= {n for n in consts if any(re.search(rf"(?<![.\w]){re.escape(n)}\s*(=(?!=)|[-+*/]=)", ln)
                                       for ln in lines)}
    names = {n: f"self.{n}" for n in size_scope.names if n not in taken}
    names.update({n: n for n in consts if n not in taken})
    naming_taken = [sizes.placeholder(i) for i, v in enumerate(size_scope.entries)
                    if any(sym.name in taken for sym in sizes.leaves(v.expr))]
    out = [size_scope.numbers(ln) if any(e in ln for e in naming_taken) else size_scope.code(ln, names)
           for ln in lines]
    kept = set(size_scope.used)
    size_scope.used = before | kept
    return out, kept


def _parameters(insts: list[_Instance]) -> tuple[list[tuple], list[list[str]]]:
    """``(name, [(line, column, width) ...])`` per constructor parameter, and each instance's
    argument texts. A number becomes a parameter when it differs between instances or is
    the value of one of the user's constructor arguments."""
    per = [_numbers(inst.init) for inst in insts]
    # (the arguments that are sizes print as their names: only other numbers are matched)
    scope_args = [{k: v for k, v in inst.info.scope.args.items() if sizes.symbol_of(v) is None} for inst in insts]
    chosen: dict[str, dict] = {}
    for p, (line, col, text, role) in enumerate(per[0]):
        vals = [nums[p][2] for nums in per]
        varies = len(set(vals)) > 1
        name = None
        for arg in scope_args[0]:
            if all(_same_number(a.get(arg), v) for a, v in zip(scope_args, vals)) and \
                    (varies or _notable(vals[0])):
                name = arg
                break
        if name is None and varies:
            if all(inst.channels is not None and sizes.number_text(inst.channels) == v for inst, v in zip(insts, vals)):
                features = role in ("in_features", "normalized_shape", "input_size") or \
                    not role and insts[0].rank == 2
                name = "in_features" if features else "in_channels"
            else:
                name = role or "size"
        if name is None:
            continue
        base, n = name, 1
        while name in chosen and chosen[name]["vals"] != vals:
            n += 1
            name = f"{base}{n}"
        chosen.setdefault(name, {"vals": vals, "at": []})["at"].append((line, col, len(text)))
    order = sorted(chosen, key=lambda nm: (nm not in ("in_channels", "in_features"),
                                          list(scope_args[0]).index(nm) if nm in scope_args[0] else 99,
                                          chosen[nm]["at"][0]))
    params = [(nm, chosen[nm]["at"]) for nm in order]
    # the input's channels are a size: the caller prints where it came from
    values = [[_Channels(insts[j].channels) if nm in ("in_channels", "in_features") and
               isinstance(insts[j].channels, sizes.Size) else chosen[nm]["vals"][j] for nm in order]
              for j in range(len(insts))]
    return params, values


def _same_number(arg, text: str) -> bool:
    if isinstance(arg, bool) or not isinstance(arg, (int, float)):
        return False
    try:
        return float(text) == float(arg)
    except ValueError:
        return False


def _notable(text: str) -> bool:
    """A size worth naming after a constructor argument (not 0, 1 or 2, which match by chance)."""
    try:
        return abs(float(text)) > 2
    except ValueError:
        return False


def _variant_note(insts: list[_Instance], others: list[list[_Instance]]) -> str:
    """``strides=2``: the constructor arguments that set this class apart from the other
    classes of the same source definition."""
    if not others:
        return ""
    args = insts[0].info.scope.args
    mine = {k: v for k, v in args.items() if all(i.info.scope.args.get(k) == v for i in insts)}
    parts = [f"{k}={sizes.number_text(v)}" for k, v in mine.items()  # (a note: names stay unmarked)
             if all(any(o.info.scope.args.get(k) != v for o in other) for other in others)
             and not sizes.carries_runtime(v)]  # (a run-time size reads as its name: no difference to note)
    return ", ".join(parts)


def _class_text(inst: _Instance, params: list[tuple], note: str, source_file: str):
    init = list(inst.init)
    edits = sorted(((line, col, width, name) for name, at in params for line, col, width in at), reverse=True)
    for line, col, width, name in edits:
        init[line] = init[line][:col] + name + init[line][col + width:]
    scope = inst.info.scope
    where = f" (for {note})" if note else ""
    if scope.doc:
        doc = inspect.cleandoc(scope.doc)
        if note:
            doc += f"\n\nThis class: {note}."
    elif scope.kind == "function":
        doc = f"The ``{scope.source_name}()`` block of the Keras model ({source_file}) as a module{where}."
    else:
        doc = f"Transpiled from the Keras class ``{scope.class_name}`` ({source_file}){where}."

    def text(name: str) -> str:
        sig = ", ".join(["self"] + [p for p, _ in params])
        lines = [f"class {name}(nn.Module):", _docstring(doc), "", f"    def __init__({sig}):",
                 "        super().__init__()"]
        lines += [f"        {ln}" for ln in init]
        if inst.reset:
            lines.append("        self.reset_parameters()")
            lines += ["", "    def reset_parameters(self):",
                      '        """Keras\' default initializers, so training from scratch behaves the same."""']
            lines += [f"        {ln}" for ln in inst.reset]
        lines += ["", f"    def forward(self, {', '.join(inst.args)}):"]
        lines += [f"        {ln}" for ln in inst.forward]
        return "\n".join(lines) + "\n"

    return text


def _docstring(doc: str) -> str:
    """The class docstring: the source's (cleaned as ``ast.get_docstring`` does) printed
    through ``code.docstring``, so no quote or backslash in it can change the program."""
    from transpiler.printers.code import docstring

    return "    " + docstring(inspect.cleandoc(doc), "    ")


def _arg_names(inputs: list[Value], params: list[str]) -> list[str]:
    from transpiler.printers.code import Namespace

    names = Namespace()
    out = []
    for i, v in enumerate(inputs):
        out.append(names.fresh(params[i] if params else (v.var or "x")))
    return out


def _numbers(lines: list[str]) -> list[tuple[int, int, str, str]]:
    """(line, column, number text, keyword or constructor position) of every number."""
    out = []
    for li, line in enumerate(lines):
        try:
            toks = list(tokenize.generate_tokens(io.StringIO(line + "\n").readline))
        except (tokenize.TokenError, IndentationError):
            continue
        stack: list[list] = []  # per open paren: [callee, positional index, keyword]
        prev: list = []
        for tok in toks:
            if tok.type == tokenize.OP and tok.string in "([{":
                callee = ""
                if tok.string == "(" and prev:
                    k = len(prev) - 1
                    parts = []
                    while k >= 0 and (prev[k].type == tokenize.NAME or prev[k].string == "."):
                        parts.append(prev[k].string)
                        k -= 1
                    callee = "".join(reversed(parts))
                stack.append([callee, 0, None])
            elif tok.type == tokenize.OP and tok.string in ")]}":
                if stack:
                    stack.pop()
            elif tok.type == tokenize.OP and tok.string == "," and stack:
                stack[-1][1] += 1
                stack[-1][2] = None
            elif tok.type == tokenize.OP and tok.string == "=" and stack and prev and prev[-1].type == tokenize.NAME:
                stack[-1][2] = prev[-1].string
            elif tok.type == tokenize.NUMBER:
                role = ""
                if stack:
                    callee, pos, kw = stack[-1]
                    if kw:
                        role = kw
                    else:
                        # the innermost call's position (a tuple inside a call counts as its arg)
                        for frame in reversed(stack):
                            if frame[0]:
                                names = _TORCH_POSITIONAL.get(frame[0], ())
                                role = names[frame[1]] if frame[1] < len(names) else ""
                                break
                out.append((li, tok.start[1], tok.string, role))
            prev.append(tok)
    return out


def _mask(inst: _Instance) -> tuple:
    """The instance's code with every number of ``__init__`` replaced by a placeholder."""
    masked = []
    for li, line in enumerate(inst.init):
        if line.lstrip().startswith("#"):
            continue  # the source's comments are attached to the first instance only
        nums = [n for n in _numbers([line])]
        text = line
        for _, col, num, _role in reversed(nums):
            text = text[:col] + "#" + text[col + len(num):]
        masked.append(text)
    return tuple(masked), tuple(inst.reset), tuple(inst.forward), tuple(inst.args)
