"""ONNX's own node test cases (``onnx.backend.test.case.node.collect_testcases``) through the
ONNX frontend, to PyTorch and Keras source, run and compared with the expected outputs at each
case's own tolerances.

Scope: the single-node cases whose op type has a converter (the registry is the scope; every
other op type is out of scope: it has no ops-table entry yet). Inputs a layer reads as weights
or operands of its shape (Conv's W and B, BatchNormalization's statistics, Reshape's shape,
Slice's bounds, ...: every input after the first of an op that is not element-wise) are bound
as initializers first; element-wise ops keep all inputs as graph inputs. A case counts as passed
only if it translates without a stub, runs, and matches.

    python bench/onnx_node_suite.py [--targets pytorch keras] [--ops Conv Relu] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

#: op types whose every input is a tensor operand (not bound as a weight)
ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Pow", "Sum", "Max", "Min", "Mean", "Concat", "MatMul", "Greater", "Less",
               "GreaterOrEqual", "LessOrEqual", "Equal", "Where", "And", "Or", "Xor", "Einsum"}


#: ONNX element types neither target has a tensor type for (8-, 4- and 2-bit floats and
#: integers, strings) and the non-tensor inputs (sequences, optionals)
FOREIGN_TYPES = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0", "FLOAT4E2M1",
                 "UINT4", "INT4", "UINT2", "INT2", "STRING"}


def foreign_types(case) -> bool:
    """The case reads or makes a value of a type neither PyTorch nor Keras has."""
    from onnx import TensorProto

    def foreign(elem: int) -> bool:
        return TensorProto.DataType.Name(elem) in FOREIGN_TYPES

    graph = case.model.graph
    for v in list(graph.input) + list(graph.output):
        if not v.type.HasField("tensor_type") or foreign(v.type.tensor_type.elem_type):
            return True
    node = graph.node[0]
    return any(a.name == "to" and foreign(a.i) for a in node.attribute)


#: why a case of an op type the table maps is out of scope (named in docs/onnx.md)
OUT_OF_SCOPE = {
    "types": "a value of a type neither PyTorch nor Keras computes with (float8, float4, int4/uint4, "
             "int2/uint2, strings) or a non-tensor (sequence, optional) is read or made",
    "random": "training-mode Dropout with a ratio above 0: the expected output is one draw of numpy's "
              "random generator, which no model reproduces",
}


def out_of_scope(case) -> str | None:
    """The key of ``OUT_OF_SCOPE`` that leaves ``case`` out, or None."""
    if foreign_types(case):
        return "types"
    node = case.model.graph.node[0]
    if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]:
        from onnx import numpy_helper

        feeds = dict(zip([i.name for i in case.model.graph.input], case.data_sets[0][0]))
        consts = {t.name: numpy_helper.to_array(t) for t in case.model.graph.initializer}
        training, ratio = feeds.get(node.input[2], consts.get(node.input[2])), 0.5
        if len(node.input) > 1 and node.input[1]:
            ratio = feeds.get(node.input[1], consts.get(node.input[1]))
        if training is not None and bool(np.asarray(training)) and float(np.asarray(ratio)) > 0:
            return "random"
    return None


def mapped_cases(ops: set[str] | None = None):
    """The single-node cases whose op type has a converter (in scope or not)."""
    from onnx.backend.test.case.node import collect_testcases

    from transpiler.frontend_onnx import registered_ops

    table = registered_ops()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    out = []
    for case in cases:
        if case.model is None or len(case.model.graph.node) != 1:
            continue
        op = case.model.graph.node[0].op_type
        if op in table and (ops is None or op in ops):
            out.append(case)
    return out


def in_scope_cases(ops: set[str] | None = None):
    """The mapped cases no ``OUT_OF_SCOPE`` reason leaves out."""
    return [c for c in mapped_cases(ops) if out_of_scope(c) is None]


def _array(value) -> np.ndarray:
    import onnx
    from onnx import numpy_helper

    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else np.asarray(value)


def bind_weights(case):
    """The case's model with its weight inputs as initializers; (model, feeds, expected)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    inputs, outputs = case.data_sets[0]
    node = model.graph.node[0]
    names = [i.name for i in model.graph.input]
    feeds = dict(zip(names, inputs))
    keep = set(names) if node.op_type in ELEMENTWISE else {node.input[0]}
    for name in names:
        if name not in keep:
            model.graph.initializer.append(numpy_helper.from_array(_array(feeds.pop(name)), name))
    graph_inputs = [i for i in model.graph.input if i.name in keep]
    del model.graph.input[:]
    model.graph.input.extend(graph_inputs)
    return model, feeds, list(outputs)


def _torch_tensor(x: np.ndarray):
    """numpy → torch; bfloat16 (ml_dtypes, which torch.from_numpy refuses) through float32."""
    import torch

    if x.dtype.name == "bfloat16":
        return torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(x))


def run_case(case, target: str, folder: str) -> tuple[bool, str]:
    import onnx

    from onnx_harness import import_text
    from transpiler.translate_onnx import translate_onnx

    model, feeds, expected = bind_weights(case)
    path = os.path.join(folder, f"{case.name}.onnx")
    onnx.save(model, path)
    weights = os.path.join(folder, f"{case.name}_{target}" + (".safetensors" if target == "pytorch" else ".weights.h5"))
    try:
        result = translate_onnx(path, target, weights)
    except Exception as exc:  # noqa: BLE001
        return False, f"translation error: {type(exc).__name__}: {exc}"[:150]
    if result.stubs:
        return False, "stub: " + result.stubs[0].message[:150]
    graph = result.program.models[0].graph
    order = [v.var for v in graph.inputs]
    from onnx import helper

    names = [i.name for i in model.graph.input]
    types = [helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type) for i in model.graph.input]
    xs = [_array(feeds[n]).astype(t) for n, t in zip(names, types)]
    try:
        module = import_text(result.text, f"case_{target}_{case.name}", folder)
        net = module.build_model()
        if target == "pytorch":
            import torch
            from safetensors.torch import load_file

            if os.path.exists(weights):
                net.load_state_dict(load_file(weights), strict=True)
            net.eval()
            with torch.no_grad():
                ys = net(*[_torch_tensor(x) for x in xs])
            ys = [(y.float() if y.dtype == torch.bfloat16 else y).numpy()
                  for y in (ys if isinstance(ys, (tuple, list)) else [ys])]
        else:
            if os.path.exists(weights):
                net.load_weights(weights)
            moved = []
            for x, spec in zip(xs, net.inputs):
                want = tuple(spec.shape[1:])
                moved.append(x if want == x.shape[1:] else np.transpose(x, (0, *range(2, x.ndim), 1)))
            transposed = any(m is not x for m, x in zip(moved, xs))
            ys = net(moved if len(moved) > 1 else moved[0], training=False)
            ys = [np.asarray(y) for y in (ys if isinstance(ys, (tuple, list)) else [ys])]
            if transposed:  # (the outputs the graph leaves channels-first stay so)
                kept = [bool(v.layout) and v.layout[1:2] == "C" for v in graph.outputs]
                ys = [np.transpose(y, (0, y.ndim - 1, *range(1, y.ndim - 1))) if y.ndim >= 3 and not k else y
                      for y, k in zip(ys, kept)]
    except Exception as exc:  # noqa: BLE001
        return False, f"run error: {type(exc).__name__}: {exc}"[:150]
    del order
    for y, want in zip(ys, expected):
        want = _array(want)
        if y.shape != want.shape:
            return False, f"shape {y.shape}, expected {want.shape}"
        if not np.allclose(y.astype(np.float64), want.astype(np.float64), rtol=case.rtol, atol=case.atol,
                           equal_nan=True):
            return False, f"max abs error {np.max(np.abs(y.astype(np.float64) - want)):.2e}"
    return True, ""


#: (case, target) pairs with a result (all of them when this run ran the cases)
_SEEN: set = set()


def _from_logs(paths: list[str], cases) -> tuple[dict, dict, list[str]]:
    """The results printed by earlier runs (``<case> <target> ok|FAIL why`` lines)."""
    op_of = {c.name: c.model.graph.node[0].op_type for c in cases}
    per_op: dict = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0]))
    failures: dict = collections.defaultdict(list)
    targets: list[str] = []
    latest: dict = {}
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                parts = line.rstrip("\n").split(" ", 3)
                if len(parts) < 3 or parts[0] not in op_of or parts[2] not in ("ok", "FAIL"):
                    continue
                name, target, status = parts[:3]
                if target not in targets:
                    targets.append(target)
                latest[(name, target)] = (status, parts[3] if len(parts) > 3 else "")  # a rerun wins
    for (name, target), (status, why) in latest.items():
        _SEEN.add((name, target))
        per_op[op_of[name]][target][1] += 1
        per_op[op_of[name]][target][0] += status == "ok"
        if status == "FAIL":
            failures[target].append(f"{name}: {why}")
    return per_op, failures, targets


def failure_classes(lines: list[str]) -> list[tuple[str, int, str]]:
    """Failures grouped by cause: the message with names, numbers and shapes left out;
    (cause, count, an example case), the largest class first."""
    import re

    groups: dict = collections.OrderedDict()
    for line in lines:
        name, why = line.split(": ", 1)
        cause = re.sub(r"node '[^']*': ", "", why)
        cause = re.sub(r"'[^']*'", "…", cause)
        cause = re.sub(r"<[^>]*>", "…", cause)
        cause = re.sub(r"\(.*", "", cause)
        cause = re.sub(r"\d+(\.\d+)?(e-?\d+)?", "N", cause).strip().rstrip(":").replace("|", "/")
        groups.setdefault(cause, []).append(name)
    return sorted(((c, len(v), v[0]) for c, v in groups.items()), key=lambda x: (-x[1], x[0]))


SUMMARY_BEGIN = "<!-- onnx-node-suite: generated by python bench/onnx_node_suite.py --onnx-md docs/onnx.md -->"
SUMMARY_END = "<!-- /onnx-node-suite -->"


def _write_summary(path: str, totals: dict, excluded: list, classes: dict) -> None:
    """The node-suite figures of docs/onnx.md between its markers (atomically)."""
    out = [SUMMARY_BEGIN, "", "| target | in scope passed | every case of a mapped op type |", "|---|---|---|"]
    for t, (a, b) in totals.items():
        out.append(f"| {t} | {a}/{b} ({100 * a / max(b, 1):.0f} %) | {a}/{b + len(excluded)} "
                   f"({100 * a / max(b + len(excluded), 1):.0f} %) |")
    out += ["", "Out of scope (named, not counted in the first column):", ""]
    for key, why in OUT_OF_SCOPE.items():
        out.append(f"- {sum(k == key for _, k in excluded)} cases: {why}.")
    out += ["", "Failures by cause (the largest classes; every failing case is listed in `docs/onnx_node_suite.md`):", "",
            "| cause | " + " | ".join(classes) + " |", "|---|" + "---|" * len(classes)]
    causes = list(dict.fromkeys(c for t in classes for c, _, _ in classes[t]))
    counts = {t: {c: n for c, n, _ in classes[t]} for t in classes}
    causes.sort(key=lambda c: -sum(counts[t].get(c, 0) for t in classes))
    for c in causes[:20]:
        out.append(f"| {c} | " + " | ".join(str(counts[t].get(c, 0)) for t in classes) + " |")
    out += ["", SUMMARY_END]
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if SUMMARY_BEGIN in text:
        head, rest = text.split(SUMMARY_BEGIN, 1)
        text = head + "\n".join(out) + rest.split(SUMMARY_END, 1)[1]
    else:
        raise SystemExit(f"{path}: no {SUMMARY_BEGIN} marker")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--targets", nargs="*", default=["pytorch", "keras"])
    p.add_argument("--ops", nargs="*")
    p.add_argument("--markdown")
    p.add_argument("--onnx-md", help="rewrite the generated node-suite summary of this file (docs/onnx.md)")
    p.add_argument("--from-logs", nargs="*", help="tabulate the printed results of earlier runs instead")
    args = p.parse_args(argv)
    cases = in_scope_cases(set(args.ops) if args.ops else None)
    if args.from_logs:
        per_op, failures, args.targets = _from_logs(args.from_logs, cases)
    else:
        import torch  # noqa: F401  (before TensorFlow)

        folder = tempfile.mkdtemp(prefix="onnx_nodes_")
        per_op = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0]))
        failures = collections.defaultdict(list)
        for case in cases:
            op = case.model.graph.node[0].op_type
            for target in args.targets:
                try:
                    ok, why = run_case(case, target, folder)
                except Exception as exc:  # noqa: BLE001 - a case the runner cannot feed
                    ok, why = False, f"runner error: {type(exc).__name__}: {exc}"[:150]
                _SEEN.add((case.name, target))
                per_op[op][target][1] += 1
                per_op[op][target][0] += ok
                if not ok:
                    failures[target].append(f"{case.name}: {why}")
                print(f"{case.name} {target} {'ok' if ok else 'FAIL ' + why}", flush=True)
    from transpiler.frontend_onnx import registered_ops

    table = registered_ops()
    lines = ["| ONNX op | ops-table entries | " + " | ".join(f"{t} passed" for t in args.targets) + " |",
             "|---|---|" + "---|" * len(args.targets)]
    totals = {t: [0, 0] for t in args.targets}
    for op in sorted(per_op):
        cells = []
        for t in args.targets:
            passed, total = per_op[op][t]
            totals[t][0] += passed
            totals[t][1] += total
            cells.append(f"{passed}/{total}")
        lines.append(f"| {op} | {', '.join(table[op]) or '-'} | " + " | ".join(cells) + " |")
    lines.append("| **all in scope** | | " + " | ".join(
        f"**{a}/{b} ({100 * a / max(b, 1):.0f} %)**" for a, b in totals.values()) + " |")
    excluded = [(c, out_of_scope(c)) for c in mapped_cases(set(args.ops) if args.ops else None)]
    excluded = [(c, why) for c, why in excluded if why]
    lines.append(f"| every case of a mapped op type ({len(excluded)} out of scope counted as failed) | | " + " | ".join(
        f"{a}/{b + len(excluded)} ({100 * a / max(b + len(excluded), 1):.0f} %)" for a, b in totals.values()) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    classes = {t: failure_classes(failures[t]) for t in args.targets}
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# ONNX node test cases through the ONNX frontend\n\n"
                    "Generated by `python bench/onnx_node_suite.py --markdown docs/onnx_node_suite.md`: the "
                    f"single-node cases of `onnx.backend.test.case.node` whose op type has a converter and "
                    f"that no reason below leaves out ({len(cases)} cases in scope, {len(excluded)} out).\n\n")
            f.write(text)
            f.write("\n## Out of scope\n\n")
            for key, why in OUT_OF_SCOPE.items():
                names = [c.name for c, k in excluded if k == key]
                f.write(f"- **{len(names)} cases**: {why}: {', '.join(names)}.\n")
            for t in args.targets:
                f.write(f"\n## Failure classes ({t})\n\n| cases | cause | e.g. |\n|---|---|---|\n")
                f.write("".join(f"| {n} | {cause} | {ex} |\n" for cause, n, ex in classes[t]))
            for t in args.targets:
                f.write(f"\n## Failures ({t})\n\n" + "".join(f"- {line}\n" for line in failures[t]))
    if args.onnx_md:
        _write_summary(args.onnx_md, totals, excluded, classes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
