"""Initial weights drawn as the source framework's default initializers would (seeded numpy),
for an ONNX model exported without a checkpoint: the graph is usable (and checkable) at once,
and the model's doc string says where its numbers came from."""

from __future__ import annotations

import numpy as np

from transpiler.ir import sizes
from transpiler.ir.graph import Graph
from transpiler.ir.params import expected_shapes, param_names, source_op

KERAS_DOC = ("Keras' default initializers (glorot_uniform kernels, orthogonal recurrent kernels, zero biases, "
             "U(-0.05, 0.05) embeddings, unit gammas and variances)")
TORCH_DOC = ("PyTorch's default initializers (U(+-1/sqrt(fan_in)) weights and biases, N(0, 1) embeddings, "
             "unit BatchNorm weights and variances)")


def _fans(shape: tuple) -> tuple[int, int]:
    if len(shape) < 2:
        return (int(shape[0]) if shape else 1,) * 2
    receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return int(shape[-2]) * receptive, int(shape[-1]) * receptive


def _orthogonal(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    rows, cols = int(np.prod(shape[:-1])), int(shape[-1])
    a = rng.standard_normal((max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    q = q if rows >= cols else q.T
    return q[:rows, :cols].reshape(shape)


def _keras(rng: np.random.Generator, name: str, shape: tuple, op: str, attrs: dict) -> np.ndarray:
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "recurrent_kernel":
        return _orthogonal(rng, shape)
    if leaf.endswith("kernel"):
        fan_in, fan_out = _fans(shape)
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-limit, limit, shape)
    if leaf == "embeddings":
        return rng.uniform(-0.05, 0.05, shape)
    if leaf in ("gamma", "moving_variance", "variance", "scale"):
        return np.ones(shape)
    if leaf == "bias" and op == "lstm" and attrs.get("unit_forget_bias", True):
        bias = np.zeros(shape)
        units = shape[-1] // 4
        bias[..., units:2 * units] = 1.0
        return bias
    return np.zeros(shape)


def _torch(rng: np.random.Generator, name: str, shape: tuple, op: str, attrs: dict, fan_in: int) -> np.ndarray:
    leaf = name.rsplit(".", 1)[-1]
    if op in ("lstm", "gru", "simple_rnn"):
        bound = 1.0 / np.sqrt(int(attrs["units"]))
        return rng.uniform(-bound, bound, shape)
    if leaf == "embeddings":
        return rng.standard_normal(shape)
    if leaf in ("gamma", "moving_variance", "variance", "scale"):
        return np.ones(shape)
    if leaf in ("beta", "moving_mean", "mean"):
        return np.zeros(shape)
    bound = 1.0 / np.sqrt(max(fan_in, 1))
    return rng.uniform(-bound, bound, shape)


def draw(graph: Graph, source: str, seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """``{source layer: {param: array}}`` with the source framework's default initial values."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, np.ndarray]] = {}
    for node in graph.nodes:
        layer = node.source_name or node.name
        names = param_names(node)
        if not names or layer in out and all(n in out[layer] for n in names):
            continue
        shapes = expected_shapes(node)
        if any(sizes.carries_runtime(tuple(s)) for s in shapes.values()):
            from transpiler.printers.onnx.builder import Unsupported

            raise Unsupported(f"{node.span or node.name}: the sizes of layer {layer!r} are computed when the program "
                              "runs: give the trained checkpoint (--weights), whose shapes decide them")
        op, attrs = source_op(node)
        kernel = next((s for n, s in shapes.items() if n.endswith("kernel") and "recurrent" not in n), None)
        fan_in = _fans(tuple(kernel))[0] if kernel is not None else 1
        params = out.setdefault(layer, {})
        for name in names:
            if name in params:
                continue
            shape = tuple(int(d) for d in shapes[name])
            value = _keras(rng, name, shape, op, attrs) if source == "keras" else \
                _torch(rng, name, shape, op, attrs, fan_in)
            params[name] = np.asarray(value, np.float32)
    return out
