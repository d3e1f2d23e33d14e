"""PyTorch emitter of ``opaque_layer``: a custom Keras layer the reader could not translate.

Its module is a stub class named after the user's class (``stub_class_text``), printed where
the Keras class was defined: ``__init__`` keeps the constructor's static arguments, and
``forward`` raises ``NotImplementedError`` with the reason and the shapes it must return, so
a human can write the torch implementation there. The model calls it like any module.
"""

from __future__ import annotations

from transpiler.ir.graph import Graph, Node
from transpiler.printers.code import call, docstring, lit
from transpiler.printers.torch.ops import Emission, emitter


def _shape_text(shape) -> str:
    return "(" + ", ".join("N" if i == 0 and d is None else "?" if d is None else str(d)
                           for i, d in enumerate(shape)) + ")"


@emitter("opaque_layer")
def emit_opaque_layer_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    module = call(a["class_name"], **dict(a["config"] or {}))
    if len(node.outputs) == 1:
        return Emission(module, lambda ins: f"{m}({', '.join(ins)})")
    return Emission(module, statements=lambda ins, outs: [f"{', '.join(outs)} = {m}({', '.join(ins)})"])


def stub_class_text(node: Node, source_file: str) -> str:
    """The stub ``nn.Module`` class of an opaque layer's node."""
    a = node.attrs
    name = a["class_name"]
    config = dict(a["config"] or {})
    where = f"{source_file}:{node.span.line}" if node.span else source_file
    ins = [_shape_text(v.shape) for v in node.inputs]
    outs = [_shape_text(tuple(s)) for s in a["output_shapes"]]
    how = "from its compute_output_shape" if a["shape_from"] == "compute_output_shape" else \
        a["shape_from"].replace("assumed: ", "assumed: ") + "; the Keras layer has no compute_output_shape"
    doc = [f"TODO(transpiler): stub for the Keras layer ``{name}`` (called at {where}), not translated.",
           "",
           f"call() is not translated: {a['reason']}",
           "",
           f"Takes {', '.join(ins)} (channels-last, as in Keras); returns {', '.join(outs)} ({how}).",
           "Write its torch computation in forward(); the model around it is translated."]
    params = "".join(f", {k}={lit(v)}" for k, v in config.items())
    lines = [f"class {name}(nn.Module):", "    " + docstring("\n".join(doc), "    "), "",
             f"    def __init__(self{params}):", "        super().__init__()"]
    lines += [f"        self.{k} = {k}" for k in config]
    message = f"transpiler: {name}.call() is not translated ({where}): {a['reason']}"
    lines += ["", "    def forward(self, *inputs):", f"        raise NotImplementedError({message!r})"]
    return "\n".join(lines) + "\n"


def opaque_nodes(graph: Graph) -> list[Node]:
    """The graph's opaque-layer nodes, one per class (the first call of each)."""
    seen: dict[str, Node] = {}
    for node in graph.nodes:
        if node.op == "opaque_layer":
            seen.setdefault(node.attrs["class_name"], node)
    return list(seen.values())
