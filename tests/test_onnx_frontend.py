"""The ONNX frontend: small ONNX models built here with onnx.helper, translated to PyTorch
and to Keras source with their weights, run, and compared with onnxruntime."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_harness import compare  # noqa: E402
from transpiler.translate_onnx import translate_onnx  # noqa: E402

TARGETS = ("pytorch", "keras")


def _f(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)


def _save(tmp_path, name, nodes, inputs, outputs, inits, opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)
    onnx.checker.check_model(model)
    path = str(tmp_path / f"{name}.onnx")
    onnx.save(model, path)
    return path


def _io(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def conv_net(tmp_path, opset=13):
    """Conv+bias, BatchNorm, Relu, MaxPool, Flatten, Gemm(transB): the Keras Dense must
    absorb the channels-first Flatten order."""
    rng = np.random.default_rng(1)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c1", "g", "be", "m", "v"], ["bn"], name="bn1", epsilon=1e-3),
             helper.make_node("Relu", ["bn"], ["r"], name="relu1"),
             helper.make_node("MaxPool", ["r"], ["p"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p", "w2"], ["c2"], name="conv2", kernel_shape=[3, 3], strides=[2, 2],
                              auto_pad="SAME_UPPER", group=2),
             helper.make_node("Flatten", ["c2"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], name="fc", transB=1, alpha=0.5, beta=2.0)]
    inits = [_f("w1", rng.normal(size=(8, 3, 3, 3))), _f("b1", rng.normal(size=8)),
             _f("g", rng.uniform(.5, 1.5, 8)), _f("be", rng.normal(size=8)), _f("m", rng.normal(size=8)),
             _f("v", rng.uniform(.5, 2, 8)), _f("w2", rng.normal(size=(6, 4, 3, 3)) * .3),
             _f("w3", rng.normal(size=(10, 6 * 2 * 2)) * .2), _f("b3", rng.normal(size=10))]
    return _save(tmp_path, "conv_net", nodes, [_io("x", [1, 3, 8, 8])], [_io("y", [1, 10])], inits, opset)


def mlp(tmp_path):
    """MatMul + Add (one Dense each), Relu, Sigmoid, Softmax over the last axis."""
    rng = np.random.default_rng(2)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="/encoder/fc1/MatMul"),
             helper.make_node("Add", ["h", "b1"], ["hb"], name="/encoder/fc1/Add"),
             helper.make_node("Relu", ["hb"], ["r"], name="/encoder/act/Relu"),
             helper.make_node("MatMul", ["r", "w2"], ["o"], name="/head/MatMul"),
             helper.make_node("Add", ["b2", "o"], ["ob"], name="/head/Add"),
             helper.make_node("Mul", ["ob", "half"], ["s"], name="/scale/Mul"),
             helper.make_node("Softmax", ["s"], ["y"], name="/softmax/Softmax", axis=-1)]
    inits = [_f("w1", rng.normal(size=(12, 16)) * .3), _f("b1", rng.normal(size=16)),
             _f("w2", rng.normal(size=(16, 5)) * .3), _f("b2", rng.normal(size=5)), _f("half", [0.5])]
    return _save(tmp_path, "mlp", nodes, [_io("x", [4, 12])], [_io("y", [4, 5])], inits)


def constant_weights_net(tmp_path):
    """Weights made by ConstantOfShape (Caffe2's light models), a BatchNorm followed by a
    per-channel Mul and Add of Unsqueezed constants (DenseNet's scale layer), a Conv without
    bias followed by a per-channel Add, LRN, a MaxPool padded at the end (Caffe's ceil
    rounding), Concat, Sum and an AveragePool over the whole map."""
    rng = np.random.default_rng(3)

    def const_of_shape(name, shape, value):
        return [helper.make_node("ConstantOfShape", [f"{name}__SHAPE"], [name],
                                 value=helper.make_tensor("v", TensorProto.FLOAT, [1], [value]))], \
            numpy_helper.from_array(np.asarray(shape, np.int64), f"{name}__SHAPE")

    nodes, inits = [], []
    for name, shape, value in (("w1", (8, 3, 3, 3), 0.05), ("s", (8,), 1.5), ("sb", (8,), 0.2)):
        n, i = const_of_shape(name, shape, value)
        nodes += n
        inits.append(i)
    inits += [_f("g", rng.uniform(.5, 1.5, 8)), _f("be", rng.normal(size=8)), _f("m", rng.normal(size=8)),
              _f("v", rng.uniform(.5, 2, 8)), _f("w2", rng.normal(size=(8, 8, 1, 1)) * .3),
              _f("cb", rng.normal(size=(1, 8, 1, 1))), _f("w3", rng.normal(size=(8, 8, 3, 3)) * .2)]
    nodes += [helper.make_node("Conv", ["x", "w1"], ["c1"], name="n1", kernel_shape=[3, 3]),
              helper.make_node("BatchNormalization", ["c1", "g", "be", "m", "v"], ["bn"], name="n2"),
              helper.make_node("Unsqueeze", ["s"], ["s3"], name="n3", axes=[1, 2]),
              helper.make_node("Mul", ["bn", "s3"], ["bs"], name="n4"),
              helper.make_node("Unsqueeze", ["sb"], ["sb3"], name="n5", axes=[1, 2]),
              helper.make_node("Add", ["bs", "sb3"], ["ba"], name="n6"),
              helper.make_node("Relu", ["ba"], ["r1"], name="n7"),
              helper.make_node("LRN", ["r1"], ["l"], name="n8", size=5, alpha=1e-2, beta=0.75, bias=1.0),
              helper.make_node("MaxPool", ["l"], ["p"], name="n9", kernel_shape=[3, 3], strides=[2, 2],
                               pads=[0, 0, 1, 1]),
              helper.make_node("Conv", ["p", "w2"], ["c2"], name="n10", kernel_shape=[1, 1]),
              helper.make_node("Add", ["c2", "cb"], ["c2b"], name="n11"),
              helper.make_node("Conv", ["p", "w3"], ["c3"], name="n12", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
              helper.make_node("Sum", ["c2b", "c3", "p"], ["sum"], name="n13"),
              helper.make_node("Concat", ["sum", "p"], ["cat"], name="n14", axis=1),
              helper.make_node("AveragePool", ["cat"], ["gap"], name="n15", kernel_shape=[4, 4],
                               pads=[0, 0, 1, 1]),
              helper.make_node("Reshape", ["gap", "shape"], ["y"], name="n16")]
    inits.append(numpy_helper.from_array(np.asarray([1, 16], np.int64), "shape"))
    return _save(tmp_path, "const_net", nodes, [_io("x", [1, 3, 9, 9])], [_io("y", [1, 16])], inits, opset=9)


def pool_net(tmp_path):
    """Average pooling with explicit padding left out of the mean (Keras: a ratio of two
    zero-padded means) and counted in it, max pooling with symmetric padding after a Relu,
    ShuffleNet's channel shuffle (Reshape, Transpose, Reshape), global pooling."""
    rng = np.random.default_rng(4)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("AveragePool", ["c1"], ["a1"], name="avg_excluded", kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("AveragePool", ["c1"], ["a2"], name="avg_counted", kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
             helper.make_node("Relu", ["c1"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["m"], name="max", kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["a1", "a2", "m"], ["cat"], name="cat", axis=1),
             helper.make_node("Reshape", ["cat", "split_shape"], ["g"], name="shuffle_split"),
             helper.make_node("Transpose", ["g"], ["gt"], name="shuffle", perm=[0, 2, 1, 3, 4]),
             helper.make_node("Reshape", ["gt", "join_shape"], ["sh"], name="shuffle_join"),
             helper.make_node("Conv", ["sh", "w2", "b2"], ["c2"], name="head", kernel_shape=[1, 1]),
             helper.make_node("GlobalAveragePool", ["c2"], ["gp"], name="gap"),
             helper.make_node("Flatten", ["gp"], ["y"], name="flat")]
    inits = [_f("w1", rng.normal(size=(4, 3, 3, 3)) * .3), _f("w2", rng.normal(size=(5, 12, 1, 1)) * .3),
             _f("b2", rng.normal(size=5)),
             numpy_helper.from_array(np.asarray([1, 3, 4, 4, 4], np.int64), "split_shape"),
             numpy_helper.from_array(np.asarray([1, 12, 4, 4], np.int64), "join_shape")]
    return _save(tmp_path, "pool_net", nodes, [_io("x", [1, 3, 8, 8])], [_io("y", [1, 5])], inits)


def dynamic_batch_net(tmp_path):
    """A run-time batch size (dim_param) and torch.onnx's ``x.view(x.size(0), -1)``: Shape,
    Gather, Unsqueeze, Concat, Reshape; the per-channel bias is a separate Add."""
    rng = np.random.default_rng(5)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], name="/features/features.0/Conv", kernel_shape=[3, 3]),
             helper.make_node("Add", ["c", "cb"], ["cbias"], name="/features/features.0/Add"),
             helper.make_node("Sigmoid", ["cbias"], ["s"], name="/features/features.1/Sigmoid"),
             helper.make_node("Shape", ["s"], ["shape"], name="/Shape"),
             helper.make_node("Gather", ["shape", "zero"], ["n"], name="/Gather", axis=0),
             helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="/Unsqueeze"),
             helper.make_node("Concat", ["n1", "minus_one"], ["target"], name="/Concat", axis=0),
             helper.make_node("Reshape", ["s", "target"], ["f"], name="/Reshape"),
             helper.make_node("Gemm", ["f", "w2", "b2"], ["y"], name="/classifier/Gemm", transB=1)]
    inits = [_f("w1", rng.normal(size=(4, 2, 3, 3)) * .4), _f("cb", rng.normal(size=(4, 1, 1))),
             _f("w2", rng.normal(size=(3, 4 * 4 * 4)) * .3), _f("b2", rng.normal(size=3)),
             numpy_helper.from_array(np.asarray(0, np.int64), "zero"),
             numpy_helper.from_array(np.asarray([0], np.int64), "axes0"),
             numpy_helper.from_array(np.asarray([-1], np.int64), "minus_one")]
    return _save(tmp_path, "dynamic_net", nodes, [_io("x", ["N", 2, 6, 6])], [_io("y", ["N", 3])], inits)


def tensor_ops_net(tmp_path):
    """Slice, Gather, Split, Cast, Resize (nearest, x2), Upsample (opset 9 form not here)."""
    rng = np.random.default_rng(6)
    i64 = lambda name, v: numpy_helper.from_array(np.asarray(v, np.int64), name)  # noqa: E731
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Split", ["c", "halves"], ["a", "b"], name="split", axis=1),
             helper.make_node("Slice", ["a", "st", "en", "ax", "sp"], ["s"], name="crop"),
             helper.make_node("Resize", ["s", "", "scales"], ["u"], name="up", mode="nearest"),
             helper.make_node("Cast", ["u"], ["uc"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Add", ["uc", "b"], ["sum"], name="add"),
             helper.make_node("Gather", ["sum", "idx"], ["g"], name="pick", axis=1),
             helper.make_node("Flatten", ["g"], ["y"], name="flat")]
    inits = [_f("w1", rng.normal(size=(6, 2, 3, 3)) * .4), _f("b1", rng.normal(size=6)),
             i64("halves", [3, 3]), i64("st", [0, 0]), i64("en", [4, 4]), i64("ax", [2, 3]), i64("sp", [1, 1]),
             _f("scales", [1, 1, 2, 2]), i64("idx", [2, 0])]
    return _save(tmp_path, "tensor_ops", nodes, [_io("x", [1, 2, 8, 8])], [_io("y", [1, 128])], inits)


def lstm_net(tmp_path):
    """torch.onnx's batch_first LSTM: Transpose(1, 0, 2), LSTM (ONNX gate order i, o, f, c,
    two biases), Y through Squeeze(1) + Transpose(1, 0, 2), Y_h through Squeeze(0)."""
    rng = np.random.default_rng(7)
    i64 = lambda name, v: numpy_helper.from_array(np.asarray(v, np.int64), name)  # noqa: E731
    h = 4
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], name="/rnn/Transpose", perm=[1, 0, 2]),
             helper.make_node("LSTM", ["xt", "W", "R", "B"], ["Y", "Y_h", "Y_c"], name="/rnn/LSTM", hidden_size=h),
             helper.make_node("Squeeze", ["Y", "one"], ["ys"], name="/rnn/Squeeze"),
             helper.make_node("Transpose", ["ys"], ["seq"], name="/rnn/Transpose_1", perm=[1, 0, 2]),
             helper.make_node("Squeeze", ["Y_h", "zero"], ["last"], name="/rnn/Squeeze_1"),
             helper.make_node("Flatten", ["seq"], ["flat"], name="/flatten/Flatten"),
             helper.make_node("Concat", ["flat", "last"], ["both"], name="/cat/Concat", axis=1),
             helper.make_node("Gemm", ["both", "w2", "b2"], ["y"], name="/head/Gemm", transB=1)]
    inits = [_f("W", rng.normal(size=(1, 4 * h, 3)) * .5), _f("R", rng.normal(size=(1, 4 * h, h)) * .5),
             _f("B", rng.normal(size=(1, 8 * h)) * .3), _f("w2", rng.normal(size=(2, 5 * h + h)) * .3),
             _f("b2", rng.normal(size=2)), i64("one", [1]), i64("zero", [0])]
    return _save(tmp_path, "lstm_net", nodes, [_io("x", ["N", 5, 3])], [_io("y", ["N", 2])], inits, opset=13)


def gru_net(tmp_path):
    """A GRU with torch's linear_before_reset=1 whose last state alone is read (onnxruntime
    runs no batch-first layout=1)."""
    rng = np.random.default_rng(8)
    i64 = lambda name, v: numpy_helper.from_array(np.asarray(v, np.int64), name)  # noqa: E731
    h = 5
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], name="/gru/Transpose", perm=[1, 0, 2]),
             helper.make_node("GRU", ["xt", "W", "R", "B"], ["", "Y_h"], name="/gru/GRU", hidden_size=h,
                              linear_before_reset=1),
             helper.make_node("Squeeze", ["Y_h", "zero"], ["last"], name="/gru/Squeeze"),
             helper.make_node("Gemm", ["last", "w2", "b2"], ["y"], name="/head/Gemm", transB=1)]
    inits = [_f("W", rng.normal(size=(1, 3 * h, 3)) * .5), _f("R", rng.normal(size=(1, 3 * h, h)) * .5),
             _f("B", rng.normal(size=(1, 6 * h)) * .3), _f("w2", rng.normal(size=(2, h)) * .3),
             _f("b2", rng.normal(size=2)), i64("zero", [0])]
    return _save(tmp_path, "gru_net", nodes, [_io("x", ["N", 6, 3])], [_io("y", ["N", 2])], inits, opset=14)


def activations_net(tmp_path):
    """Activation converters, per-channel Sub/Div constants, Clip as ReLU6, Max of two tensors,
    a spatial Pad, ReduceMean, Unsqueeze/Squeeze, Softmax over the channel axis (opset 13)."""
    rng = np.random.default_rng(9)
    i64 = lambda name, v: numpy_helper.from_array(np.asarray(v, np.int64), name)  # noqa: E731
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c"], name="conv", kernel_shape=[1, 1]),
             helper.make_node("Sub", ["c", "mean"], ["centred"], name="centre"),
             helper.make_node("Div", ["centred", "std"], ["z"], name="scale"),
             helper.make_node("LeakyRelu", ["z"], ["a1"], name="leaky", alpha=0.2),
             helper.make_node("Elu", ["z"], ["a2"], name="elu", alpha=0.7),
             helper.make_node("Selu", ["z"], ["a3"], name="selu"),
             helper.make_node("HardSigmoid", ["z"], ["a4"], name="hsig"),
             helper.make_node("HardSwish", ["z"], ["a5"], name="hswish"),
             helper.make_node("Clip", ["z", "lo", "hi"], ["a6"], name="relu6"),
             helper.make_node("Max", ["a1", "a2"], ["m1"], name="max"),
             helper.make_node("Sum", ["m1", "a3", "a4", "a5", "a6"], ["s"], name="sum"),
             helper.make_node("Pad", ["s", "pads"], ["p"], name="pad"),
             helper.make_node("Softmax", ["p"], ["sm"], name="softmax", axis=1),
             helper.make_node("ReduceMean", ["sm"], ["r"], name="mean_hw", axes=[2, 3], keepdims=1),
             helper.make_node("Squeeze", ["r", "hw"], ["sq"], name="squeeze"),
             helper.make_node("Unsqueeze", ["sq", "last"], ["un"], name="unsqueeze"),
             helper.make_node("Flatten", ["un"], ["y"], name="flat")]
    inits = [_f("w1", rng.normal(size=(4, 3, 1, 1))), _f("b1", rng.normal(size=4)),
             _f("mean", rng.normal(size=(4, 1, 1))), _f("std", rng.uniform(.5, 2, size=(1, 4, 1, 1))),
             _f("lo", 0.0), _f("hi", 6.0), i64("pads", [0, 0, 1, 2, 0, 0, 2, 1]), i64("hw", [2, 3]),
             i64("last", [2])]
    return _save(tmp_path, "activations", nodes, [_io("x", [1, 3, 5, 5])], [_io("y", [1, 4])], inits, opset=17)


def bilstm_net(tmp_path):
    """torch.onnx's bidirectional batch_first LSTM: Y (T, 2, N, H) through Transpose(0, 2, 1, 3),
    Reshape(0, 0, -1) and Transpose(1, 0, 2): the two directions' features side by side."""
    rng = np.random.default_rng(10)
    i64 = lambda name, v: numpy_helper.from_array(np.asarray(v, np.int64), name)  # noqa: E731
    h = 3
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], name="/rnn/Transpose", perm=[1, 0, 2]),
             helper.make_node("LSTM", ["xt", "W", "R", "B"], ["Y"], name="/rnn/LSTM", hidden_size=h,
                              direction="bidirectional"),
             helper.make_node("Transpose", ["Y"], ["yt"], name="/rnn/Transpose_1", perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["yt", "shape"], ["yr"], name="/rnn/Reshape"),
             helper.make_node("Transpose", ["yr"], ["seq"], name="/rnn/Transpose_2", perm=[1, 0, 2]),
             helper.make_node("Flatten", ["seq"], ["flat"], name="/flatten/Flatten"),
             helper.make_node("Gemm", ["flat", "w2", "b2"], ["y"], name="/head/Gemm", transB=1)]
    inits = [_f("W", rng.normal(size=(2, 4 * h, 2)) * .5), _f("R", rng.normal(size=(2, 4 * h, h)) * .5),
             _f("B", rng.normal(size=(2, 8 * h)) * .3), _f("w2", rng.normal(size=(2, 4 * 2 * h)) * .3),
             _f("b2", rng.normal(size=2)), i64("shape", [0, 0, -1])]
    return _save(tmp_path, "bilstm_net", nodes, [_io("x", ["N", 4, 2])], [_io("y", ["N", 2])], inits, opset=13)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("build", [conv_net, mlp, constant_weights_net, pool_net, dynamic_batch_net,
                                   tensor_ops_net, lstm_net, gru_net, activations_net, bilstm_net],
                         ids=lambda f: f.__name__)
def test_onnx_model_matches_onnxruntime(tmp_path, build, target):
    path = build(tmp_path)
    result = compare(path, target, seed=0)
    assert not result.stubs, result.stubs
    assert result.max_abs is not None and result.max_abs <= 1e-4 * max(1.0, result.scale), result.text
    assert result.top1 is not False


def test_conv_net_at_opset_9_matches_onnxruntime(tmp_path):
    result = compare(conv_net(tmp_path, opset=9), "pytorch")
    assert result.ok, (result.max_abs, result.stubs)


def test_onnx_output_reads_like_hand_written_torch(tmp_path):
    text = translate_onnx(conv_net(tmp_path), "pytorch").text
    assert "class ConvNet(nn.Module):" in text
    assert "self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)" in text
    assert "self.bn1 = nn.BatchNorm2d(8, eps=0.001" in text
    assert "def build_model():" in text and "reset_parameters" not in text
    assert "import onnx" not in text and "onnxruntime" not in text  # no graph interpreter


def test_onnx_names_from_node_paths(tmp_path):
    text = translate_onnx(mlp(tmp_path), "pytorch").text
    assert "self.encoder_fc1 = nn.Linear(12, 16)" in text
    assert "self.head = nn.Linear(16, 5)" in text


def test_constant_folded_affine_joins_the_batch_norm(tmp_path):
    from transpiler.frontend_onnx import read_onnx

    graph = read_onnx(constant_weights_net(tmp_path)).models[0].graph
    ops = [n.op for n in graph.nodes]
    assert ops.count("batch_norm") == 1  # BN, Mul and Add are one layer
    conv = next(n for n in graph.nodes if n.from_onnx.name == "n10")
    assert conv.attrs["use_bias"]  # the per-channel Add became its bias


def test_keras_output_is_channels_last_without_runtime_transposes(tmp_path):
    text = translate_onnx(conv_net(tmp_path), "keras").text
    assert "keras.Input(shape=(8, 8, 3)" in text
    assert "Permute" not in text and "transpose" not in text


def test_unsupported_onnx_op_is_a_reported_stub(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Hardmax", ["r"], ["y"], name="pick")]
    path = _save(tmp_path, "stubbed", nodes, [_io("x", [1, 4])], [_io("y", [1, 4])], [])
    for target in TARGETS:
        result = translate_onnx(path, target)
        assert [d for d in result.stubs if "Hardmax" in d.message], result.diagnostics
        assert "raise NotImplementedError" in result.text and "Hardmax" in result.text
        namespace: dict = {}
        exec(compile(result.text, "out.py", "exec"), namespace)
        with pytest.raises(NotImplementedError, match="Hardmax"):
            namespace["build_model"]()


def test_onnx_translation_imports_no_framework(tmp_path):
    path = conv_net(tmp_path)
    code = ("import sys\nfrom transpiler.translate_onnx import translate_onnx\n"
            f"translate_onnx({path!r}, 'pytorch', {str(tmp_path / 'w.safetensors')!r})\n"
            f"translate_onnx({path!r}, 'keras', {str(tmp_path / 'w.weights.h5')!r})\n"
            "bad = [m for m in ('torch', 'tensorflow', 'keras', 'onnxruntime') if m in sys.modules]\n"
            "assert not bad, bad\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_python_translation_does_not_import_onnx():
    code = ("import sys\nfrom transpiler.translate import translate\n"
            "translate('import keras\\nfrom keras import layers\\n"
            "model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(2)])\\n')\n"
            "assert 'onnx' not in sys.modules\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_run_time_batch_shape_arithmetic_is_folded_to_a_flatten(tmp_path):
    from transpiler.frontend_onnx import read_onnx

    program = read_onnx(dynamic_batch_net(tmp_path))
    graph = program.models[0].graph
    assert not program.diagnostics
    assert graph.inputs[0].shape == (None, 2, 6, 6)
    assert [n.op for n in graph.nodes] == ["conv2d", "sigmoid", "flatten", "dense"]
    assert graph.nodes[0].name == "features_0" and graph.nodes[-1].name == "classifier"


def test_onnx_support_doc_matches_the_registry():
    from transpiler.frontend_onnx.support_doc import render_support_table

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "docs", "onnx.md"), encoding="utf-8") as fh:
        assert render_support_table() in fh.read(), \
            "update the table in docs/onnx.md: python -m transpiler.frontend_onnx.support_doc"


def test_every_converter_names_ops_of_the_table():
    from transpiler.frontend_onnx import registered_ops
    from transpiler.ir import ops as ops_table

    table = ops_table.all_ops()
    unknown = {k: o for k, v in registered_ops().items() for o in v if o not in table}
    assert not unknown


def test_lrn_window_kernel_is_not_trained(tmp_path):
    path = constant_weights_net(tmp_path)
    torch_text = translate_onnx(path, "pytorch").text
    assert "_window.requires_grad_(False)" in torch_text
    keras_text = translate_onnx(path, "keras").text
    assert "trainable=False" in keras_text


def test_shape_disagreement_with_onnx_is_a_stub_not_a_different_model(tmp_path):
    """ONNX drops a ceil_mode window that starts in the right padding; the ops table's rule
    keeps it: the translation must refuse rather than print a model of another shape."""
    nodes = [helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1], ceil_mode=1)]
    path = _save(tmp_path, "ceil_pool", nodes, [_io("x", [1, 3, 2, 2])], [_io("y", [1, 3, 1, 1])], [], opset=19)
    result = translate_onnx(path, "pytorch")
    assert [d for d in result.stubs if "ONNX's is (1, 3, 1, 1)" in d.message], result.diagnostics


def test_pool_padding_wider_than_half_the_window_runs_in_torch(tmp_path):
    """torch's pooling refuses pads > kernel // 2: the padding is explicit instead."""
    nodes = [helper.make_node("AveragePool", ["x"], ["a"], name="avg", kernel_shape=[3, 3], pads=[2, 2, 2, 2]),
             helper.make_node("MaxPool", ["x"], ["m"], name="max", kernel_shape=[3, 3], pads=[2, 2, 2, 2]),
             helper.make_node("Add", ["a", "m"], ["y"], name="add")]
    path = _save(tmp_path, "wide_pool", nodes, [_io("x", [1, 2, 5, 5])], [_io("y", [1, 2, 7, 7])], [])
    result = compare(path, "pytorch")
    assert result.ok, (result.max_abs, result.stubs)
    # Keras pads a max pooling with zeros only: on an input that may be negative, a reported stub
    assert [d for d in translate_onnx(path, "keras").stubs if "max_pool2d" in d.message]


@pytest.mark.parametrize("target", TARGETS)
def test_uneven_average_pool_padding_left_out_of_the_mean(tmp_path, target):
    nodes = [helper.make_node("AveragePool", ["x"], ["y"], name="uneven", kernel_shape=[2, 2], pads=[0, 1, 1, 0])]
    path = _save(tmp_path, "uneven_pool", nodes, [_io("x", [1, 2, 5, 5])], [_io("y", [1, 2, 5, 5])], [])
    result = compare(path, target)
    assert result.ok, (result.max_abs, result.stubs)


def test_keras_output_imports_only_what_it_uses(tmp_path):
    text = translate_onnx(constant_weights_net(tmp_path), "keras").text
    assert "keras.ops.square" in text and "from keras import ops" not in text
