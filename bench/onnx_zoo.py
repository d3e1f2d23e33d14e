"""The 9 light model-zoo graphs inside the onnx wheel through the ONNX frontend, both targets.

Variants: ``shipped`` (opset 9, weights made by ConstantOfShape, all 0.02: the outputs are
nearly constant and cannot reveal a wrong permutation), ``random`` (every such weight replaced
by a seeded random initializer of the same shape, and the final Softmax left out so that the
logits are compared: random weights saturate the probabilities to exact 0s and 1s) and
``random-opset`` (that, converted to the current opset with ``onnx.version_converter``). Each translation is run on a seeded random input
and compared with onnxruntime: max abs error, the bound 1e-4 x max(1, |output|), top-1 agreement.

    python bench/onnx_zoo.py [--models squeezenet resnet50] [--targets pytorch keras]
                             [--variants shipped random random-opset] [--markdown docs/onnx_zoo.md]
"""

from __future__ import annotations

import argparse
import gc
import glob
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

VARIANTS = ("shipped", "random", "random-opset")


def zoo_paths() -> dict[str, str]:
    import onnx

    folder = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    return {os.path.basename(p)[len("light_"):-len(".onnx")]: p
            for p in sorted(glob.glob(os.path.join(folder, "light_*.onnx")))}


def _role(model, name: str) -> str:
    users = [(n, list(n.input).index(name)) for n in model.graph.node if name in n.input]
    if not users:
        return "other"
    node, slot = users[0]
    if node.op_type in ("Conv", "Gemm", "MatMul", "ConvTranspose"):
        return "weight" if slot == 1 else "bias"
    if node.op_type == "BatchNormalization":
        return {1: "scale", 2: "shift", 3: "shift", 4: "scale"}.get(slot, "other")
    if node.op_type == "Unsqueeze":
        return _role(model, node.output[0])
    if node.op_type == "Mul":
        return "scale"
    return "shift"


def randomized(path: str, out: str, seed: int = 0, opset: int | None = None, logits: bool = True) -> str:
    """``path`` with each ConstantOfShape weight a seeded random initializer (He-scaled
    kernels, BN scales and variances in [0.5, 1.5], shifts ~ N(0, 0.1)); ``opset``: converted.
    ``logits``: without the final Softmax (random weights make deep nets' logits large, and
    saturated probabilities of exactly 0 and 1 would hide any error)."""
    import onnx
    from onnx import helper, numpy_helper, version_converter

    model = onnx.load(path)
    rng = np.random.default_rng(seed)
    inits = {i.name: i for i in model.graph.initializer}
    keep = []
    for node in model.graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in inits:
            shape = tuple(int(s) for s in numpy_helper.to_array(inits[node.input[0]]))
            role = _role(model, node.output[0])
            if role == "weight":
                fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
                a = rng.normal(size=shape) * np.sqrt(2.0 / max(fan_in, 1))
            elif role == "scale":
                a = rng.uniform(0.5, 1.5, size=shape)
            else:
                a = rng.normal(size=shape) * 0.1
            model.graph.initializer.append(numpy_helper.from_array(a.astype(np.float32), node.output[0]))
            if model.ir_version < 4:  # (initializers are graph inputs too before IR version 4)
                model.graph.input.append(helper.make_tensor_value_info(node.output[0], onnx.TensorProto.FLOAT, shape))
            continue
        keep.append(node)
    if logits and keep[-1].op_type == "Softmax":  # the probabilities saturate: compare the logits
        model.graph.output[0].name = keep[-1].input[0]
        keep = keep[:-1]
    del model.graph.node[:]
    model.graph.node.extend(keep)
    if opset is not None:
        model = version_converter.convert_version(model, opset)
    onnx.save(model, out)
    return out


def run(models: list[str], targets: list[str], variants: list[str], out=sys.stdout) -> list[dict]:
    import onnx

    from onnx_harness import compare

    current = onnx.defs.onnx_opset_version()
    rows = []
    folder = tempfile.mkdtemp(prefix="onnx_zoo_")
    paths = zoo_paths()
    for name in models:
        for variant in variants:
            path = paths[name]
            opset = 9
            try:
                if variant != "shipped":
                    opset = current if variant == "random-opset" else 9
                    path = randomized(paths[name], os.path.join(folder, f"{name}_{variant}.onnx"), seed=0,
                                      opset=current if variant == "random-opset" else None)
            except Exception as exc:  # noqa: BLE001 - reported in the table
                for target in targets:
                    rows.append(dict(model=name, variant=variant, opset=opset, target=target, ok=False,
                                     error=None, bound=None, top1=None, params=None, seconds=0.0,
                                     note=f"variant not built: {type(exc).__name__}: {exc}"[:120]))
                    print(_line(rows[-1]), file=out, flush=True)
                continue
            for target in targets:
                start = time.perf_counter()
                try:
                    c = compare(path, target, seed=0)
                    row = dict(model=name, variant=variant, opset=opset, target=target, ok=c.ok,
                               error=c.max_abs, bound=1e-4 * max(1.0, c.scale), top1=c.top1, params=c.params,
                               note="; ".join(c.stubs)[:160])
                except Exception as exc:  # noqa: BLE001 - reported in the table
                    row = dict(model=name, variant=variant, opset=opset, target=target, ok=False, error=None,
                               bound=None, top1=None, params=None, note=f"{type(exc).__name__}: {exc}"[:160])
                row["seconds"] = time.perf_counter() - start
                rows.append(row)
                print(_line(row), file=out, flush=True)
                gc.collect()
            if path != paths[name]:
                os.remove(path)
    return rows


def _fmt(v, spec="{:.2e}") -> str:
    return "-" if v is None else spec.format(v)


def _line(r: dict) -> str:
    return (f"| {r['model']} | {r['variant']} | {r['opset']} | {r['target']} | {'yes' if r['ok'] else 'NO'} | "
            f"{_fmt(r['error'])} | {_fmt(r['bound'])} | {'-' if r['top1'] is None else r['top1']} | "
            f"{_fmt(r['params'], '{:,}')} | {r['seconds']:.1f} | {r['note']} |")


INTRO = """\
The 9 graphs of `onnx/backend/test/data/light` (Caffe2 exports at opset 9, their weights made by
`ConstantOfShape`) translated to PyTorch and to Keras source with their weights, run on a seeded
random input and compared with onnxruntime.

- **shipped**: as in the wheel: every weight is 0.02, the outputs are nearly constant and cannot
  reveal a wrong permutation (errors are 0 or near it); it shows the files translate and run.
- **random**: every ConstantOfShape weight replaced by a seeded random initializer of its shape
  (He-scaled kernels, BatchNorm scales and variances in [0.5, 1.5], shifts N(0, 0.1)), the final
  Softmax left out so that the logits are compared (random weights make the logits of the deep
  nets large, up to 3e6 for ShuffleNet, and the probabilities saturate to exact 0s and 1s,
  which would hide any error). Bound: 1e-4 x max(1, largest |output|).
- **random-opset**: the random variant converted to the current opset by
  `onnx.version_converter` before it is translated.
- **weights**: the generated model's floating-point weights (BatchNorm statistics included). The
  AlexNet, ZFNet and GoogLeNet (inception_v1) counts include the fixed, non-trainable 1x1 kernels
  the LRN layers are decomposed into (C² each: 74,752 for AlexNet).
- **s**: seconds to translate, convert the weights, run both and compare (machine-dependent).
"""

HEADER = ("| model | variant | opset | target | agrees | max abs error | bound | same top-1 | weights | s | note |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--models", nargs="*")
    p.add_argument("--targets", nargs="*", default=["pytorch", "keras"])
    p.add_argument("--variants", nargs="*", default=list(VARIANTS))
    p.add_argument("--markdown", help="also write the table here")
    args = p.parse_args(argv)
    import torch  # noqa: F401  (before TensorFlow in one process)

    models = args.models or list(zoo_paths())
    print(HEADER, flush=True)
    rows = run(models, args.targets, args.variants)
    ok = sum(r["ok"] for r in rows)
    summary = f"\n{ok} of {len(rows)} translations agree with onnxruntime."
    print(summary)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# The light model-zoo graphs through the ONNX frontend\n\n"
                    "Generated by `python bench/onnx_zoo.py --markdown docs/onnx_zoo.md`.\n\n" + INTRO + "\n")
            f.write(HEADER + "\n" + "\n".join(_line(r) for r in rows) + "\n" + summary + "\n")
    return 0 if ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
