"""A torch method that only re-initialises layers the model holds (``self.tok_emb.reset_parameters()``,
frontend_ast/torch/reset_methods.py) as a function over the Keras model: each weight of those
layers drawn again from the initializer its Keras layer was built with.

Imports no deep-learning framework.
"""

from __future__ import annotations

from transpiler.ir.graph import Graph
from transpiler.ir.params import param_names
from transpiler.printers.keras.subclass import is_subclass, layer_attributes


def _layer_expr(graph: Graph, path: str) -> str | None:
    """How the function reads the Keras layer of the torch module at ``path``: ``model.<attr>``
    in a subclass, ``model.get_layer(name)`` in a functional model; None for a layer inside a
    block of its own class (or not found)."""
    node = next((n for n in graph.nodes if n.from_torch.path == path and param_names(n)), None)
    blocks = graph.weight_plan.keras_blocks
    if node is None:
        return None
    if blocks is not None and node.name in blocks.nodes:  # (``model.stem.emb``: a block of its own class)
        attr, inner = blocks.nodes[node.name]
        held = layer_attributes(blocks.graphs[attr]).get(inner)
        return f"model.{attr}.{held}" if held and "." not in attr else None
    if is_subclass(graph):
        attr = layer_attributes(graph).get(node.name)
        return f"model.{attr}" if attr else None
    return f"model.get_layer({node.name!r})"


def reset_function(graph: Graph, function: str, method: str, params: str, paths: list[str]) -> list[str] | None:
    """The lines of ``def <function>(model, ...)`` re-drawing the weights of the layers at
    ``paths``; None when one of them cannot be read from the Keras model."""
    owner = ".".join([graph.name] + paths[0].split(".")[:-1])  # (``GPT.emb_stem``: the module holding it)
    lines = [f"def {function}({params}):",
             f'    """``{owner}.{method}()``: its layers\' weights drawn again from their initializers."""']
    for path in paths:
        expr = _layer_expr(graph, path)
        if expr is None:
            return None
        node = next(n for n in graph.nodes if n.from_torch.path == path and param_names(n))
        lines += [f"    layer = {expr}", "    if layer.built:  # (an unbuilt layer draws them when first called)"]
        lines += [f"        layer.{w}.assign(layer.{w}_initializer(layer.{w}.shape, layer.{w}.dtype))"
                  for w in param_names(node)]
    return lines
