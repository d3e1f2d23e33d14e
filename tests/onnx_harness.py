"""Run a translated ONNX model against onnxruntime (tests and bench/onnx_zoo.py).

``compare(path, target)`` translates the ONNX file at ``path`` to ``target`` with its weights,
imports the generated module, loads the weights the way a user would
(``load_state_dict(load_file(...), strict=True)`` / ``load_weights``), runs it on seeded
random inputs (channels-last for Keras) and returns the max abs error against onnxruntime,
the top-1 agreement and the parameter count.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from dataclasses import dataclass

import numpy as np


@dataclass
class Comparison:
    target: str
    max_abs: float | None
    scale: float
    top1: bool | None
    params: int
    stubs: list[str]
    text: str

    @property
    def ok(self) -> bool:
        return not self.stubs and self.max_abs is not None and self.max_abs <= 1e-4 * max(1.0, self.scale) \
            and self.top1 is not False


def onnxruntime_run(path: str, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def input_for(path: str, seed: int = 0, batch: int | None = None) -> np.ndarray:
    import onnx

    model = onnx.load(path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    inp = next(i for i in model.graph.input if i.name not in inits)
    shape = [d.dim_value if d.HasField("dim_value") else 2 for d in inp.type.tensor_type.shape.dim]
    if batch is not None:
        shape[0] = batch
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def import_text(text: str, name: str, folder: str):
    path = os.path.join(folder, f"{name}.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_generated(text: str, target: str, weights: str, x: np.ndarray, folder: str,
                  channels_last_out: bool = True) -> tuple[np.ndarray, int]:
    """The generated model's output on ``x`` (channels-first in and out) and its weight count
    (``channels_last_out``: the Keras model's output is a channels-last map)."""
    module = import_text(text, f"onnx_gen_{target}_{abs(hash(weights)) % 10 ** 8}", folder)
    model = module.build_model()
    if target == "pytorch":
        import torch
        from safetensors.torch import load_file

        model.load_state_dict(load_file(weights), strict=True)
        model.eval()
        with torch.no_grad():
            y = model(torch.from_numpy(x)).numpy()
        count = sum(int(t.numel()) for t in model.state_dict().values() if t.is_floating_point())
        return y, count
    model.load_weights(weights)
    # a feature map goes in channels-last (a sequence (N, T, F) is the same in both)
    wants = tuple(model.inputs[0].shape[1:])
    xx = x if wants == x.shape[1:] else np.transpose(x, (0, *range(2, x.ndim), 1))
    y = np.asarray(model(xx, training=False))
    if y.ndim >= 3 and xx is not x and channels_last_out:
        y = np.transpose(y, (0, y.ndim - 1, *range(1, y.ndim - 1)))
    return y, int(sum(np.prod(w.shape) for w in model.weights))


def compare(path: str, target: str, seed: int = 0, batch: int | None = None) -> Comparison:
    from transpiler.translate_onnx import translate_onnx

    folder = tempfile.mkdtemp(prefix="onnx_cmp_")
    weights = os.path.join(folder, "model.safetensors" if target == "pytorch" else "model.weights.h5")
    result = translate_onnx(path, target, weights)
    if result.stubs:
        return Comparison(target, None, 0.0, None, 0, [str(s) for s in result.stubs], result.text)
    x = input_for(path, seed, batch)
    ref = onnxruntime_run(path, x)
    out = result.program.models[0].graph.outputs[0]
    y, count = run_generated(result.text, target, weights, x, folder,
                             channels_last_out=not (out.layout and out.layout[1:2] == "C"))
    y = y.reshape(ref.shape)
    top1 = None
    if ref.ndim >= 2:
        r, o = ref.reshape(ref.shape[0], -1), y.reshape(y.shape[0], -1)
        best = np.sort(r, axis=-1)
        if r.shape[-1] > 1 and np.all(best[:, -1] - best[:, -2] > 1e-6):  # (a tie has no top-1)
            top1 = bool(np.all(r.argmax(-1) == o.argmax(-1)))
    return Comparison(target, float(np.max(np.abs(y - ref))), float(np.max(np.abs(ref))), top1, count, [],
                      result.text)
