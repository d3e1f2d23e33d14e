"""The ONNX model under construction, and the registry of per-op emitters."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

#: the opset the printer writes: the newest whose every op the printer emits onnxruntime (1.32)
#: implements (opset 22 re-versioned RandomNormalLike and others that it has no kernels for), or
#: the installed onnx package's newest if that is older; every emitter's ops have had their
#: present semantics since opset 21 (the newest of onnx 1.16, the oldest the project allows)
NEWEST = 21


def opset() -> int:
    from onnx import defs

    return min(NEWEST, defs.onnx_opset_version())


class Unsupported(Exception):
    """The IR node has no ONNX emission (yet): the model is not written; the message says why."""


@dataclass
class OnnxBuilder:
    """Nodes and initializers of the graph being printed, with graph-unique names."""

    nodes: list = field(default_factory=list)
    initializers: list = field(default_factory=list)
    used: set = field(default_factory=set)

    def fresh(self, hint: str) -> str:
        base = re.sub(r"[^0-9A-Za-z_.]", "_", hint) or "v"
        name, i = base, 1
        while name in self.used:
            i += 1
            name = f"{base}_{i}"
        self.used.add(name)
        return name

    def const(self, array: Any, hint: str, dtype: Any = None) -> str:
        """An initializer holding ``array`` (float32 unless ``dtype`` or an integer array)."""
        from onnx import numpy_helper

        a = np.asarray(array)
        if dtype is not None:
            a = a.astype(dtype)
        elif a.dtype.kind == "f":
            a = a.astype(np.float32)
        elif a.dtype.kind in "iub" and a.dtype != np.bool_:
            a = a.astype(np.int64)
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(a), name))
        return name

    def scalar_int(self, value: int, hint: str) -> str:
        """A rank-0 int64 initializer (``const`` gives at least rank 1, as numpy's contiguity does)."""
        from onnx import TensorProto, helper

        name = self.fresh(hint)
        self.initializers.append(helper.make_tensor(name, TensorProto.INT64, [], [int(value)]))
        return name

    def ints(self, values, hint: str) -> str:
        return self.const(np.asarray([int(v) for v in values], np.int64), hint)

    def add(self, op_type: str, inputs: list[str], hint: str, n_out: int = 1, **attrs: Any) -> list[str]:
        from onnx import helper

        outs = [self.fresh(f"{hint}" if n_out == 1 else f"{hint}_{i}") for i in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=self.fresh(f"{hint}/{op_type}"),
                                           **attrs))
        return outs

    def one(self, op_type: str, inputs: list[str], hint: str, **attrs: Any) -> str:
        return self.add(op_type, inputs, hint, 1, **attrs)[0]


@dataclass
class Context:
    """What an emitter gets: the builder, the node's ONNX input names and its params (canonical
    layout, the passes' transforms applied), plus the IR node itself."""

    b: OnnxBuilder
    node: Any
    inputs: list[str]
    params: dict[str, np.ndarray]

    @property
    def hint(self) -> str:
        return self.node.name

    def attr(self, name: str) -> Any:
        return self.node.attrs[name]

    def in_shape(self, i: int = 0) -> tuple:
        return tuple(self.node.inputs[i].shape or ())

    def out_shape(self, i: int = 0) -> tuple:
        return tuple(self.node.outputs[i].shape or ())


Emitter = Callable[[Context], list]
_EMITTERS: dict[str, Emitter] = {}


def emitter(*ops: str):
    def register(fn: Emitter) -> Emitter:
        for op in ops:
            if op in _EMITTERS:
                raise ValueError(f"two ONNX emitters for {op!r}")
            _EMITTERS[op] = fn
        return fn
    return register


def emitter_for(op: str) -> Emitter | None:
    return _EMITTERS.get(op)


def supported_ops() -> list[str]:
    return sorted(_EMITTERS)


def ints(values) -> list[int]:
    return [int(v) for v in values]
