"""PyTorch emitter of ``index_lookup`` (Keras' StringLookup / IntegerLookup inside a model).

The module holds the runtime's class of the Keras layer's name (runtime/torch/text.py: a plain
object, no parameters, tested against Keras) made with the source's arguments; ``forward``
calls it on the input's tokens (a numpy array of str for a string input, a tensor of
integers otherwise) and gets int64 ids or float32 encodings as a tensor on the input's device.
"""

from __future__ import annotations

from transpiler.ir.graph import Node
from transpiler.printers.code import lit
from transpiler.printers.torch.ops import Emission, emitter

#: the runtime classes (module, name) a model's lookups need: copied before the model classes
RUNTIME = "torch.text"


@emitter("index_lookup")
def emit_index_lookup_torch(node: Node, m: str) -> Emission:
    a = node.attrs
    args = ", ".join(f"{k}={lit(v)}" for k, v in (a["config"] or {}).items() if k not in ("name", "dtype"))
    return Emission(f"{a['kind']}({args})", lambda ins: f"{m}({ins[0]})")


def lookup_classes(program) -> list[str]:
    """The runtime lookup classes the program's models hold, sorted."""
    found = set()
    for md in program.models:
        graph = getattr(md, "graph", None)
        for node in getattr(graph, "nodes", ()) or ():
            if node.op == "index_lookup":
                found.add(node.attrs["kind"])
    return sorted(found)
