"""Models sharing layers (issue 18): a model used as a layer of another, a model assembled from
another model's tensors (keras/layer_refs.py). Keras shares the layers, and their weights,
between the models; the torch output holds copies (each model's module its own): the reader
says so where the program relies on the sharing, and gives each graph nodes of its own.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.keras.values import ModelHandle, ModelObj
from transpiler.frontend_ast.size_names import runtime_sizes_of
from transpiler.ir.graph import Graph, Node, Span, Value


class KerasSharedModels:
    """Mixin of KerasFrontend."""

    def _given_name(self, node: cst.Call) -> str | None:
        """The name a model called as a layer is called through (``encoder(inputs)``) when code
        where the calling model is built can pass it: a parameter of the function being read
        (``def create_classifier(encoder)``) or a module-level name."""
        if not isinstance(node.func, cst.Name):
            return None
        name = node.func.value
        params = self.__dict__.get("param_stack") or []
        if params:
            return name if name in params[-1] else None
        return name if name in self.globals.vars else None

    def _model_as_layer(self, model: ModelObj | ModelHandle, args, kwargs, span: Span, given: str | None = None):
        """A Functional or Sequential model called as a layer of another (remembered for
        ``_shared_model_warnings``). It is shared only when the program keeps it under a
        module-level name (``encoder = create_encoder()``, ``encoder = keras.Model(...)``); a
        builder called in place (``keras.Sequential([get_encoder(), ...])``) makes a model of
        its own, a builder's local one is only used here."""
        # (a model only a builder's local or a layer's attribute holds is used here alone)
        shared = any(v is model for v in self.globals.vars.values())
        if isinstance(model, ModelHandle):
            model = self._handle_model(model)
        if shared:
            self.__dict__.setdefault("models_as_layers", []).append((model, span))
        else:
            given = None  # (a model only this one uses: its layers are this module's own)
        if args and isinstance(args[0], dict):  # Keras matches a dict's tensors to the inputs by name
            graph = self._model_graph(model)
            given = args[0]
            names = [v.var for v in graph.inputs]
            if set(names) != set(given):
                raise Unsupported(f"model called on a dict whose keys ({', '.join(map(str, given))}) are not its "
                                  f"inputs' names ({', '.join(map(str, names))})")
            args = [[given[name] for name in names], *args[1:]]
        out = self._call_model_as_layer(model, args, kwargs, span)
        if given is not None and getattr(model, "scope", None) is not None:
            model.scope.given_as = given  # (resolved to its ModelDef when the program is read)
        return out

    def _shared_model_warnings(self) -> None:
        """A model of the program in its own right (``encoder``, trained, then used in a
        classifier) that another model calls as a layer: Keras' two models share its layers
        and weights; the torch module of the outer model holds a copy of its own. Said, since
        training one no longer changes the other."""
        seen: set[tuple] = set()
        for model, span in self.__dict__.get("models_as_layers", ()):
            md = self.model_defs.get(model)
            if md is None or (id(model), span.line) in seen:
                continue
            seen.add((id(model), span.line))
            scope = getattr(model, "scope", None)
            if scope is not None and scope.given_as is not None:
                scope.given_model = md  # the parent takes the instance (the printer checks its layouts)
                continue
            name = md.var or md.builder or md.class_name
            self.program.warn(span, f"the model {name} is used as a layer here: Keras shares its layers (and "
                                    f"weights) between {name} and this model; the torch module built here holds a "
                                    f"copy of its own (to share them, assign the {name} instance to this "
                                    "module's attribute after both are made)", self._line(span))

    def _own_graph(self, graph: Graph, span: Span) -> Graph:
        """``graph`` as extracted, or, when another model's graph holds some of its nodes (a
        model of another model's tensors, ``keras.Model(model.input, model.get_layer("dense2").
        output)``), a copy with nodes of its own, since the passes rewrite each graph in place."""
        claimed = self.__dict__.setdefault("claimed_nodes", set())
        if any(id(n) in claimed for n in graph.nodes):
            if runtime_sizes_of(graph):
                raise Unsupported("a model assembled from another model's layers whose sizes are computed "
                                  "at run time is not translated yet")
            self.program.warn(span, "this model is made of layers of another model: Keras shares those layers (and "
                                    "their weights, trained or not) between the two models; the torch module built "
                                    "here holds copies of its own, freshly initialised (load the other model's "
                                    "state_dict into it, strict=False, to use trained weights)", self._line(span))
            return _copied_graph(graph)
        claimed.update(id(n) for n in graph.nodes)
        return graph


def _copied_graph(graph: Graph) -> Graph:
    """``graph`` with nodes and values of its own (the same layers, attributes and facts)."""
    values: dict[int, Value] = {}

    def value(v: Value) -> Value:
        if id(v) not in values:
            values[id(v)] = replace(v, producer=None, scope_vars=dict(v.scope_vars))
        return values[id(v)]

    nodes: dict[int, Node] = {}
    for node in graph.nodes:
        copy = replace(node, inputs=[value(v) for v in node.inputs], outputs=[value(v) for v in node.outputs],
                       attrs=dict(node.attrs), params=dict(node.params), comments=list(node.comments),
                       param_transforms=dict(node.param_transforms),
                       from_torch=replace(node.from_torch), from_keras=replace(node.from_keras),
                       from_onnx=replace(node.from_onnx))
        for v in copy.outputs:
            v.producer = copy
        nodes[id(node)] = copy
    for copy in nodes.values():
        if copy.from_keras.fused_into is not None:
            copy.from_keras.fused_into = nodes.get(id(copy.from_keras.fused_into), copy.from_keras.fused_into)
    out = Graph(graph.name, span=graph.span)
    out.inputs = [value(v) for v in graph.inputs]
    out.outputs = [value(v) for v in graph.outputs]
    out.nodes = [nodes[id(n)] for n in graph.nodes]
    out.logits_outputs = dict(graph.logits_outputs)
    out.from_keras = replace(graph.from_keras)
    return out
