"""A ``keras.Model`` subclass for a model whose ``forward`` has control flow.

A functional graph has no branches: a PyTorch ``forward`` that branches on
``self.training`` (``training_select`` nodes in the IR) is printed as a subclass whose
``call(self, x, training=None)`` branches the same way, each branch computing only
what it needs (a Dense that only the training branch calls is called inside
``if training:``)::

    class AutoEncoder(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.enc = layers.Dense(8, ..., name="enc")
            ...

        def call(self, x, training=None):
            h = self.relu(self.enc(x))
            if training:
                z = ...
            else:
                z = ...
            return self.dec(z)

The layers are attributes named after the torch modules (``name=`` keeps the layer
name, for ``get_layer`` and the checkpoint writer). The model builds itself by
calling it on a ``keras.Input`` once per mode in ``__init__``, so that every layer, also
one only a branch calls, has its weights after construction (as in torch).

Keras saves a subclass's layers under attribute paths (see ``weights.keras_files.weights_paths``).
"""

from __future__ import annotations

import re

from transpiler.ir import sizes
from transpiler.ir.graph import Graph, Node, Value
from transpiler.ir.state_plan import KerasBlocks
from transpiler.printers.keras import ops as keras_ops
from transpiler.printers.keras import own_step
from transpiler.printers.code import exclusive_cone

#: public attributes of ``keras.Model`` (Keras 3.15) and those its instances set: a layer
#: attribute must not shadow one
MODEL_ATTRIBUTES = frozenset("""
add_loss add_metric add_variable add_weight build build_from_config call compile compile_from_config
compiled_loss compiled_metrics compute_dtype compute_loss compute_mask compute_metrics
compute_output_shape compute_output_spec count_params distribute_reduction_method distribute_strategy
dtype dtype_policy evaluate export fit from_config get_build_config get_compile_config get_config
get_layer get_metrics_result get_quantization_layer_structure get_state_tree get_weights input
input_dtype input_spec jit_compile layers load_own_variables load_weights loss losses
make_predict_function make_test_function make_train_function metrics metrics_names metrics_variables
non_trainable_variables non_trainable_weights output path predict predict_on_batch predict_step
quantization_mode quantize quantized_build quantized_call rematerialized_call reset_metrics run_eagerly
save save_own_variables save_weights set_state_tree set_weights stateless_call stateless_compute_loss
summary supports_masking symbolic_call test_on_batch test_step to_json train_on_batch train_step
trainable trainable_variables trainable_weights variable_dtype variables weights
name built optimizer history stop_training compiled inputs outputs autocast steps_per_execution constructor_args
""".split())


def keras_model_name(name: str) -> str:
    """``name`` as a Keras model's name: TensorFlow takes it for a root name scope, which must
    match ``[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*`` (a class ``_ZooResNet`` or ``_Net`` fails
    when the model is first called under it: its leading underscores go)."""
    return re.sub(r"[^A-Za-z0-9_.\\/>-]", "_", name).lstrip("_-/\\>") or "model"


def needs_subclass(graph: Graph) -> bool:
    """True when the model's forward has control flow a functional graph cannot hold."""
    with sizes.quiet():  # (the text is only inspected)
        return any(keras_ops.emit(node).mode_select for node in graph.nodes)


def builds_on_call(graph: Graph) -> bool:
    """True when the model is a class whose input shape its file never gives
    (``graph.from_torch.lazy_class``, frontend_ast/torch/lazy_inputs): printed as a subclass whose
    layers build on its first call (``on_call_class``)."""
    return bool(graph.from_torch.lazy_class) and not graph.from_torch.own_step and \
        not graph.from_torch.composed


def is_subclass(graph: Graph) -> bool:
    """True when the model is printed as a ``keras.Model`` subclass: its forward has control
    flow, it has its own ``train_step`` (frontend_ast/torch/own_step), or its input shape is
    unknown (``builds_on_call``)."""
    return needs_subclass(graph) or bool(graph.from_torch.own_step) or builds_on_call(graph)


def layer_attributes(graph: Graph) -> dict[str, str]:
    """Layer name → the attribute holding the layer, in the order ``__init__`` assigns
    them (the order of ``model.layers``): the first call of each layer in the graph. A name
    the model's own trackers or methods take is not a layer's."""
    attrs: dict[str, str] = {}
    own = graph.from_torch.own_step
    taken: set[str] = {a for a, _ in own.trackers} | set(own.names) if own else set()
    blocks = graph.weight_plan.keras_blocks or KerasBlocks()
    taken |= set(blocks.graphs)
    for node in graph.nodes:
        em = keras_ops.emit(node)
        if node.name in attrs or em.mode_select or em.layer is None or node.name in blocks.nodes:
            continue
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in node.name).lower() or "layer"
        if base[0].isdigit() or base.startswith("_"):
            base = f"layer_{base.lstrip('_')}"
        name, n = base, 1
        while name in MODEL_ATTRIBUTES or name in taken:
            name = f"{base}_layer" if n == 1 else f"{base}_layer_{n}"
            n += 1
        taken.add(name)
        attrs[node.name] = name
    return attrs


class _CallWriter:
    """Writes the body of ``call``: one statement per layer call or op, each branch of a
    ``training_select`` inside ``if training:`` / ``else:``."""

    def __init__(self, graph: Graph, attrs: dict[str, str], reserved: set[str]):
        self.graph = graph
        self.attrs = attrs
        self.reserved = set(reserved) | {"self", "training", "keras", "layers"}
        if len(graph.inputs) > 1:
            self.reserved.add("inputs")  # call()'s one parameter, unpacked
        self.expr: dict[int, str] = {}
        self.bound: dict[str, int] = {}  # name → id of the value it holds
        order = {id(n): i for i, n in enumerate(graph.nodes)}
        self.last_use: dict[int, int] = {}
        for node in graph.nodes:
            for v in node.inputs:
                self.last_use[id(v)] = max(self.last_use.get(id(v), -1), order[id(node)])
        for v in graph.outputs:
            self.last_use[id(v)] = len(graph.nodes) + 1
        self.branch_of: dict[int, tuple[Node, int]] = {}
        for node in graph.nodes:
            if keras_ops.emit(node).mode_select:
                for slot in (0, 1):
                    for member in exclusive_cone(graph, node, slot):
                        self.branch_of.setdefault(id(member), (node, slot))
        self.branch_lines: dict[tuple[int, int], list[str]] = {}
        self.select_name: dict[int, str] = {}
        self.returned = False
        #: node id → (attribute of the block, its input, its output, first node of the call)
        self.block_of: dict[int, tuple] = {}

    def _name(self, value: Value, hint: str, at: int) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "t"
        if base[0].isdigit():
            base = f"t_{base}"
        name, n = base, 1
        while name in self.reserved or (name in self.bound and self.bound[name] != id(value)
                                        and self.last_use.get(self.bound[name], -1) > at):
            name = f"{base}_{n}"
            n += 1
        self.bound[name] = id(value)
        return name

    def arguments(self) -> tuple[str, list[str]]:
        """The parameter of ``call`` and the statements unpacking several inputs."""
        names = [self._name(v, v.var or "inputs", -1) for v in self.graph.inputs]
        for v, n in zip(self.graph.inputs, names):
            self.expr[id(v)] = n
        if len(names) == 1:
            return names[0], []
        return "inputs", [f"{', '.join(names)} = inputs"]

    def write(self) -> list[str]:
        main: list[str] = []
        for i, node in enumerate(self.graph.nodes):
            branch = self.branch_of.get(id(node))
            lines = main if branch is None else self.branch_lines.setdefault((id(branch[0]), branch[1]), [])
            block = self.block_of.get(id(node))
            if block is not None and len(block) > 5:  # a list of blocks: ``for block in self.blocks:``
                attr, value_in, value_out, first, last, _ = block
                if first:
                    lines += list(node.comments)
                    name = self._name(value_out, value_out.var or attr, last)
                    item = self._name(object(), "block", last)
                    if name != self.expr[id(value_in)]:
                        lines.append(f"{name} = {self.expr[id(value_in)]}")
                    lines += [f"for {item} in self.{attr}:", f"    {name} = {item}({name})"]
                    self.expr[id(value_out)] = name
                continue
            if block is not None:  # one call of a block the model holds: ``self.res1(y)``
                attr, value_in, value_out, first, last = block
                if first:
                    lines += list(node.comments)
                    text = f"self.{attr}({self.expr[id(value_in)]})"
                    if self.graph.nodes[last] is self.graph.nodes[-1] and list(self.graph.outputs) == [value_out] \
                            and branch is None:  # (the method's last: ``return self.deconv3(y)``)
                        self.expr[id(value_out)] = text
                        continue
                    name = self._name(value_out, value_out.var or attr, last)
                    lines.append(f"{name} = {text}")
                    self.expr[id(value_out)] = name
                continue
            em = keras_ops.emit(node)
            if em.mode_select:
                self._select(node, i, lines)
                continue
            lines += list(node.comments)
            ins = [self.expr[id(v)] for v in node.inputs]
            if len(node.outputs) == 1 and self._returned_as_is(node, branch):
                self.expr[id(node.outputs[0])] = self._call_text(node, em, ins)
                continue
            outs = []
            for j, v in enumerate(node.outputs):
                select = branch[0] if branch is not None and v is branch[0].inputs[branch[1]] else None
                if select is not None:
                    name = self._select_out(select)
                else:
                    hint = v.var if j == 0 and v.var else (node.name if j == 0 else f"{node.name}_state{j}")
                    name = self._name(v, hint, i)
                self.expr[id(v)] = name
                outs.append(name)
            lines.append(f"{', '.join(outs)} = {self._call_text(node, em, ins)}")
        if not self.returned:
            outs = [self.expr[id(v)] for v in self.graph.outputs]
            if self.graph.from_torch.none_outputs:  # (``return logits, None``: frontend_ast/torch/frontend.py)
                total, nones = self.graph.from_torch.none_outputs
                it = iter(outs)
                outs = ["None" if i in nones else next(it) for i in range(total)]
            main.append("return " + (outs[0] if len(outs) == 1 else f"[{', '.join(outs)}]"))
        return main

    def _call_text(self, node: Node, em, ins: list[str]) -> str:
        if em.layer is None:
            return em.call(ins)
        if not node.inputs:  # a model's own weight (a ModelWeight layer): called on the input
            ins = [self.expr[id(self.graph.inputs[0])]]
        arg = em.args(ins) if em.args else f"[{', '.join(ins)}]" if em.merge else ins[0]
        return f"self.{self.attrs[node.name]}({arg})"

    def _last(self, node: Node) -> bool:
        """``node`` is the method's last and its one result is returned."""
        return node is self.graph.nodes[-1] and len(self.graph.outputs) == 1 and \
            self.graph.outputs[0] is node.outputs[0]

    def _returned_as_is(self, node: Node, branch) -> bool:
        """``node``'s result is returned without another use: ``return <call>``."""
        value = node.outputs[0]
        if branch is not None:  # a branch's result, returned by the branch
            return value is branch[0].inputs[branch[1]] and self._last(branch[0]) and \
                self.last_use.get(id(value)) == len(self.graph.nodes) - 1
        return self._last(node) and not node.comments

    def _select_out(self, select: Node) -> str:
        if id(select) not in self.select_name:
            v = select.outputs[0]
            at = self.graph.nodes.index(select)
            self.select_name[id(select)] = self._name(v, v.var or select.name, at)
        return self.select_name[id(select)]

    def _select(self, node: Node, at: int, lines: list[str]) -> None:
        train = self.branch_lines.get((id(node), 0), [])
        infer = self.branch_lines.get((id(node), 1), [])
        t_expr, i_expr = (self.expr[id(v)] for v in node.inputs)
        if self._last(node):  # the method's last statements: each branch returns its own value
            lines += node.comments
            lines.append("if training:")
            lines += [f"    {ln}" for ln in train] + [f"    return {t_expr}"]
            lines += infer + [f"return {i_expr}"]
            self.returned = True
            return
        name = self._select_out(node)
        blocks = []
        for block, expr in ((train, t_expr), (infer, i_expr)):
            block = list(block)
            if expr != name:
                block.append(f"{name} = {expr}")
            blocks.append(block)
        train, infer = blocks
        lines += node.comments
        if train:
            lines.append("if training:")
            lines += [f"    {ln}" for ln in train]
            if infer:
                lines.append("else:")
                lines += [f"    {ln}" for ln in infer]
        elif infer:
            lines.append("if not training:")
            lines += [f"    {ln}" for ln in infer]
        self.expr[id(node.outputs[0])] = name


def subclass_text(graph: Graph, class_name: str, reserved: set[str], input_expr) -> str:
    """The ``keras.Model`` subclass for ``graph`` (``class_name``, the torch module's name).
    Its ``__init__`` builds the model, as torch creates a module's weights in ``__init__``
    (``load_weights`` needs them). A model with its own ``train_step`` (``graph.from_torch.own_step``,
    frontend_ast/torch/own_step) gets its trackers in ``__init__`` and its methods after ``call``;
    one built of its submodules (``graph.from_torch.composed``, frontend_ast/torch/parts) has each
    as a ``layers.Layer`` subclass of its own, printed before it."""
    own = graph.from_torch.own_step
    composed = graph.from_torch.composed
    if composed:
        why = ['    its own ``train_step`` calls its submodules, layers of their own here."""']
    elif needs_subclass(graph):
        why = ["    its forward branches on ``self.training`` (Keras passes ``training``: True in fit,",
               '    False in evaluate and predict)."""']
    else:
        why = ['    it has its own ``train_step``, which ``fit`` runs."""']
    lines = [f"class {class_name}(keras.Model):",
             f'    """The {graph.name} model, translated from PyTorch (channels-last inputs); a subclass since',
             *why, "",
             f'    def __init__(self, name="{keras_model_name(graph.name)}", **kwargs):',
             "        super().__init__(name=name, **kwargs)"]
    if composed:
        lines += [f'        self.{attr} = {part.name}(name="{attr}")' for attr, part in composed["parts"]]
        arg, call_body = None, composed["call"].splitlines()
    else:
        layer_lines, arg, call_body = _layers_and_call(graph, reserved)
        lines += layer_lines
    lines += [f"        self.{attr} = {code}" for attr, code in own_step.trackers(own)]
    names = [v.var or f"input_{i}" for i, v in enumerate(graph.inputs)]
    if len(set(names)) != len(names) or {"self", "name", "kwargs", "keras", "layers"} & set(names):
        names = [f"input_{i}" for i in range(len(names))]
    lines.append("        # build every layer now, also those only one mode calls (torch creates the")
    lines.append("        # weights in __init__; load_weights needs them)")
    lines += [f"        {n} = {input_expr(v)}" for n, v in zip(names, graph.inputs)]
    call_arg = names[0] if len(names) == 1 else f"[{', '.join(names)}]"
    lines += [f"        self({call_arg}, training=True)", f"        self({call_arg}, training=False)"]
    if composed:
        lines += [""] + [f"    {ln}" if ln else "" for ln in call_body]
    else:
        lines += ["", f"    def call(self, {arg}, training=None):"]
        lines += [f"        {ln}" if ln else "" for ln in call_body]
    for _name, text in own_step.methods(own):
        lines += [""] + [f"    {ln}" if ln else "" for ln in text.splitlines()]
    text = "\n".join(lines) + "\n"
    if composed:
        text = "\n\n".join(part_text(part, reserved) for _, part in composed["parts"]) + "\n\n" + text
    return text


def part_text(graph: Graph, reserved: set[str]) -> str:
    """A submodule of a composed model (frontend_ast/torch/parts) as a ``layers.Layer``
    subclass: its layers in ``__init__`` (built by the model's first call), its forward as
    ``call``."""
    layer_lines, arg, call_body = _layers_and_call(graph, reserved)
    lines = [f"class {graph.name}(layers.Layer):",
             f'    """The {graph.name} module, translated from PyTorch (channels-last inputs)."""', "",
             "    def __init__(self, **kwargs):", "        super().__init__(**kwargs)", *layer_lines,
             "", f"    def call(self, {arg}, training=None):"]
    lines += [f"        {ln}" if ln else "" for ln in call_body]
    return "\n".join(lines) + "\n"


def _layers_and_call(graph: Graph, reserved: set[str]) -> tuple[list[str], str, list[str]]:
    """The ``__init__`` lines making the layers (and the graph's comments), ``call``'s
    parameter and its body."""
    attrs = layer_attributes(graph)
    writer = _CallWriter(graph, attrs, reserved)
    arg, unpack = writer.arguments()
    body = unpack + writer.write()
    lines = [f"        {c}" for c in graph.from_torch.comments]
    done = set()
    for node in graph.nodes:
        if node.name in attrs and node.name not in done:
            done.add(node.name)
            lines.append(f"        self.{attrs[node.name]} = {keras_ops.emit(node).layer}")
    return lines, arg, body



def block_calls(graph: Graph, blocks: dict[str, tuple[str, str, Graph]]) -> list[tuple]:
    """The calls of blocks the model holds (``self.res1(y)``: the nodes the reader tagged
    ``block_call``) that a Keras subclass can make one call of the block's own class:
    ``blocks``, attribute → (class, constructor arguments, the class's graph), those printed
    for any argument. A call qualifies when its nodes are consecutive, read one value from
    outside and give one, and are the block's graph node for node (same ops in the same
    order); each is ``(attribute, nodes, input, output)``."""
    if needs_subclass(graph):
        return []
    runs: dict[tuple, list[int]] = {}
    for i, node in enumerate(graph.nodes):
        tag = node.from_torch.block_call
        if tag is not None and tag[0] in blocks:
            runs.setdefault(tuple(tag), []).append(i)
    found = []
    for (attr, _), idx in runs.items():
        nodes = [graph.nodes[i] for i in idx]
        child = blocks[attr][2]
        if idx != list(range(idx[0], idx[-1] + 1)) or [n.op for n in nodes] != [n.op for n in child.nodes]:
            continue
        made = {id(v) for n in nodes for v in n.outputs}
        ins = list({id(v): v for n in nodes for v in n.inputs if id(v) not in made}.values())
        inside = {id(n) for n in nodes}
        used = {id(v) for n in graph.nodes if id(n) not in inside for v in n.inputs} | {id(v) for v in graph.outputs}
        outs = [v for n in nodes for v in n.outputs if id(v) in used]
        listed = len(blocks[attr]) > 3  # (an item of a list of blocks: a weight of its own, read on no input)
        if len(ins) != 1 or len(outs) != 1 or any(not n.inputs and not (listed and n.op == "variable") for n in nodes) or \
                len(child.inputs) != 1 or len(child.outputs) != 1:
            continue
        found.append((attr, nodes, ins[0], outs[0]))
    return found


def record_blocks(graph: Graph, calls: list[tuple], blocks: dict[str, tuple[str, str, Graph]]) -> None:
    """Keep, as data, where the layers of the block calls live in the printed subclass
    (``graph.weight_plan.keras_blocks``): the weights code reads it (``model.res1.conv1_conv2d``
    holds the node ``res1_conv1_conv2d``): ``nodes``, node name → (attribute, the block graph's
    node name); ``graphs``, attribute → the block's graph; ``order``, ``__init__``'s order of
    the model's own layers (``("layer", node name)``) and blocks (``("block", attribute,
    class)``)."""
    nodes: dict[str, tuple[str, str]] = {}
    first: dict[int, str] = {}
    for attr, members, _, _ in calls:
        child = blocks[attr][2]
        first.setdefault(id(members[0]), attr)
        for node, inner in zip(members, child.nodes):
            nodes[node.name] = (attr, inner.name)
    graph.weight_plan.keras_blocks = KerasBlocks(nodes, {a: blocks[a][2] for a, *_ in calls})
    attrs = layer_attributes(graph)
    order: list[tuple] = []
    seen: set[str] = set()
    for node in graph.nodes:
        if id(node) in first and first[id(node)] not in seen:
            seen.add(first[id(node)])
            order.append(("block", first[id(node)], blocks[first[id(node)]][0]))
        elif node.name in attrs and node.name not in seen:
            seen.add(node.name)
            order.append(("layer", node.name))
    graph.weight_plan.keras_blocks.order = order


def on_call_parts(graph: Graph, params: list[str], reserved: set[str], size_scope,
                  blocks: dict[str, tuple[str, str, Graph]] | None = None) -> dict:
    """What ``on_call_class`` prints for ``graph``, emitted inside ``size_scope`` (the sizes
    of the constructor's parameters ``params``, their source text): the layers' sizes as
    expressions of the parameters, and a size ``call`` needs read from the parameter kept on
    ``self``."""
    blocks = blocks or {}
    graph.weight_plan.keras_blocks = None
    calls = block_calls(graph, blocks)
    calls, loops = _loops(graph, calls, blocks)
    if calls:
        record_blocks(graph, calls, blocks)
    attrs = layer_attributes(graph)
    writer = _CallWriter(graph, attrs, reserved)
    order = {id(n): i for i, n in enumerate(graph.nodes)}
    for attr, members, value_in, value_out in calls:
        for j, node in enumerate(members):
            writer.block_of[id(node)] = (attr, value_in, value_out, j == 0, order[id(members[-1])])
    printed = {}  # (the list's attribute: ``layers`` is a keras.Model property, ``layers_``)
    for container, run in loops.items():  # (``for block in self.blocks: x = block(x)``)
        name = container
        while name in MODEL_ATTRIBUTES or name in attrs.values():
            name += "_"
        printed[container] = name
        members = [n for _, nodes, _, _ in run for n in nodes]
        for j, node in enumerate(members):
            writer.block_of[id(node)] = (name, run[0][2], run[-1][3], j == 0, order[id(members[-1])], True)
    if loops:  # (the weights code reads ``model.layers_[0]`` for ``layers.0``)
        graph.weight_plan.keras_blocks.lists = printed
    arg, unpack = writer.arguments()
    call_body = unpack + writer.write()
    layer_lines = [f"        {c}" for c in graph.from_torch.comments]
    for entry in (graph.weight_plan.keras_blocks or KerasBlocks()).order or \
            [("layer", name) for name in attrs]:
        if entry[0] == "block" and len(blocks[entry[1]]) > 3:  # (a list of the count's blocks)
            cls, args, _, (container, count) = blocks[entry[1]]
            if entry[1] == f"{container}.0":
                layer_lines.append(f'        self.{printed[container]} = [{cls}({args}{", " if args else ""}'
                                   f'name=f"{container}_{{i}}") for i in range({count})]')
        elif entry[0] == "block":
            cls, args = blocks[entry[1]][:2]
            layer_lines.append(f'        self.{entry[1]} = {cls}({args}{", " if args else ""}name="{entry[1]}")')
        else:
            node = next(n for n in graph.nodes if n.name == entry[1])
            layer_lines.append(f"        self.{attrs[node.name]} = {keras_ops.emit(node).layer}")
    layer_lines = [size_scope.code(ln) for ln in layer_lines]
    names = [p.split("=")[0].split(":")[0].strip() for p in params]
    taken = set(attrs.values()) | MODEL_ATTRIBUTES
    kept = {n: n if n not in taken else f"{n}_value" for n in names}
    earlier, size_scope.used = size_scope.used, set()
    call_body = [size_scope.code(ln, {n: f"self.{a}" for n, a in kept.items()}) for ln in call_body]
    in_call, size_scope.used = size_scope.used, earlier | size_scope.used
    return {"params": params, "names": names, "arg": arg, "call": call_body, "layers": layer_lines,
            "kept": [(kept[n], n) for n in names if n in in_call], "loops": set(loops)}


def _loops(graph: Graph, calls: list[tuple], blocks: dict) -> tuple[list[tuple], dict[str, list[tuple]]]:
    """The calls of a repeated block's items (``blocks.0`` .. ``blocks.{n-1}``, blocks whose
    entry names their list: printers/keras/printer.py) that make one loop: every item called
    once, in order, one after the other, each on the previous one's output alone. (the other
    calls, container → its calls in order)."""
    runs: dict[str, list[tuple]] = {}
    rest = []
    for call in calls:
        entry = blocks[call[0]]
        if len(entry) > 3:
            runs.setdefault(entry[3][0], []).append(call)
        else:
            rest.append(call)
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    loops = {}
    for container, run in runs.items():
        run.sort(key=lambda c: int(c[0].split(".")[1]))
        tags = [a for a, e in blocks.items() if len(e) > 3 and e[3][0] == container]
        ok = [int(c[0].split(".")[1]) for c in run] == list(range(len(tags)))
        for before, after in zip(run, run[1:]):
            users = [n for n in graph.nodes if any(v is before[3] for v in n.inputs)]
            ok = ok and after[2] is before[3] and all(any(u is m for m in after[1]) for u in users) and \
                before[3] not in graph.outputs and position[id(after[1][0])] == position[id(before[1][-1])] + 1
        if ok:
            loops[container] = run
    return rest + [c for run in loops.values() for c in run], loops


def on_call_class(graph: Graph, class_name: str, base: str, parts: dict, guard: list[str]) -> str:
    """The class of a module whose input shape its file never gives, as a Keras user writes
    one: ``class Net(keras.Model)`` (``base``: ``layers.Layer`` for a block other classes
    nest), ``__init__`` taking the torch constructor's parameters and making the layers
    (``guard``: the lines refusing values the translation was specialised for), ``call`` the
    forward. The layers build on the first call, from whatever input it gets (no
    ``keras.Input``); ``parts``: ``on_call_parts``."""
    kwargs = "kwargs" if "kwargs" not in parts["names"] else "keras_kwargs"
    training = ", training=None" if needs_subclass(graph) else ""
    what = "model" if base == "keras.Model" else "block"
    shape = graph.from_torch.lazy_class
    letters = list(dict.fromkeys(m for m in re.findall(r"\b([A-Z]|d\d+)\b", shape) if m != "N"))
    sizes_text = " and ".join([", ".join(letters[:-1]), letters[-1]] if len(letters) > 1 else letters)
    lines = [f"class {class_name}({base}):",
             f'    """The {graph.name} {what}, translated from PyTorch (channels-last inputs).', "",
             *(["    Its file never gives the input's shape; its layers imply (in torch's layout, the",
                 "    sizes named by letters unknown):"] if letters else
               ["    Its file never gives the input's shape; its layers imply (in torch's layout):"]),
             "", f"        {shape}", "",
             "    The layers build on the first call" + (f", for any {sizes_text}." if letters else "."),
             '    """', "",
             # (what a torch module is called on has this rank, or one less: a single sample;
             # none for layers that take any input, traced at one rank: called as given)
             *([] if graph.from_torch.any_input else
               [f"    input_ranks = {tuple(len(v.shape or ()) for v in graph.inputs)!r}", ""]),
             f"    def __init__(self, {', '.join(parts['params'] + [f'**{kwargs}'])}):",
             *[f"    {ln}" for ln in guard],
             f"        super().__init__(**{kwargs})"]
    lines += [f"        self.{attr} = {n}" for attr, n in parts["kept"]]
    # (its configuration: a subclassed Keras model saves to a .keras file only with one)
    plain = [n for n in parts["names"] if n.isidentifier()]
    lines += [f"        self.constructor_args = {{{', '.join(f'{n!r}: {n}' for n in plain)}}}"]
    lines += parts["layers"]
    lines += ["", f"    def call(self, {parts['arg']}{training}):"]
    lines += [f"        {ln}" if ln else "" for ln in parts["call"]]
    lines += ["", "    def get_config(self):", "        return {**super().get_config(), **self.constructor_args}"]
    return "\n".join(lines) + "\n"
