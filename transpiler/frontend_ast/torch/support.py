"""The torch model reader's helpers: what a statement does (training tests, init code), module
walks, and the clean-ups of a traced graph (RNN simplification, bidirectional halves, sequence
labels, pruning)."""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.ir.graph import Graph, Value
from transpiler.ir.layout import is_channels_first
from transpiler.ir.shapes import infer_node
from transpiler.frontend_ast.torch.values import Mod, ParamObj, Tensor


def _training_test(test) -> bool | None:
    """``self.training`` → True, ``not self.training`` → False, anything else → None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _training_test(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.Attribute) and test.attr.value == "training" and isinstance(test.value, cst.Name) \
            and test.value.value == "self":
        return True
    return None


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    raise ValueError(node)


def _code(node) -> str:
    try:
        return cst.Module([]).code_for_node(node)
    except Exception:  # noqa: BLE001
        return type(node).__name__


def _mentions(node, names: set[str]) -> bool:
    return any(n.value in names for n in nodes_of(node, cst.Name))


def _name_is(node, *values: str) -> bool:
    return isinstance(node, cst.Name) and node.value in values


def _is_init_attribute(node: cst.Attribute) -> bool:
    """What weight-initialisation code reaches for: ``self.modules()``, ``self.apply(fn)``,
    ``nn.init.x_(...)``, ``w.data.normal_(0, 0.01)``, ``p.requires_grad_(False)`` (plain tests:
    libcst.matchers costs ~0.5 s to import)."""
    return ((_name_is(node.value, "self") and _name_is(node.attr, "modules", "reset_parameters", "named_modules"))
            or _name_is(node.attr, "apply", "requires_grad_", "normal_", "uniform_", "fill_", "zero_")
            or (_name_is(node.value, "nn") and _name_is(node.attr, "init")))


def _is_init_code(stmt) -> bool:
    """``for m in self.modules(): nn.init...``, ``self.apply(fn)``, ``nn.init.x_(...)``,
    ``self.fc.weight.data.normal_(0, 0.01)``."""
    return isinstance(stmt, (cst.For, cst.SimpleStatementLine)) and \
        any(_is_init_attribute(n) for n in nodes_of(stmt, cst.Attribute))


def _init_code_methods(cls: cst.ClassDef) -> set[str]:
    """Methods the class's weight-initialisation code in ``__init__`` uses
    (``self.apply(self._init_weights)``, ``self._reset()`` next to ``nn.init`` calls)."""
    names: set[str] = set()
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
            for inner in stmt.body.body:
                if _is_init_code(inner):
                    names.update(n.attr.value for n in nodes_of(inner, cst.Attribute) if _name_is(n.value, "self"))
    return names


def _trains(fn: cst.FunctionDef) -> bool:
    """``fn`` runs a training step (``.backward()``/``.zero_grad()``): program code."""
    return any(isinstance(n.func, cst.Attribute) and _name_is(n.func.attr, "backward", "zero_grad")
               for n in nodes_of(fn, cst.Call))


def _returns_nothing(fn: cst.FunctionDef) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_Return(self, n: cst.Return) -> None:
            nonlocal found
            if n.value is not None:
                found = True

        def visit_FunctionDef(self, n) -> bool:
            return n is fn

    fn.visit(V())
    return not found


def _snake(name: str) -> str:
    import re

    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def _one_weight_module(mod: Mod, key: str) -> "Mod | None":
    """``mod`` when it is a user module holding nothing but the weight ``key`` whose
    ``forward`` takes no input and only returns ``self.<key>``; else None."""
    if mod.kind != "user" or mod.cls is None or not mod.path or \
            any(k != key and isinstance(v, (Mod, ParamObj)) for k, v in mod.attrs.items()):
        return None
    fwd = mod.cls.method("forward")
    if fwd is None or len(fwd.params.params) != 1 or isinstance(fwd.params.star_arg, cst.Param) or \
            fwd.params.kwonly_params or fwd.params.star_kwarg is not None:
        return None
    body = [s for s in fwd.body.body if not (isinstance(s, cst.SimpleStatementLine) and isinstance(
        s.body[0], cst.Expr) and isinstance(s.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or \
            not isinstance(body[0].body[0], cst.Return):
        return None
    value = body[0].body[0].value
    self_name = fwd.params.params[0].name.value
    ok = isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and \
        value.value.value == self_name and value.attr.value == key
    return mod if ok else None


def _walk(mod: Mod, path: str = ""):
    yield path, mod
    for key, child in mod.children():
        yield from _walk(child, f"{path}.{key}" if path else key)


def _walk_params(mod: Mod):
    for path, m in _walk(mod):
        if m.kind == "user":
            for k, v in m.attrs.items():
                if isinstance(v, ParamObj):
                    yield f"{path}.{k}" if path else k, v


def _graph_inputs(graph: Graph, names: list[str], values: list[Value]) -> list[Tensor]:
    """Inputs of ``graph`` shaped like ``values`` (a submodule's or method's first inputs),
    named after the parameters ``names``."""
    inputs = []
    for pname, v in zip(names, values):
        x = graph.new_value("input", shape=v.shape, dtype=v.dtype, layout=v.layout)
        x.var = pname
        graph.inputs.append(x)
        inputs.append(Tensor(x))
    return inputs


def _assign_paths(mod: Mod, path: str) -> None:
    """Every module's state_dict prefix (``features.0``, ``blocks.1.conv``), and every own
    parameter's or buffer's key (``scale.center``)."""
    for p, m in _walk(mod):
        m.path = p
    for key, param in _walk_params(mod):
        param.path = key


def _class_names_in(mod: Mod) -> set[str]:
    return {m.cls.node.name.value for _, m in _walk(mod) if m.kind == "user"}


def _simplify_rnns(graph: Graph) -> None:
    """RNN nodes were built returning everything torch returns; keep what is read.

    A forward layer whose sequence and cell state go unused becomes ``return_sequences=
    False`` with the final hidden state as its only output (Keras' idiomatic ``LSTM(u)``);
    unread states are dropped (``return_state=False``).
    """
    used = {v for n in graph.nodes for v in n.inputs} | set(graph.outputs)  # (Values: identity-hashed)
    calls: dict[str, int] = {}
    for node in graph.nodes:
        calls[node.name] = calls.get(node.name, 0) + 1
    for node in graph.nodes:
        if calls[node.name] > 1:
            continue  # (one layer called several times, an RNN cell per step: one configuration)
        if node.spec.states:  # a recurrent layer (the ops table's fact)
            seq, h, *rest = node.outputs
            if seq not in used and not any(c in used for c in rest) and h in used:
                node.attrs["return_sequences"] = False
                node.attrs["return_state"] = False
                node.outputs = [h]
            elif not any(s in used for s in node.outputs[1:]):
                node.attrs["return_state"] = False
                node.outputs = [seq]
        elif node.op == "bidirectional":
            inner = node.attrs["layer"]["attrs"]
            if not any(s in used for s in node.outputs[1:]):
                node.attrs["layer"] = {"op": node.attrs["layer"]["op"], "attrs": {**inner, "return_state": False}}
                node.outputs = node.outputs[:1]
    for node in graph.nodes:
        infer_node(node)


#: variable names for the values an index makes
_INDEX_HINTS = {"slice": "part", "take": "picked"}

#: the element-wise op joining the two directions → Keras' ``merge_mode``
_MERGE_MODES = {"add": "sum", "multiply": "mul"}


def _merge_bidirectional_halves(graph: Graph) -> None:
    """``y[..., :u] + y[..., u:]`` of a bidirectional RNN's concatenated sequence (torch's
    spelling of Keras' ``merge_mode="sum"``; ``*`` for "mul") becomes that merge mode, when
    nothing else reads the sequence or its halves."""
    for node in list(graph.nodes):
        if node.op != "bidirectional" or node.attrs["merge_mode"] != "concat":
            continue
        seq = node.outputs[0]
        units = seq.shape[-1] // 2 if seq.shape[-1] else None
        halves = graph.consumers(seq)
        if units is None or len(halves) != 2 or any(v is seq for v in graph.outputs):
            continue
        bounds = sorted((h.attrs["starts"], h.attrs["stops"], h.attrs["steps"]) for h in halves
                        if h.op == "slice" and tuple(a % len(seq.shape) for a in h.attrs["axes"])
                        == (len(seq.shape) - 1,))
        if bounds != [((0,), (units,), (1,)), ((units,), (2 * units,), (1,))]:
            continue
        readers = [graph.consumers(h.outputs[0]) for h in halves]
        join = readers[0][0] if readers[0] and len(readers[0]) == 1 and readers[0] == readers[1] else None
        if join is None or join.op not in _MERGE_MODES or len(join.inputs) != 2 \
                or any(v is h.outputs[0] for h in halves for v in graph.outputs):
            continue
        node.attrs["merge_mode"] = _MERGE_MODES[join.op]
        node.from_torch.absorbed_spans.extend(n.span for n in (join, *halves) if n.span is not None)
        infer_node(node)
        graph.replace_uses(join.outputs[0], seq)
        graph.nodes = [n for n in graph.nodes if n is not join and n not in halves]


def _relabel_sequences(graph: Graph) -> None:
    """A rank-3+ value that no convolution reads is not a feature map: ``(N, T, F)`` fed to
    an RNN or a Linear has its features last. Only the tag changes (the data is as torch
    has it), so param shapes and the layout passes read the axes right."""
    from transpiler.ir.layout import CHANNELS_LAST
    from transpiler.ir.layout import TORCH_TO_KERAS, feeds_implicit

    candidates = list(graph.inputs) + [n.outputs[0] for n in graph.nodes if n.op in ("reshape", "transpose")]
    for v in candidates:
        if is_channels_first(v.layout) and not feeds_implicit(graph, v, TORCH_TO_KERAS) and not _gates_a_map(graph, v):
            v.layout = CHANNELS_LAST[len(v.shape)]
            if v.producer is not None:
                v.producer.out_layout = v.layout
    for node in graph.nodes:
        infer_node(node)


_prune = Graph.drop_unread  # drop the nodes nothing reads (a layer built but unused in forward)


def _gates_a_map(graph: Graph, v: Value) -> bool:
    """``v`` meets a channels-first map of its rank in an element-wise op (``x * gate``)."""
    return any(len(node.inputs) > 1 and any(u is not v and len(u.shape) == len(v.shape) and
                                            is_channels_first(u.layout) for u in node.inputs)
               for node in graph.consumers(v))
