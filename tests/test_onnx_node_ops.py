"""Single ONNX nodes through the frontend to both targets, run and compared with ONNX's own
reference evaluator (``onnx.reference``) at tight tolerances: the op types and element types
the node suite (``bench/onnx_node_suite.py``) measures, one small case each."""

from __future__ import annotations

import os
import sys
import types

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))

from onnx_harness import compare  # noqa: E402
from onnx_node_suite import run_case  # noqa: E402
from transpiler.translate_onnx import translate_onnx  # noqa: E402

TARGETS = ("pytorch", "keras")


def _case(name: str, op: str, inputs: dict[str, np.ndarray], attrs: dict | None = None, n_out: int = 1,
          opset: int = 21):
    """A node-suite-like case: one node, graph inputs typed as ``inputs``, outputs from the
    reference evaluator."""
    outs = [f"out{i}" for i in range(n_out)]
    node = helper.make_node(op, list(inputs), outs, name=name, **(attrs or {}))

    def typed(names, arrays):
        return [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                for k, v in zip(names, arrays)]

    def build(outputs):
        graph = helper.make_graph([node], name, typed(inputs, inputs.values()), outputs)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    untyped = [helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, None) for o in outs]
    expected = ReferenceEvaluator(build(untyped)).run(None, dict(inputs))
    model = build(typed(outs, [np.asarray(e) for e in expected]))
    onnx.checker.check_model(model, full_check=True)
    return types.SimpleNamespace(name=name, model=model, data_sets=[(list(inputs.values()), expected)],
                                 rtol=1e-6, atol=1e-6)


def _ints(dtype, shape, lo=-9, hi=9, seed=0, nonzero=False):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(max(lo, info.min), min(hi, info.max) + 1, size=shape).astype(dtype)
    if nonzero:
        x[x == 0] = 1
    return x


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8"])
def test_integer_div_truncates_toward_zero(tmp_path, target, dtype):
    lo = 0 if dtype.startswith("u") else -9
    case = _case(f"div_{dtype}", "Div", {"x": _ints(dtype, (3, 4), lo, 50, 1),
                                         "y": _ints(dtype, (3, 4), lo, 9, 2, nonzero=True)})
    ok, why = run_case(case, target, str(tmp_path))
    assert ok, why


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8"])
def test_small_integer_inputs_compute_in_their_own_type(tmp_path, target, dtype):
    case = _case(f"add_{dtype}", "Add", {"x": _ints(dtype, (2, 5), 0, 100, 3), "y": _ints(dtype, (2, 5), 0, 100, 4)})
    ok, why = run_case(case, target, str(tmp_path))
    assert ok, why  # (100 + 100 wraps around in int8 and uint8 as ONNX's reference does)


def test_wide_unsigned_types_compute_through_int64_for_torch(tmp_path):
    """torch holds uint32 but has no CPU max for it: the input is read as int64, the output
    cast back (tests/test_onnx_node_plain.py: uint64, which int64 does not hold, is a stub)."""
    case = _case("max_uint32", "Max", {"x": _ints("uint32", (2, 3), 0, 9), "y": _ints("uint32", (2, 3), 0, 9, 1)})
    path = str(tmp_path / "max_uint32.onnx")
    onnx.save(case.model, path)
    torch_result = translate_onnx(path, "pytorch")
    assert not torch_result.stubs and ".to(torch.uint32)" in torch_result.text, torch_result.text
    for target in TARGETS:
        ok, why = run_case(case, target, str(tmp_path))
        assert ok, why


def test_int64_division_is_a_stub_not_an_inexact_quotient(tmp_path):
    case = _case("div_int64", "Div", {"x": _ints("int64", (2, 3), 1, 9), "y": _ints("int64", (2, 3), 1, 9, 1)})
    path = str(tmp_path / "div_int64.onnx")
    onnx.save(case.model, path)
    for target in TARGETS:
        result = translate_onnx(path, target)
        assert [d for d in result.stubs if "int64" in d.message], result.diagnostics


def _floats(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def _bound(tmp_path, case, target):
    """run_case with the node suite's binding (weight-like inputs as initializers)."""
    ok, why = run_case(case, target, str(tmp_path))
    assert ok, why


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Equal"])
def test_comparisons_give_bools(tmp_path, target, op):
    x = _ints("int32", (3, 4), -3, 3, 5)
    _bound(tmp_path, _case(op.lower(), op, {"x": x, "y": _ints("int32", (3, 4), -3, 3, 6)}), target)


@pytest.mark.parametrize("target", TARGETS)
def test_where_and_reciprocal(tmp_path, target):
    cond = _ints("int32", (2, 3, 4), 0, 1, 7).astype(bool)
    _bound(tmp_path, _case("where", "Where", {"c": cond, "x": _floats((2, 3, 4), 1), "y": _floats((2, 3, 4), 2)}),
           target)
    _bound(tmp_path, _case("reciprocal", "Reciprocal", {"x": _floats((2, 3, 4), 3) + 4}), target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_arg_extremes_on_a_feature_map(tmp_path, target, op, keepdims):
    # axis 1 is the channel axis: the Keras output (channels-last) must still pick along it
    _bound(tmp_path, _case(op.lower(), op, {"x": _floats((2, 3, 4, 5), 4)}, {"axis": 1, "keepdims": keepdims}), target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_extreme_select_last_index_picks_the_last_tie(tmp_path, target, op):
    x = _ints("int32", (3, 4, 6), 0, 2, 21).astype(np.float32)  # (many ties)
    _bound(tmp_path, _case(op.lower(), op, {"x": x}, {"axis": -1, "keepdims": 0, "select_last_index": 1}), target)


@pytest.mark.parametrize("target", TARGETS)
def test_prelu_per_channel_slope_on_a_feature_map(tmp_path, target):
    slope = np.random.default_rng(5).uniform(0.1, 0.5, size=(3, 1, 1)).astype(np.float32)
    _bound(tmp_path, _case("prelu", "PRelu", {"x": _floats((2, 3, 4, 5), 6), "slope": slope}), target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("axis", [1, 2, -1])
def test_layer_normalization_with_its_statistics(tmp_path, target, axis):
    x = _floats((2, 3, 4, 5), 8) * 3 + 1
    tail = x.shape[axis % 4:]
    inputs = {"x": x, "scale": _floats(tail, 9), "bias": _floats(tail, 10)}
    _bound(tmp_path, _case(f"ln{axis}", "LayerNormalization", inputs, {"axis": axis, "epsilon": 1e-3}, n_out=3),
           target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("attrs, scales", [
    ({"mode": "nearest"}, [1.0, 1.0, 0.6, 1.5]),
    ({"mode": "nearest", "coordinate_transformation_mode": "align_corners", "nearest_mode": "floor"},
     [1.0, 1.0, 2.0, 2.5]),
    ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "round_prefer_ceil"},
     [1.0, 1.0, 2.0, 2.0]),
])
def test_nearest_resize_of_any_scale_after_a_convolution(tmp_path, target, attrs, scales):
    path = _resize_net(tmp_path, attrs, scales)
    result = compare(path, target)
    assert result.ok, (result.max_abs, result.stubs)


def test_nearest_resize_on_a_float32_rounding_tie_is_a_stub(tmp_path):
    """align_corners with 5 -> 8 rows: row 7 reads 7 * 4 / 7 = 4 exactly, which ONNX's
    reference computes in float32 as 3.9999998 (floor 3) and onnxruntime as 4."""
    attrs = {"mode": "nearest", "coordinate_transformation_mode": "align_corners", "nearest_mode": "floor"}
    result = translate_onnx(_resize_net(tmp_path, attrs, [1.0, 1.0, 1.75, 2.5]), "pytorch")
    assert [d for d in result.stubs if "rounding boundary" in d.message], result.diagnostics


def _resize_net(tmp_path, attrs, scales):
    """A fractional-scale nearest Resize is a gather per spatial axis; after a Conv the Keras
    output is channels-last and the gather must follow the spatial axes there."""
    from onnx import TensorProto, numpy_helper

    rng = np.random.default_rng(11)
    inits = [numpy_helper.from_array(rng.normal(size=(4, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(np.asarray(scales, np.float32), "scales")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Resize", ["c", "", "scales"], ["y"], name="up", **attrs)]
    graph = helper.make_graph(nodes, "resize_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    path = str(tmp_path / "resize_net.onnx")
    onnx.save(model, path)
    return path


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("attrs, scales", [
    ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, [1.0, 1.0, 1.6, 2.0]),
    ({"mode": "cubic"}, [1.0, 1.0, 0.8, 1.5]),
    ({"mode": "linear", "antialias": 1}, [1.0, 1.0, 0.6, 0.5]),
])
def test_linear_and_cubic_resize_as_frozen_interpolation_matrices(tmp_path, target, attrs, scales):
    path = _resize_net(tmp_path, attrs, scales)
    result = compare(path, target)
    assert result.ok, (result.max_abs, result.stubs)
    assert "requires_grad=False" in result.text or "trainable=False" in result.text


def test_resize_with_an_extrapolation_value_is_a_stub(tmp_path):
    from onnx import TensorProto, numpy_helper

    inits = [numpy_helper.from_array(np.asarray([0, 0, -.5, -.5, 1, 1, 1.5, 1.5], np.float32), "roi"),
             numpy_helper.from_array(np.asarray([1, 1, 3, 3], np.int64), "sizes")]
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], name="crop", mode="linear",
                            coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=10.0)
    graph = helper.make_graph([node], "crop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    path = str(tmp_path / "crop.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), path)
    result = translate_onnx(path, "keras")
    assert [d for d in result.stubs if "extrapolation_value" in d.message], result.diagnostics


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("attrs", [
    {"strides": [3, 2], "output_shape": [10, 8]},  # one more row and column than the layer gives: output_padding
    {"strides": [2, 2], "pads": [1, 1, 0, 0]},  # crops more at the start: symmetric pads + output_padding
    {"strides": [2, 2], "auto_pad": "SAME_LOWER"},
])
def test_conv_transpose_output_shape_and_uneven_pads(tmp_path, target, attrs):
    w = _floats((2, 3, 3, 3), 12)
    _bound(tmp_path, _case("deconv", "ConvTranspose", {"x": _floats((1, 2, 3, 3), 13), "w": w}, attrs), target)


def test_conv_transpose_cropping_more_at_the_end_is_a_stub(tmp_path):
    case = _case("deconv", "ConvTranspose", {"x": _floats((1, 2, 3, 3), 13), "w": _floats((2, 3, 3, 3), 12)},
                 {"strides": [2, 2], "auto_pad": "SAME_UPPER"})
    ok, why = run_case(case, "pytorch", str(tmp_path))
    assert not ok and "output_padding" in why, why


@pytest.mark.parametrize("target", TARGETS)
def test_selu_with_other_constants_and_pad_over_listed_axes(tmp_path, target):
    _bound(tmp_path, _case("selu", "Selu", {"x": _floats((3, 4), 14)}, {"alpha": 2.0, "gamma": 3.0}), target)
    pads = {"x": _floats((1, 3, 4, 5), 15), "pads": np.asarray([1, 2, 0, 1], np.int64),
            "value": np.asarray(0.0, np.float32), "axes": np.asarray([2, -1], np.int64)}
    _bound(tmp_path, _case("pad_axes", "Pad", pads), target)


def test_pooling_an_integer_map_is_a_stub_not_a_crash(tmp_path):
    case = _case("pool_u8", "MaxPool", {"x": _ints("uint8", (1, 1, 4, 4), 0, 200)}, {"kernel_shape": [2, 2]})
    for target in TARGETS:
        ok, why = run_case(case, target, str(tmp_path))
        assert not ok and why.startswith("stub") and "uint8" in why, why


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", ["ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_composite_reductions_over_a_feature_map(tmp_path, target, op, keepdims):
    x = np.abs(_floats((2, 3, 4, 5), 16)) + 0.1 if op == "ReduceLogSum" else _floats((2, 3, 4, 5), 16) * 4
    inputs = {"x": x, "axes": np.asarray([1, -1], np.int64)}  # the channel axis and a spatial one
    _bound(tmp_path, _case(op.lower(), op, inputs, {"keepdims": keepdims}, opset=18), target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op, attrs", [("ThresholdedRelu", {"alpha": 0.5}), ("Shrink", {"lambd": 0.7, "bias": 0.2}),
                                       ("Celu", {"alpha": 2.0}), ("Mish", {}), ("IsNaN", {})])
def test_composite_activations(tmp_path, target, op, attrs):
    x = _floats((3, 4, 5), 17) * 2
    x[0, 0, :3] = (0.5, -0.7, 0.7)  # (on the thresholds)
    if op == "IsNaN":
        x[1, 2, 3] = np.nan
    _bound(tmp_path, _case(op.lower(), op, {"x": x}, attrs), target)


@pytest.mark.parametrize("target", TARGETS)
def test_instance_normalization_per_channel(tmp_path, target):
    inputs = {"x": _floats((2, 3, 4, 5), 18) * 3 + 1, "s": _floats((3,), 19), "b": _floats((3,), 20)}
    _bound(tmp_path, _case("inorm", "InstanceNormalization", inputs, {"epsilon": 1e-3}), target)
