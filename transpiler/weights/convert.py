"""Checkpoint conversion through the IR: Keras files → the generated module's
state_dict (safetensors or ``.pt``), and a torch state_dict → a Keras ``.weights.h5``.

Every tensor is matched to its layer by name (falling back to the order of Keras'
automatic names when the checkpoint was saved in a process that had numbered its
layers differently), checked against the shape the ops table gives it, then
transformed by the same plan the in-memory mapping uses and written one tensor at a
time, so the peak memory is about the largest tensor.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np

from transpiler.ir.graph import Graph, Node
from transpiler.ir.naming import keras_auto_name
from transpiler.ir import ops as ops_table
from transpiler.ir import sizes
from transpiler.ir.params import expected_shapes, param_names, source_op
from transpiler.ir.state_plan import KerasBlocks, KerasLayer
from transpiler.weights.errors import CheckpointError
from transpiler.weights.keras_files import (WRAPPER_SUBPATHS, CheckpointLayer, KerasCheckpoint, KerasLayerOut,
                                            layer_keys, weights_paths, write_keras_weights)
from transpiler.weights.mapping import (canonical_from_torch, check_plan_state, gather, source_layers, to_torch,
                                        torch_plan, torch_shape)
from transpiler.weights.safetensors_io import write_safetensors_streamed
from transpiler.weights.torch_files import read_torch_state, write_torch_pt
from transpiler.weights.transforms import Lazy

CHUNK_BYTES = 1 << 24


@dataclass
class ConversionReport:
    """What a conversion read and wrote."""

    source: str
    output: str
    model: str
    tensors: int = 0
    bytes: int = 0
    warnings: list[str] = field(default_factory=list)


def _base(name: str) -> tuple[str, int]:
    m = re.fullmatch(r"(.*?)_(\d+)", name)
    return (m.group(1), int(m.group(2))) if m else (name, 0)


def match_layers(graph: Graph, available: dict[str, CheckpointLayer], path: str
                 ) -> tuple[dict[str, CheckpointLayer], list[str]]:
    """``{model layer name: checkpoint layer}``; names first, then Keras' numbering order.

    Keras numbers automatic names per process (``dense``, ``dense_1``, ...); a
    checkpoint saved after other models were built holds ``dense_3``, ``dense_4`` for
    the same two layers. Unmatched layers of one base name are paired in numbering
    order when both sides have the same count; anything else is an error naming the
    layer.
    """
    wanted = _kept_layers(graph)
    by_path = _match_by_path(graph, available, path)
    if by_path is not None:
        return by_path, []
    found = {name: available[name] for name in wanted if name in available}
    missing = [n for n in wanted if n not in found]
    warnings: list[str] = []
    if missing:
        spare = {n: layer for n, layer in available.items() if n not in wanted and layer.tensors}
        by_base: dict[str, list[str]] = {}
        for n in spare:
            by_base.setdefault(_base(n)[0], []).append(n)
        want_base: dict[str, list[str]] = {}
        for n in missing:
            want_base.setdefault(_base(n)[0], []).append(n)
        for base, names in want_base.items():
            have = sorted(by_base.get(base, []), key=lambda n: _base(n)[1])
            if len(have) != len(names):
                first = sorted(names, key=lambda n: _base(n)[1])[0]
                node = wanted[first]
                raise CheckpointError(
                    f"{path}: no weights for layer {first!r} ({node.op}, line "
                    f"{node.span.line if node.span else '?'}); the checkpoint has layers "
                    f"{', '.join(sorted(n for n, l in available.items() if l.tensors)) or 'none'}")
            for mine, theirs in zip(sorted(names, key=lambda n: _base(n)[1]), have):
                found[mine] = available[theirs]
                warnings.append(f"layer {mine!r} read from checkpoint layer {theirs!r} (matched by "
                                "Keras' numbering order)")
    return found, warnings


def _constant_call(node: Node) -> bool:
    """A layer a Functional model calls on constants only (a position embedding of
    ``ops.arange``): Keras runs the call once while building the model and keeps its result, so
    the layer is not among the model's layers and its weights are not in the model's files."""
    return node.layer is not None and node.layer.constant_call


def _kept_layers(graph: Graph) -> dict[str, Node]:
    """``source_layers`` but the layers called on constants only (no weights in the file)."""
    return {name: node for name, node in source_layers(graph).items() if not _constant_call(node)}


def _match_by_path(graph: Graph, available: dict[str, CheckpointLayer], path: str
                   ) -> dict[str, CheckpointLayer] | None:
    """Keras 3 files (``.weights.h5``, ``.keras``) matched the way Keras' own loader does: by
    path, ``layers/<snake-cased class>[_<n>]`` with a counter per class over ``model.layers``.
    The ``name`` attributes hold process-global names (``dense_2`` for the first Dense when
    other models were built before), so matching by name could pair the wrong layers. None
    when some layer has no such path or its tensors do not fit (the caller matches by name)."""
    wanted = _kept_layers(graph)
    at = {layer.path: layer for layer in available.values() if not layer.variable and layer.tensors}
    if not wanted or not any(p.startswith("/layers/") for p in at):
        return None
    order = [n for n in keras_layer_order(graph) if n.source_name and not _constant_call(n)]
    try:
        classes = [_keras_class(graph, n) for n in order]
    except KeyError:  # a node no Keras layer class produces (a model's own add_weight): by name
        return None
    keys = layer_keys([KerasLayerOut(cls, n.source_name, "", []) for cls, n in zip(classes, order)])
    found: dict[str, CheckpointLayer] = {}
    for node, key in zip(order, keys):
        if node.source_name in wanted:
            layer = at.get(f"/layers/{key}")
            if layer is None:
                return None
            found[node.source_name] = layer
    if set(found) != set(wanted) or len({id(v) for v in found.values()}) != len(found):
        return None
    try:
        for name, layer in found.items():
            check_layer(wanted[name], layer, path)
    except CheckpointError:
        return None
    return found


def _runtime_sizes_fit(want: tuple, have: tuple) -> bool:
    """A shape whose differing dims are all sizes the program computes when it runs
    (``nn.LSTM(inputs.shape[2], 32)``): the checkpoint says what they were, as long as one value
    of each such size explains every dim (the value the translation saw is only an example)."""
    if len(want) != len(have):
        return False
    differ = [(w, h) for w, h in zip(want, have) if int.__int__(w) != h]
    if not all(sizes.carries_runtime(w) for w, _ in differ):
        return False
    try:
        sizes.bind_shapes([(tuple(w for w, _ in differ), tuple(h for _, h in differ))])
    except ValueError:
        return False
    return True


def check_layer(node: Node, layer: CheckpointLayer, path: str) -> dict[str, object]:
    """``{canonical param: dataset}`` after checking count, shapes and dtypes."""
    names = param_names(node)
    shapes = expected_shapes(node)
    label = f"layer {node.source_name!r} ({node.op})"
    op, attrs = source_op(node)
    # an integer buffer (a Normalization's sample count) stays an integer
    counters = {p.name for p in ops_table.get(op).active_params(attrs) if not p.trainable and not p.layout}
    if len(layer.tensors) != len(names):
        raise CheckpointError(
            f"{path}: {label}: the checkpoint holds {len(layer.tensors)} tensors "
            f"({', '.join(layer.paths()) or 'none'}), the model expects {len(names)} ({', '.join(names)})")
    out = {}
    for name, tensor in zip(names, layer.tensors):
        have = tuple(int(s) for s in tensor.shape)
        if have != shapes[name] and not _runtime_sizes_fit(shapes[name], have):
            raise CheckpointError(f"{path}: {label} {name}: the checkpoint's tensor {tensor.name} has "
                                  f"shape {have}, the model needs {shapes[name]}")
        if np.dtype(tensor.dtype).kind != "f" and not (name in counters and np.dtype(tensor.dtype).kind in "iu"):
            raise CheckpointError(f"{path}: {label} {name}: dtype {tensor.dtype} where the model "
                                  "needs floating point")
        out[name] = tensor
    return out


def keras_to_torch(graph: Graph, ckpt_path: str, out_path: str, chunk_bytes: int = CHUNK_BYTES
                   ) -> ConversionReport:
    """Convert a Keras checkpoint for ``graph`` into the generated module's state_dict.

    ``out_path`` ending in ``.pt`` gets a torch.save'd state_dict; anything else a
    safetensors file, streamed.
    """
    report = ConversionReport(ckpt_path, out_path, graph.name)
    with KerasCheckpoint(ckpt_path) as ck:
        matched, report.warnings = match_layers(graph, ck.layers | ck.variables, ckpt_path)
        datasets = {name: check_layer(source_layers(graph)[name], layer, ckpt_path)
                    for name, layer in matched.items()}
        plan = torch_plan(graph)
        cache: dict[str, np.ndarray] = {}

        def read(layer: str, param: str) -> np.ndarray:
            ds = datasets[layer][param]
            if ds.name not in cache:
                cache.clear()  # tensors of one layer are consecutive: keep one at a time
                cache[ds.name] = ck.read(ds)
            return cache[ds.name]

        def produce(entry) -> Lazy:
            return gather(entry, lambda p: read(entry.layer, p))

        def spec(entry):
            if entry.constant is not None:
                lazy = to_torch(entry, None)
                return entry.key, lazy.shape, lazy.dtype
            dss = [datasets[entry.layer][p] for p in entry.parts]
            return entry.key, torch_shape(entry, {p: ds.shape for p, ds in zip(entry.parts, dss)}), dss[0].dtype

        report.tensors = len(plan)
        if out_path.endswith(".pt"):
            state = {e.key: produce(e).materialize() for e in plan}
            write_torch_pt(out_path, state)
            report.bytes = os.path.getsize(out_path)
        else:
            by_key = {e.key: e for e in plan}
            report.bytes = write_safetensors_streamed(
                out_path, [spec(e) for e in plan], lambda key: produce(by_key[key]),
                {"format": "pt", "source": os.path.basename(ckpt_path), "model": graph.name},
                chunk_bytes)
    return report


def keras_layer_order(graph: Graph) -> list[Node]:
    """The model's layers (one node each) in the order of Keras' ``model.layers``.

    Keras orders a functional model's layers by depth (the longest path to an output,
    deepest first) and, within a depth, by the order a depth-first walk from the
    outputs first reaches them; a Sequential model's order is the same. Nodes that came
    from one layer call (a Dense and its fused activation) count as one operation.
    """
    def call_key(node: Node):
        layer = node.layer
        return (id(layer), node.call_span) if layer is not None else id(node)

    calls: dict = {}
    for node in graph.nodes:
        calls.setdefault(call_key(node), []).append(node)
    produced_by = {}
    for key, nodes in calls.items():
        for n in nodes:
            for v in n.outputs:
                produced_by[id(v)] = key
    parents: dict = {}
    for key, nodes in calls.items():
        inner = {id(v) for n in nodes for v in n.outputs}
        parents[key] = [produced_by[id(v)] for n in nodes for v in n.inputs
                        if id(v) not in inner and id(v) in produced_by]

    def op_of(key):
        node = calls[key][0]
        return node.layer if node.layer is not None else key

    order: list = []  # calls, inputs before outputs
    index: dict = {}
    done: set = set()

    entered: set = set()

    def visit(root):
        """Depth-first, parents before the call, without recursion (a deep model nests past
        Python's limit; a layer called again at the same line inside a loop makes a cycle of
        call keys, entered once: keras.io mlp_image_classification)."""
        if root in entered:
            return
        entered.add(root)
        index.setdefault(op_of(root), len(index))
        stack = [(root, iter(parents[root]))]
        while stack:
            key, todo = stack[-1]
            for p in todo:
                if p not in entered:
                    entered.add(p)
                    index.setdefault(op_of(p), len(index))
                    stack.append((p, iter(parents[p])))
                    break
            else:
                stack.pop()
                done.add(key)
                order.append(key)

    for v in graph.outputs:
        if id(v) in produced_by:
            visit(produced_by[id(v)])
    depth: dict = {}
    op_depth: dict = {}
    for key in reversed(order):
        d = max(depth.setdefault(key, 0), op_depth.get(op_of(key), 0))
        op_depth[op_of(key)] = d
        depth[key] = d
        for p in parents[key]:
            depth[p] = max(d + 1, depth.get(p, 0))
    ops = sorted(op_depth, key=lambda op: (-op_depth[op], index[op]))
    first_node = {}
    for key in order:
        first_node.setdefault(op_of(key), calls[key][0])
    return [first_node[op] for op in ops]


def _keras_layer(graph: Graph, node: Node) -> KerasLayer:
    """The Keras classes of ``node``'s layer, as the driver recorded them (ir/state_plan.py)."""
    layers = graph.weight_plan.keras_layers
    if layers is None:
        raise CheckpointError(f"{graph.name}: no Keras layer plan was recorded for this model")
    return layers[node.name]


def _keras_class(graph: Graph, node: Node) -> str:
    """The Keras class of ``node``'s layer (the one its file key is made from); KeyError when
    no Keras layer class produces it."""
    cls = _keras_layer(graph, node).cls
    if cls is None:
        raise KeyError(f"no Keras layer class produces op {source_op(node)[0]!r}")
    return cls


def _known(cls: str | None, what: str) -> str:
    if cls is None:
        raise KeyError(f"no Keras layer class produces {what}")
    return cls


def torch_to_keras(graph: Graph, ckpt_path: str, out_path: str, model_name: str | None = None,
                   state: dict | None = None) -> ConversionReport:
    """A torch state_dict for the generated module → a Keras 3 ``.weights.h5`` that the
    source model's ``load_weights`` accepts."""
    report = ConversionReport(ckpt_path, out_path, graph.name)
    if graph.from_keras.user_classes:
        raise CheckpointError(
            f"{ckpt_path}: writing Keras weights for a subclassed model ({', '.join(graph.from_keras.user_classes)}) "
            "is not supported yet: Keras stores its layers under attribute paths this writer does not "
            "reproduce; load the torch weights into the Keras model layer by layer instead")
    nested = sorted({s.explicit_name or s.source_name for n in graph.nodes for s, _ in (n.from_keras.scopes or ())
                     if getattr(s, "model_as_layer", False)})
    if nested:  # (a flat file would give the inner model's tensors to other layers, or to none)
        raise CheckpointError(
            f"{ckpt_path}: writing Keras weights for a model that calls another Keras model as a layer "
            f"({', '.join(nested)}) is not supported yet: Keras stores that model's layers in a group of "
            "their own, which this writer does not reproduce; load the torch weights into the Keras model "
            "layer by layer instead")
    state = read_torch_state(ckpt_path) if state is None else state
    plan = torch_plan(graph)
    check_plan_state(plan, state, ckpt_path)
    canonical = canonical_from_torch(graph, state)
    layers = []
    for node in keras_layer_order(graph):
        if not node.source_name:
            continue
        names = param_names(node)
        tensors = [canonical[node.source_name][p] for p in names] if names else []
        op, attrs = source_op(node)
        classes = _keras_layer(graph, node)
        inner = ()
        if ops_table.get(op).wraps:
            prefix = keras_auto_name(_known(classes.wrapped, f"op {attrs['layer']['op']!r}"))
            inner = (f"forward_{prefix}", f"backward_{prefix}")
        elif op == "multi_head_attention":
            inner = ("query", "key", "value", "attention_output")
        elif _keras_class(graph, node) in WRAPPER_SUBPATHS:  # TimeDistributed(Dense): the Dense's own name
            inner = (keras_auto_name(_known(classes.op_cls, f"op {op!r}")),)
        layers.append(KerasLayerOut(_keras_class(graph, node), node.source_name, op, tensors, inner))
    write_keras_weights(out_path, model_name or graph.name, layers)
    report.tensors = sum(len(layer.tensors) for layer in layers)
    report.bytes = os.path.getsize(out_path)
    return report


def select_keras_model(models: list, ckpt_path: str):
    """The model (a ``ModelDef``) whose layers a Keras checkpoint holds: of those that match, the
    one using the most of its layers, the first on a tie (a script's augmentation Sequential
    matches the classifier's checkpoint too, by its one Normalization: keras.io
    mlp_image_classification).

    With no match, the error is the one the first model gave (it names the layer)."""
    first_error: CheckpointError | None = None
    best, most = None, -1
    with KerasCheckpoint(ckpt_path) as ck:
        for md in models:
            try:
                matched, _ = match_layers(md.graph, ck.layers | ck.variables, ckpt_path)
                for name, layer in matched.items():
                    check_layer(source_layers(md.graph)[name], layer, ckpt_path)
            except CheckpointError as exc:
                first_error = first_error or exc
                continue
            if len(matched) > most:
                best, most = md, len(matched)
    if best is not None:
        return best
    raise first_error or CheckpointError(f"{ckpt_path}: the script builds no model")


def select_torch_model(models: list, state_keys: set[str], ckpt_path: str):
    """The model whose generated module has exactly the checkpoint's state_dict keys."""
    for md in models:
        if {e.key for e in torch_plan(md.graph) if e.constant is None} <= state_keys <= {
                e.key for e in torch_plan(md.graph)}:
            return md
    raise CheckpointError(f"{ckpt_path}: its keys match the state_dict of no model in the script "
                          f"(it has {', '.join(sorted(state_keys)[:5])}{' ...' if len(state_keys) > 5 else ''})")


def torch_source_to_keras(graph: Graph, ckpt_path: str, out_path: str, model_name: str | None = None,
                          state: dict | None = None) -> ConversionReport:
    """The user's own torch checkpoint (for a model read *from* a PyTorch script) → a Keras 3
    ``.weights.h5`` that the generated Keras model's ``load_weights`` accepts."""
    from transpiler.weights import torch_source

    report = ConversionReport(ckpt_path, out_path, graph.name)
    state = read_torch_state(ckpt_path) if state is None else state
    if graph.weight_plan.keras_blocks and graph.weight_plan.keras_blocks.lists:
        raise CheckpointError(f"{graph.name}: a list of repeated blocks ({', '.join(graph.weight_plan.keras_blocks.lists)}, "
                              "the caller's count long) is not written to a .weights.h5 yet: set the weights "
                              "in Python (transpiler.weights.torch_source.keras_weights)")
    torch_source.check_state(graph, state, ckpt_path)
    composed = graph.from_torch.composed
    containers: list[str] = []
    if composed:  # (frontend_ast/torch/parts) each submodule a Layer under its attribute
        parts = composed["parts"]
        prefixes = weights_paths([attr for attr, _ in parts], [_snake(g.name) for _, g in parts])
        layers, groups = [], []
        for (attr, part), prefix in zip(parts, prefixes):
            sub = {k[len(attr) + 1:]: v for k, v in state.items() if k.startswith(attr + ".")}
            part_layers, _ = _keras_layers_out(part, torch_source.keras_weights(part, sub), True)
            attributes = torch_source.printed_attributes(part)
            layers += part_layers
            groups += [f"{prefix}/{attributes[layer.name]}" for layer in part_layers]
            containers.append(prefix)
    elif graph.weight_plan.keras_blocks:  # (a subclass holding blocks of their own classes)
        layers, groups, containers = _block_layers_out(graph, torch_source.keras_weights(graph, state), top=True)
    else:
        layers, groups = _keras_layers_out(graph, torch_source.keras_weights(graph, state),
                                           graph.weight_plan.subclass)
    write_keras_weights(out_path, model_name or graph.name, layers, groups, containers)
    report.tensors = sum(len(layer.tensors) for layer in layers)
    report.bytes = os.path.getsize(out_path)
    return report


def _snake(name: str) -> str:
    """Keras' key for a layer of a class in a list (``Encoder`` → ``encoder``)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _keras_layers_out(graph: Graph, weights: dict, subclass: bool) -> tuple[list, list[str] | None]:
    """The layers of the Keras model printed for ``graph`` with their tensors, in the order
    Keras lists them, and each one's group in the file (None: a functional model's)."""
    from transpiler.weights.torch_source import printed_attributes

    attributes = printed_attributes(graph)
    if subclass:  # model.layers holds the layers in the order __init__ assigns them
        first = {}
        for node in graph.nodes:
            first.setdefault(node.name, node)
        order = [first[name] for name in attributes]
    else:
        order = keras_layer_order(graph)
    layers = []
    for node in order:
        classes = _keras_layer(graph, node)
        cls = classes.cls
        if cls is None:
            continue
        inner = ()
        if node.op == "bidirectional":
            prefix = keras_auto_name(_known(classes.wrapped, f"op {node.attrs['layer']['op']!r}"))
            inner = (f"forward_{prefix}", f"backward_{prefix}")
        elif node.op == "multi_head_attention":
            inner = ("query", "key", "value", "attention_output")
        layers.append(KerasLayerOut(cls, node.name, node.op, weights.get(node.name, []), inner))
    groups = weights_paths([attributes[layer.name] for layer in layers], layer_keys(layers)) if subclass else None
    return layers, groups


def _block_layers_out(graph: Graph, weights: dict, top: bool) -> tuple[list, list[str], list[str]]:
    """The layers of a subclass holding blocks (``graph.weight_plan.keras_blocks``, printers/keras/
    subclass), with their groups in the file and the blocks' groups (``containers``). A
    ``keras.Model`` (``top``) saves its layers by Keras' rule for subclasses (``weights_paths``:
    the layers and blocks in ``__init__``'s order, keyed by class); a block (a ``layers.Layer``)
    under their attributes; a block's layers under the block's group, recursively."""
    from transpiler.weights.torch_source import printed_attributes

    attributes = printed_attributes(graph)
    blocks = graph.weight_plan.keras_blocks or KerasBlocks(order=[("layer", n) for n in attributes])
    own, _ = _keras_layers_out(graph, weights, True)
    own_by_name = {layer.name: layer for layer in own}
    entries = []  # (attribute, what Keras keys it by, the layers and groups inside)
    for entry in blocks.order:
        if entry[0] == "block":
            attr, cls = entry[1], entry[2]
            child = blocks.graphs[attr]
            mapped = {blocks.nodes[name][1]: arrays for name, arrays in weights.items()
                      if name in blocks.nodes and blocks.nodes[name][0] == attr}
            entries.append((attr, KerasLayerOut(cls, attr, "", []), _block_layers_out(child, mapped, top=False)))
        elif entry[1] in own_by_name:
            layer = own_by_name[entry[1]]
            entries.append((attributes[layer.name], layer, None))
    if top:
        prefixes = weights_paths([attr for attr, _, _ in entries], layer_keys([key for _, key, _ in entries]))
    else:
        prefixes = [attr for attr, _, _ in entries]
    layers, groups, containers = [], [], []
    for (attr, layer, inside), prefix in zip(entries, prefixes):
        if inside is None:
            layers.append(layer)
            groups.append(prefix)
            continue
        containers.append(prefix)
        layers += inside[0]
        groups += [f"{prefix}/{g}" for g in inside[1]]
        containers += [f"{prefix}/{c}" for c in inside[2]]
    return layers, groups, containers


def select_torch_source_model(models: list, state_keys: set[str], ckpt_path: str):
    """The model (read from a PyTorch script) whose state_dict keys the checkpoint has."""
    for md in models:
        plan = md.graph.weight_plan.source_state or []
        needed = {e.key for e in plan if e.constant is None}
        if needed <= state_keys <= {e.key for e in plan}:
            return md
    raise CheckpointError(f"{ckpt_path}: its keys match the state_dict of no model in the script "
                          f"(it has {', '.join(sorted(state_keys)[:5])}{' ...' if len(state_keys) > 5 else ''})")
