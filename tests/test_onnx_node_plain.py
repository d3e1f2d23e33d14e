"""ONNX graphs whose first axis is not a batch (ONNX's node tests: rank-0/1 inputs, broadcast
operands of other first sizes, ops over axis 0): the reader reads them without a batch axis
(``no_batch``: every size static, no layouts) and both printers emit plain tensor code. Each
case runs against ``onnx.reference`` (tests/test_onnx_node_ops.py's ``_case``)."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import helper, numpy_helper  # noqa: E402

from test_onnx_node_ops import TARGETS, _case, _floats, _ints  # noqa: E402
from onnx_node_suite import run_case  # noqa: E402
from transpiler.frontend_onnx import read_onnx  # noqa: E402
from transpiler.translate_onnx import translate_onnx  # noqa: E402


def _passes(tmp_path, case, target):
    ok, why = run_case(case, target, str(tmp_path))
    assert ok, why


PLAIN_CASES = {
    "reduce_every_axis": lambda: _case("r", "ReduceSum", {"x": _floats((3, 2, 2))}, {"keepdims": 1}),
    "reduce_max_axis0": lambda: _case("r", "ReduceMax", {"x": _floats((3, 4))}, {"axes": [0], "keepdims": 0}, opset=13),
    "broadcast_other_first_sizes": lambda: _case("b", "Add", {"x": _floats((3, 4, 5)), "y": _floats((5,), 1)}),
    "scalar_operand": lambda: _case("p", "Pow", {"x": np.abs(_floats((3,))) + 1, "y": np.array(2.0, np.float32)}),
    "transpose_moves_axis0": lambda: _case("t", "Transpose", {"x": _floats((2, 3, 4))}, {"perm": [2, 0, 1]}),
    "concat_axis0": lambda: _case("c", "Concat", {"x": _floats((2, 3)), "y": _floats((4, 3), 1)}, {"axis": 0}),
    "softmax_axis0": lambda: _case("s", "Softmax", {"x": _floats((3, 4))}, {"axis": 0}),
    "argmax_axis0": lambda: _case("a", "ArgMax", {"x": _floats((3, 4))}, {"axis": 0, "keepdims": 1}),
    "squeeze_axis0": lambda: _case("q", "Squeeze", {"x": _floats((1, 3, 4))}, {"axes": [0]}, opset=11),
    "unsqueeze_axis0": lambda: _case("u", "Unsqueeze", {"x": _floats((3, 4))}, {"axes": [0]}, opset=11),
    "flatten_axis0": lambda: _case("f", "Flatten", {"x": _floats((2, 3, 4))}, {"axis": 0}),
    "flatten_axis2": lambda: _case("f", "Flatten", {"x": _floats((2, 3, 4))}, {"axis": 2}),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", sorted(PLAIN_CASES))
def test_graph_without_a_batch_axis_runs_and_matches(tmp_path, target, kind):
    _passes(tmp_path, PLAIN_CASES[kind](), target)


@pytest.mark.parametrize("target", TARGETS)
def test_split_and_slice_of_axis0(tmp_path, target):
    _passes(tmp_path, _case("s", "Split", {"x": _floats((6, 2))}, {"axis": 0}, n_out=3, opset=13), target)
    sl = _case("sl", "Slice", {"x": _floats((20, 10, 5))}, {"starts": [0, 0], "ends": [3, 10], "axes": [0, 1]},
               opset=9)
    _passes(tmp_path, sl, target)  # (Keras: x[:3, ...], a KerasTensor refuses one bare slice)


@pytest.mark.parametrize("target", TARGETS)
def test_backward_slices_are_static_gathers(tmp_path, target):
    case = _case("b", "Slice", {"x": _floats((20, 10, 5)), "starts": np.array([20, 10, 4], np.int64),
                                "ends": np.array([0, 0, 1], np.int64), "axes": np.array([0, 1, 2], np.int64),
                                "steps": np.array([-1, -3, -2], np.int64)}, opset=13)
    _passes(tmp_path, case, target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(4, 2, 3), (24,), (-1, 2, 3, 4)])
def test_reshape_of_every_axis(tmp_path, target, shape):
    case = _case("r", "Reshape", {"x": _floats((2, 3, 4)), "shape": np.array(shape, np.int64)})
    model = case.model
    model.graph.initializer.append(numpy_helper.from_array(np.array(shape, np.int64), "shape"))
    keep = [i for i in model.graph.input if i.name != "shape"]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    case.data_sets = [([case.data_sets[0][0][0]], case.data_sets[0][1])]
    _passes(tmp_path, case, target)


def test_batch_first_models_keep_their_batch_axis(tmp_path):
    """Only a graph a batch-first reading cannot hold is read without a batch axis: a Conv on
    a feature map keeps a run-time batch (None) and its channels-first layout."""
    w = numpy_helper.from_array(_floats((4, 3, 3, 3)), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 4, 8, 8])], [w])
    path = str(tmp_path / "conv.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    g = read_onnx(path).models[0].graph
    assert not g.origin.no_batch and g.inputs[0].shape == (None, 3, 8, 8) and g.inputs[0].layout == "NCHW"
    plain = PLAIN_CASES["reduce_every_axis"]()
    path = str(tmp_path / "r.onnx")
    onnx.save(plain.model, path)
    g = read_onnx(path).models[0].graph
    assert g.origin.no_batch and g.inputs[0].shape == (3, 2, 2) and g.inputs[0].layout is None


@pytest.mark.parametrize("op", ["Add", "Mul", "Max", "Greater"])
def test_uint32_computes_through_int64_for_torch(tmp_path, op):
    x, y = _ints("uint32", (2, 3), 0, 9), _ints("uint32", (2, 3), 0, 9, 1)
    if op == "Mul":
        x[0, 0], y[0, 0] = np.uint32(2 ** 31), 4  # (wraps around in uint32, as ONNX's reference does)
    _passes(tmp_path, _case(op.lower(), op, {"x": x, "y": y}), "pytorch")


def test_uint64_is_still_a_stub_for_torch(tmp_path):
    case = _case("max_uint64", "Max", {"x": _ints("uint64", (2, 3), 0, 9), "y": _ints("uint64", (2, 3), 0, 9, 1)})
    path = str(tmp_path / "max_uint64.onnx")
    onnx.save(case.model, path)
    result = translate_onnx(path, "pytorch")
    assert [d for d in result.stubs if "uint64" in d.message], result.diagnostics


@pytest.mark.parametrize("target", TARGETS)
def test_zero_size_pieces_and_empty_reductions(tmp_path, target):
    split = _case("z", "Split", {"x": np.zeros((0,), np.float32)}, {"split": [0, 0, 0]}, n_out=3, opset=11)
    _passes(tmp_path, split, target)  # (torch: x.split([0, 0, 0]), not x.split(0): one piece)
    _passes(tmp_path, _case("e", "ReduceSum", {"x": np.zeros((2, 0, 4), np.float32)}, {"keepdims": 1}, opset=11),
            target)
    empty_max = _case("m", "ReduceMax", {"x": np.zeros((2, 0, 4), np.float32)}, {"axes": [1], "keepdims": 1},
                      opset=13)
    path = str(tmp_path / "m.onnx")
    onnx.save(empty_max.model, path)
    result = translate_onnx(path, target)  # (ONNX's -inf identity; torch's amax refuses the empty axis)
    assert [d for d in result.stubs if "size 0" in d.message], result.diagnostics


@pytest.mark.parametrize("target", TARGETS)
def test_dropout_mask_and_gemm_forms(tmp_path, target):
    _passes(tmp_path, _case("d", "Dropout", {"x": _floats((3, 4))}, n_out=2, opset=13), target)
    gemm = _case("g", "Gemm", {"a": _floats((4, 3)), "b": _floats((4, 5), 1), "c": _floats((3, 5), 2)},
                 {"transA": 1, "alpha": 0.5, "beta": 2.0})
    _passes(tmp_path, gemm, target)


def test_feature_map_op_without_a_batch_axis_is_a_stub_not_a_guess(tmp_path):
    """A Conv in a graph read without a batch axis (its inputs' first sizes differ) has no
    layout tag to read its channel axis from: a stub naming it, never a guessed axis."""
    w = numpy_helper.from_array(_floats((4, 3, 3, 3)), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Add", ["c", "y"], ["z"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 8, 8]),
                                           helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [8])],
                              [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [1, 4, 8, 8])], [w])
    path = str(tmp_path / "conv_add.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    for target in TARGETS:
        result = translate_onnx(path, target)
        assert [d for d in result.stubs if "channel axis is unknown" in d.message], result.diagnostics
