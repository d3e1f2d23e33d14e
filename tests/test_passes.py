"""Passes: shape inference, layout amendment, transpose folding, torch selection."""

from __future__ import annotations

import glob
import os

import pytest

from transpiler.frontend_ast.keras.frontend import read_keras
from transpiler.ir import ops as ops_table
from transpiler.ir.layout import is_channels_last
from transpiler.ir.passes import TORCH_PIPELINE

ROOT = os.path.dirname(os.path.dirname(__file__))
CORPUS = sorted(p for p in glob.glob(os.path.join(ROOT, "corpus", "keras", "*.py"))
                if not p.endswith("_torch.py"))  # outputs a user may have written beside them

HEADER = "import keras\nfrom keras import layers\n\n\ndef build_model():\n"


def graph_of(body: str):
    program = read_keras(HEADER + body, "case.py")
    return program.models[0].graph


def run_all(graph):
    for _name, fn in TORCH_PIPELINE:
        graph = fn(graph)
        graph.lint()
    return graph


def ops(graph):
    return [n.op for n in graph.nodes]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: os.path.basename(p)[:-3])
def test_every_pass_keeps_the_graph_valid_and_shapes_static(path):
    with open(path, encoding="utf-8") as fh:
        program = read_keras(fh.read(), path)
    for md in program.models:
        graph = md.graph
        graph.lint()
        for _name, fn in TORCH_PIPELINE:
            graph = fn(graph)
            graph.lint()
        # a script that declares a variable-length axis (Input(shape=(None,)), a model built
        # from its first use on a sequence) keeps that axis unsized; any other size is static
        variable = any(d is None for v in graph.inputs for d in v.shape[1:])
        for node in graph.nodes:
            for v in node.inputs + node.outputs:
                assert v.shape is not None and (variable or all(s is not None for s in v.shape[1:])), \
                    (node, v.shape)
            if node.spec.layout == ops_table.IMPLICIT and not node.spec.any_layout:
                assert not any(is_channels_last(v.layout) for v in node.inputs), node


def test_global_pooling_reads_a_channels_last_sequence_as_it_is():
    """GlobalAveragePooling1D after attention/LayerNorm (channels-last): a mean over the
    steps, no permute to channels-first and back."""
    g = run_all(graph_of(
        "    inputs = keras.Input(shape=(7, 6))\n"
        "    x = layers.LayerNormalization()(inputs)\n"
        "    x = layers.GlobalAveragePooling1D()(x)\n"
        "    return keras.Model(inputs, layers.Dense(2)(x))\n"))
    assert "transpose" not in ops(g)


def test_flatten_to_dense_permutes_the_dense_kernel_not_the_tensor():
    g = run_all(graph_of(
        "    x = keras.Input(shape=(6, 6, 3))\n"
        "    y = layers.Conv2D(4, 3)(x)\n"
        "    y = layers.Flatten()(y)\n"
        "    y = layers.Dropout(0.5)(y)\n"
        "    return keras.Model(x, layers.Dense(2)(y))\n"))
    assert "transpose" not in ops(g)
    dense = next(n for n in g.nodes if n.op == "dense")
    assert dense.param_transforms["kernel"][0][0] == "permute_rows"
    assert g.inputs[0].layout == "NCHW"


def test_flatten_as_model_output_keeps_the_source_order():
    g = run_all(graph_of(
        "    x = keras.Input(shape=(6, 6, 3))\n"
        "    y = layers.Conv2D(4, 3)(x)\n"
        "    return keras.Model(x, layers.Flatten()(y))\n"))
    assert ops(g) == ["conv2d", "transpose", "flatten"]


def test_axis_attributes_are_rewritten():
    g = run_all(graph_of(
        "    x = keras.Input(shape=(8, 8, 3))\n"
        "    a = layers.Conv2D(4, 3, padding='same')(x)\n"
        "    b = layers.Conv2D(5, 3, padding='same')(x)\n"
        "    y = layers.Concatenate(axis=-1)([a, b])\n"
        "    y = layers.BatchNormalization()(y)\n"
        "    y = layers.Softmax(axis=-1)(y)\n"
        "    return keras.Model(x, y)\n"))
    by_op = {n.op: n for n in g.nodes}
    assert by_op["concat"].attrs["axis"] == 1
    assert by_op["batch_norm"].attrs["axis"] == 1
    assert by_op["softmax"].attrs["axis"] == 1
    assert "transpose" not in ops(g)


def test_two_d_axes_stay():
    g = run_all(graph_of(
        "    x = keras.Input(shape=(8,))\n"
        "    y = layers.Concatenate()([layers.Dense(3)(x), layers.Dense(2)(x)])\n"
        "    return keras.Model(x, layers.Softmax()(y))\n"))
    assert next(n for n in g.nodes if n.op == "concat").attrs["axis"] in (-1, 1)


def test_embedding_then_conv1d_needs_exactly_one_transpose():
    g = run_all(graph_of(
        "    x = keras.Input(shape=(10,), dtype='int32')\n"
        "    y = layers.Embedding(50, 8)(x)\n"
        "    y = layers.Conv1D(4, 3)(y)\n"
        "    return keras.Model(x, layers.GlobalMaxPooling1D()(y))\n"))
    assert ops(g).count("transpose") == 1


def test_dense_then_reshape_to_a_feature_map_permutes_dense_columns():
    g = run_all(graph_of(
        "    x = keras.Input(shape=(4,))\n"
        "    y = layers.Dense(2 * 3 * 5, activation='relu')(x)\n"
        "    y = layers.Reshape((2, 3, 5))(y)\n"
        "    return keras.Model(x, layers.Conv2D(2, 1)(y))\n"))
    assert "transpose" not in ops(g)
    dense = next(n for n in g.nodes if n.op == "dense")
    assert dense.param_transforms["kernel"][0][0] == "permute_cols"
    assert next(n for n in g.nodes if n.op == "reshape").attrs["shape"] == (5, 2, 3)


def test_permute_between_layout_transposes_folds_into_one():
    g = run_all(graph_of(
        "    x = keras.Input(shape=(6, 7, 3))\n"
        "    y = layers.Conv2D(4, 1)(x)\n"
        "    y = layers.Permute((2, 1, 3))(y)\n"
        "    return keras.Model(x, layers.Conv2D(2, 1)(y))\n"))
    transposes = [n for n in g.nodes if n.op == "transpose"]
    assert len(transposes) == 1 and transposes[0].attrs["perm"] == (0, 1, 3, 2)


@pytest.mark.parametrize("size, expect_pad", [(7, False), (8, True), (13, False), (16, True)])
def test_stride2_same_conv_padding_depends_on_input_size(size, expect_pad):
    g = run_all(graph_of(
        f"    x = keras.Input(shape=({size}, {size}, 3))\n"
        "    return keras.Model(x, layers.Conv2D(4, 3, strides=2, padding='same')(x))\n"))
    conv = next(n for n in g.nodes if n.op == "conv2d")
    assert ("pad2d" in ops(g)) == expect_pad
    if not expect_pad:
        assert conv.attrs["padding"] == ((1, 1), (1, 1))
    assert conv.outputs[0].shape[2] == -(-size // 2)


def test_stride1_same_even_kernel_keeps_torch_same():
    g = run_all(graph_of(
        "    x = keras.Input(shape=(8, 8, 3))\n"
        "    return keras.Model(x, layers.Conv2D(4, 2, padding='same')(x))\n"))
    assert next(n for n in g.nodes if n.op == "conv2d").attrs["padding"] == "same"


def test_separable_conv_is_decomposed_for_torch():
    g = run_all(graph_of(
        "    x = keras.Input(shape=(8, 8, 3))\n"
        "    return keras.Model(x, layers.SeparableConv2D(4, 3)(x))\n"))
    assert ops(g) == ["depthwise_conv2d", "conv2d"]
    assert g.nodes[0].split_from.params == {"kernel": "depthwise_kernel"}
