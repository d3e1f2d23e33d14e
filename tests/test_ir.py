"""The IR: layouts, the ops table's unified attribute syntax, and Graph.lint()."""

from __future__ import annotations

import numpy as np
import pytest

from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Graph, IRError
from transpiler.ir.layout import Layout, default_layout
from transpiler.ir.shapes import has_rule, infer_node
from transpiler.ir.passes import torch_selection
from transpiler.printers.torch import ops as torch_ops

DECOMPOSED_FOR_TORCH = {"separable_conv2d"}
from transpiler.ir.transforms import Transform
from transpiler.weights.transforms import apply, apply_param_transform, invert


@pytest.mark.parametrize(
    "source, target, perm",
    [("NHWC", "NCHW", (0, 3, 1, 2)), ("NCHW", "NHWC", (0, 2, 3, 1)), ("NWC", "NCW", (0, 2, 1)),
     ("NDHWC", "NCDHW", (0, 4, 1, 2, 3))],
)
def test_layout_perm(source, target, perm):
    lay = Layout(source, target)
    assert lay.perm == perm
    x = np.zeros([2, 3, 4, 5, 6][: len(source)])
    assert x.transpose(perm).shape == lay.shape(x.shape)


def test_layout_axis_rewrite():
    assert Layout("NHWC", "NCHW").axis(-1) == 1
    assert Layout("NHWC", "NCHW").axis(1) == 2
    assert Layout("NC", "NC").axis(-1) == 1


def test_layout_rejects_different_axes():
    with pytest.raises(ValueError):
        Layout("NHWC", "NCDW")


def test_default_layouts():
    assert [default_layout(r) for r in (2, 3, 4, 5)] == ["NC", "NWC", "NHWC", "NDHWC"]


def test_attr_syntax_types_and_defaults():
    spec = ops_table.get("conv2d")
    attrs = spec.complete_attrs({"filters": 8, "kernel_size": 3})
    assert attrs["kernel_size"] == (3, 3) and attrs["strides"] == (1, 1) and attrs["padding"] == "valid"
    with pytest.raises(TypeError):
        spec.complete_attrs({"filters": 8})  # kernel_size is required
    with pytest.raises(TypeError):
        spec.complete_attrs({"filters": 8, "kernel_size": 3, "bogus": 1})
    with pytest.raises(TypeError):
        spec.complete_attrs({"filters": "8", "kernel_size": 3})


def test_batch_norm_momentum_is_fraction_kept():
    doc = ops_table.get("batch_norm").doc
    assert "fraction of the old running statistic kept" in doc
    assert ops_table.get("batch_norm").attrs["momentum"].default == 0.99


def test_params_gated_by_attrs():
    spec = ops_table.get("batch_norm")
    names = [p.name for p in spec.active_params({"center": False, "scale": True})]
    assert names == ["gamma", "moving_mean", "moving_variance"]
    assert not [p for p in spec.params if p.name == "moving_mean"][0].trainable


def test_wrapper_params_are_prefixed():
    spec = ops_table.get("bidirectional")
    inner = {"op": "lstm", "attrs": ops_table.get("lstm").complete_attrs({"units": 4})}
    names = [p.name for p in spec.active_params({"layer": inner, "merge_mode": "concat"})]
    assert names[:3] == ["forward.kernel", "forward.recurrent_kernel", "forward.bias"]
    assert names[3:] == ["backward.kernel", "backward.recurrent_kernel", "backward.bias"]


def test_table_refuses_duplicates():
    with pytest.raises(ValueError):
        ops_table.op("dense", layout=ops_table.TERMINATE)


@pytest.mark.parametrize("name", sorted(ops_table.all_ops()))
def test_every_op_has_a_shape_rule_and_a_torch_emitter(name):
    assert has_rule(name)
    # separable_conv2d is decomposed by torch selection into depthwise + pointwise
    assert torch_ops.has_emitter(name) or (name in DECOMPOSED_FOR_TORCH and name in torch_selection._RULES)


@pytest.mark.parametrize("name", sorted(ops_table.all_ops()))
def test_every_op_declares_a_layout_class_and_its_axis_attrs(name):
    spec = ops_table.get(name)
    assert spec.layout in ops_table.LAYOUT_CLASSES
    if spec.layout == ops_table.ATTRIBUTE:
        assert spec.axis_attrs or name == "prelu"


def _tiny_graph():
    g = Graph("g")
    x = g.new_value("x", shape=(None, 8, 8, 3), layout="NHWC")
    g.inputs.append(x)
    conv = g.add_node("conv2d", "conv", [x], attrs={"filters": 4, "kernel_size": 3})
    infer_node(conv)
    g.outputs.append(conv.outputs[0])
    return g, conv


def test_lint_accepts_a_valid_graph():
    g, conv = _tiny_graph()
    g.lint()
    assert conv.outputs[0].shape == (None, 6, 6, 4)


@pytest.mark.parametrize("breakage", ["unknown_op", "missing_attr", "use_before_def", "bad_layout", "output"])
def test_lint_catches_broken_graphs(breakage):
    g, conv = _tiny_graph()
    if breakage == "unknown_op":
        conv.op = "no_such_op"
    elif breakage == "missing_attr":
        del conv.attrs["strides"]
    elif breakage == "use_before_def":
        conv.inputs = [g.new_value("ghost")]
    elif breakage == "bad_layout":
        conv.outputs[0].layout = "NC"
    elif breakage == "output":
        g.outputs = [g.new_value("ghost")]
    with pytest.raises(IRError):
        g.lint()


@pytest.mark.parametrize(
    "transform, shape",
    [(Transform.TRANSPOSE, (3, 5)), (Transform.CONV_KERNEL, (3, 3, 2, 4)), (Transform.CONV_KERNEL, (5, 2, 4)),
     (Transform.CONV_TRANSPOSE_KERNEL, (3, 3, 4, 2)), (Transform.GRU_KERNEL, (4, 9)),
     (Transform.GRU_BIAS_INPUT, (9,)), (Transform.CHANNELS_FIRST, (5, 5, 3))],
)
def test_transforms_round_trip(transform, shape):
    a = np.random.RandomState(0).standard_normal(shape)
    assert np.array_equal(invert(transform, apply(transform, a)), a)


@pytest.mark.parametrize("transform, shape", [(Transform.HEADS_KERNEL, (8, 2, 3)),
                                              (Transform.HEADS_OUTPUT_KERNEL, (2, 3, 5)),
                                              (Transform.FLATTEN, (2, 3))])
def test_reshaping_transforms_round_trip(transform, shape):
    a = np.random.RandomState(0).standard_normal(shape)
    assert np.array_equal(invert(transform, apply(transform, a), shape), a)


def test_heads_kernel_rows_are_torchs_heads():
    # torch splits a projection's output features into heads of `size` consecutive rows
    k = np.random.RandomState(0).standard_normal((8, 2, 3))  # (features, heads, size)
    w = apply(Transform.HEADS_KERNEL, k)
    assert w.shape == (6, 8) and np.array_equal(w[3:6], k[:, 1, :].T)
    out = np.random.RandomState(1).standard_normal((2, 3, 5))  # (heads, size, out)
    assert np.array_equal(apply(Transform.HEADS_OUTPUT_KERNEL, out)[:, 3:6], out[1].T)


def test_packed_plan_entry_splits_back():
    """nn.MultiheadAttention's in_proj_weight: three canonical kernels stacked, split again."""
    from transpiler.ir.state_plan import PlanEntry
    from transpiler.weights.mapping import gather, invert_parts, torch_shape

    rng = np.random.RandomState(0)
    parts = {p: rng.standard_normal((8, 2, 4)) for p in ("query_kernel", "key_kernel", "value_kernel")}
    entry = PlanEntry("in_proj_weight", "mha", tuple(parts), None, transform=Transform.HEADS_KERNEL)
    packed = gather(entry, parts.__getitem__).materialize()
    assert packed.shape == (24, 8) == torch_shape(entry, {p: a.shape for p, a in parts.items()})
    assert np.array_equal(packed[8:16], apply(Transform.HEADS_KERNEL, parts["key_kernel"]))
    back = invert_parts(entry, packed, {p: a.shape for p, a in parts.items()})
    assert all(np.array_equal(back[p], parts[p]) for p in parts)


def test_conv_kernel_transform_is_hwio_to_oihw():
    k = np.random.RandomState(0).standard_normal((3, 5, 2, 4))
    w = apply(Transform.CONV_KERNEL, k)
    assert w.shape == (4, 2, 3, 5)
    assert w[1, 0, 2, 4] == k[2, 4, 0, 1]


def test_permute_rows_matches_a_channels_first_flatten():
    h, w, c = 2, 3, 4
    x = np.random.RandomState(0).standard_normal((h, w, c))
    kernel = np.random.RandomState(1).standard_normal((h * w * c, 5))
    keras_out = x.reshape(-1) @ kernel
    moved = apply_param_transform(("permute_rows", ((h, w, c), (2, 0, 1))), kernel)
    torch_out = x.transpose(2, 0, 1).reshape(-1) @ moved
    assert np.allclose(keras_out, torch_out)


#: canonical ops no Keras layer produces directly, with the reason
NOT_FROM_KERAS: dict[str, str] = {
    "index_lookup": "StringLookup / IntegerLookup: made as runtime objects (data_utils.TextLayerVal), an "
                    "index_lookup node where a model calls one (frontend_ast/keras/data_lookups.py)",
    "variable": "a custom layer's add_weight (keras_frontend._add_weight), not a layer class",
    "training_select": "an `if training:` branch in a custom layer's call() (keras_frontend._exec_mode_if)",
    "pixel_shuffle": "torch's nn.PixelShuffle; Keras has no layer for it (tf.nn.depth_to_space orders the "
                     "channels the other way)",
    "opaque_layer": "a custom layer whose call() cannot be read (frontend_ast/keras/opaque.py), not a layer class",
    "slice_like": "torch's slice of a weight to a run-time size (pos_emb[:, :idx.size(1)]); Keras code "
                  "writes it as a slice of ops.shape, read as the ops it is",
}


@pytest.mark.parametrize("name", sorted(ops_table.all_ops()))
def test_every_op_has_a_keras_recogniser_or_a_reason(name):
    from transpiler.frontend_ast.keras import layers as keras_layers
    from transpiler.frontend_ast.keras import tensor_ops as keras_tensor_ops

    produced = {op for reg in keras_layers.registered_classes().values() for op in reg.ops}
    produced |= keras_tensor_ops.produced_ops()  # keras.ops / tf.* functions and operators
    assert name in produced or name in NOT_FROM_KERAS


def test_recognisers_declare_only_table_ops():
    from transpiler.frontend_ast.keras import layers as keras_layers

    for cls, reg in keras_layers.registered_classes().items():
        assert reg.ops, cls
        for op in reg.ops:
            ops_table.get(op)
