"""Per-op numeric tests: every op of the table, parametrised over its attributes.

Each case is a tiny functional Keras model (``build_model()``, one ``keras.Input`` with a
small shape, batch 3) run through ``harness.check_source``: the script is transpiled,
the Keras model gets random weights, the weights are mapped into the generated torch
module with strict ``load_state_dict`` and both run on the same random inputs.
Every case asserts max |keras - torch| <= 1e-5 on every output and equal parameter
counts (Keras weights = torch parameters + buffers, less torch's extra RNN bias).

The facts of SEMANTICS.md each have a case here: TF's asymmetric 'same' padding for
stride 2 on odd and even sizes, pooling pads that are never counted, transposed
convolution crops, Flatten -> Dense row permutation (no run-time permute), Keras'
defaults (BatchNorm momentum/epsilon, LayerNorm epsilon, LeakyReLU 0.3, the 'leaky_relu'
string 0.2, exact gelu), axis attributes on channels-first feature maps, go_backwards
outputs in processing order, the backward half of a Bidirectional layer, GRU gate
order, LSTM bias_hh = 0, BatchNorm in training mode (momentum; the moving-variance
deviation is an xfail), and the layers with no faithful torch form being refused.

Shapes are chosen so layout mistakes are visible: spatial sizes differ from each
other and from the channel count, and activations see inputs scaled past their
saturation points (relu6's 6, hard_sigmoid's +-3).
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
import torch  # before TensorFlow (see conftest.py)
import keras

from harness import check_source, load_source_module, max_error, randomize_keras_weights
from transpiler import verify
from transpiler.translate import translate

TOL = 1e-5

# every test function runs a sample of its option matrix by default in which each option value
# appears once (tests/corpus_sample.py each_value); ``pytest -m numeric_ops_all`` runs the rest
pytestmark = pytest.mark.each_value("numeric_ops_all")


HEADER = "import keras\nfrom keras import layers\n\n\ndef build_model():\n"


def source(*body: str) -> str:
    """A script whose ``build_model()`` runs ``body`` (one statement per string)."""
    return HEADER + "".join(f"    {line}\n" for line in body)


def one_input(shape: tuple, *body: str, dtype: str | None = None) -> str:
    """``inp = keras.Input(shape)``, then ``body``, which must set ``out``."""
    dt = f', dtype="{dtype}"' if dtype else ""
    return source(f"inp = keras.Input(shape={shape!r}{dt})", *body, "return keras.Model(inp, out)")


def layer_model(shape: tuple, layer: str, dtype: str | None = None) -> str:
    """A model that applies the layer expression ``layer`` to its input."""
    return one_input(shape, f"out = {layer}(inp)", dtype=dtype)


def after_conv(shape: tuple, layer: str, filters: int = 4) -> str:
    """``layer`` applied to a conv's output: a channels-first feature map in torch."""
    conv = {2: "Conv1D", 3: "Conv2D", 4: "Conv3D"}[len(shape)]
    return one_input(shape, f'x = layers.{conv}({filters}, 3, padding="same")(inp)', f"out = {layer}(x)")


@pytest.fixture
def check(record_property):
    """Run a case; assert the error bound and equal parameter counts."""

    def run(src: str):
        checked = check_source(src)
        assert checked.comparisons, "the model has no output to compare"
        err = max_error(checked)
        record_property("max_abs_error", err)
        assert err <= TOL, f"max abs error {err:.3g} > {TOL}\n{checked.translation.text}"
        assert checked.keras_params == checked.torch_params, (
            f"keras has {checked.keras_params} weights, torch {checked.torch_params}\n"
            f"{checked.translation.text}")
        return checked

    return run


def build_pair(src: str):
    """The Keras model (random weights) and the generated torch module holding the same weights."""
    result = translate(src, "case.py")
    md = result.program.models[0]
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    kmodel = load_source_module(src).build_model()
    randomize_keras_weights(kmodel)
    tmodel = generated.build_model()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    return kmodel, tmodel, md.graph


def forward_text(checked) -> str:
    text = checked.translation.text
    return text[text.index("def forward"):text.index("def build_model")]


def assert_no_runtime_permute(checked) -> None:
    """Channels-first from input to output: the data is permuted at the loading boundary only."""
    fwd = forward_text(checked)
    assert "permute" not in fwd and "movedim" not in fwd, fwd


def grid(fmt: str, **axes):
    """pytest.params over the product of ``axes``, each id ``fmt`` formatted."""
    names = list(axes)
    out = []
    for values in itertools.product(*(axes[n] for n in names)):
        kw = dict(zip(names, values))
        out.append(pytest.param(*values, id=fmt.format(**kw)))
    return out


# =====================================================================================
# Dense
# =====================================================================================
ACTIVATIONS = ["relu", "relu6", "sigmoid", "hard_sigmoid", "hard_silu", "tanh", "softmax", "log_softmax", "gelu",
               "elu", "selu", "swish", "silu", "softplus", "softsign", "leaky_relu", "linear"]


@pytest.mark.parametrize("use_bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_dense_activation(check, activation, use_bias):
    # x4 so relu6 clips, hard_sigmoid saturates and leaky_relu's slope (0.2 for the string) shows.
    check(one_input((6,), "x = layers.Rescaling(4.0)(inp)",
                    f'out = layers.Dense(5, activation="{activation}", use_bias={use_bias})(x)'))


@pytest.mark.parametrize("shape", [(4, 6), (3, 4, 6)], ids=["NTF", "NHWF-input"])
def test_dense_rank_gt2(check, shape):
    check(layer_model(shape, 'layers.Dense(5, activation="tanh")'))


def test_dense_on_feature_map(check):
    # A Dense on a conv's output acts on the channel axis.
    check(after_conv((5, 6, 3), "layers.Dense(7)"))


def test_dense_stack(check):
    check(one_input((6,), 'x = layers.Dense(8, activation="relu")(inp)', "out = layers.Dense(3)(x)"))


# =====================================================================================
# Convolutions
# =====================================================================================
@pytest.mark.parametrize("k, s, padding, n", grid("k{k}-s{s}-{padding}-n{n}", k=[1, 2, 3, 4, 5], s=[1, 2],
                                                  padding=["valid", "same"], n=[7, 8, 13]))
def test_conv1d(check, k, s, padding, n):
    checked = check(layer_model((n, 3), f'layers.Conv1D(4, {k}, strides={s}, padding="{padding}")'))
    assert_no_runtime_permute(checked)


@pytest.mark.parametrize("k, s, d", [p for p in grid("k{k}-s{s}-d{d}", k=[1, 2, 3, 5], s=[1, 2], d=[1, 2])
                                     if p.values[1] == 1 or p.values[2] == 1])  # Keras: not both > 1
def test_conv1d_causal(check, k, s, d):
    """padding="causal" (WaveNet, time series): (k - 1) * d zeros before the sequence, none
    after: an F.pad before a valid torch convolution (it was refused)."""
    checked = check(one_input((11, 3), f'x = layers.Conv1D(4, {k}, strides={s}, dilation_rate={d}, '
                                       'padding="causal", activation="relu")(inp)',
                              'out = layers.Conv1D(2, 3, padding="causal")(x)'))
    assert_no_runtime_permute(checked)


@pytest.mark.parametrize("k, s, padding, hw", grid("k{k}-s{s}-{padding}-{hw[0]}x{hw[1]}", k=[1, 2, 3, 4, 5],
                                                   s=[1, 2], padding=["valid", "same"],
                                                   hw=[(7, 7), (8, 8), (13, 13), (8, 7)]))
def test_conv2d(check, k, s, padding, hw):
    checked = check(layer_model((*hw, 3), f'layers.Conv2D(4, {k}, strides={s}, padding="{padding}")'))
    assert_no_runtime_permute(checked)


@pytest.mark.parametrize("kernel, strides, padding", [
    pytest.param((2, 3), (2, 1), "same", id="k2x3-s2x1-same"),
    pytest.param((3, 2), (1, 2), "same", id="k3x2-s1x2-same"),
    pytest.param((1, 4), (2, 2), "same", id="k1x4-s2-same"),
    pytest.param((3, 3), (3, 3), "same", id="k3-s3-same"),
    pytest.param((4, 4), (3, 2), "valid", id="k4-s3x2-valid"),
    pytest.param((5, 2), (2, 3), "same", id="k5x2-s2x3-same"),
])
def test_conv2d_rectangular(check, kernel, strides, padding):
    check(layer_model((8, 13, 3), f'layers.Conv2D(4, {kernel}, strides={strides}, padding="{padding}")'))


@pytest.mark.parametrize("rank", [1, 2])
@pytest.mark.parametrize("k, padding", grid("k{k}-{padding}", k=[2, 3, 4], padding=["valid", "same"]))
def test_conv_dilation2(check, rank, k, padding):
    shape = (11, 3) if rank == 1 else (11, 9, 3)
    check(layer_model(shape, f'layers.Conv{rank}D(4, {k}, dilation_rate=2, padding="{padding}")'))


@pytest.mark.parametrize("rank", [1, 2])
@pytest.mark.parametrize("s, padding", grid("s{s}-{padding}", s=[1, 2], padding=["valid", "same"]))
def test_conv_groups2(check, rank, s, padding):
    shape = (8, 4) if rank == 1 else (8, 7, 4)
    check(layer_model(shape, f'layers.Conv{rank}D(6, 3, strides={s}, groups=2, padding="{padding}")'))


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_conv_no_bias(check, rank):
    shape = {1: (8, 3), 2: (8, 7, 3), 3: (5, 6, 4, 2)}[rank]
    check(layer_model(shape, f'layers.Conv{rank}D(4, 3, strides=2, padding="same", use_bias=False)'))


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("activation", ["relu", "sigmoid", "softmax", "leaky_relu", "gelu"])
def test_conv_activation(check, rank, activation):
    # softmax: over the channel axis, dim 1 of the channels-first torch tensor.
    shape = {1: (8, 3), 2: (8, 7, 3), 3: (5, 6, 4, 2)}[rank]
    check(one_input(shape, "x = layers.Rescaling(4.0)(inp)",
                    f'out = layers.Conv{rank}D(4, 3, padding="same", activation="{activation}")(x)'))


@pytest.mark.parametrize("k, s, padding, dhw", grid("k{k}-s{s}-{padding}-{dhw[0]}x{dhw[1]}x{dhw[2]}",
                                                    k=[1, 2, 3, 4, 5], s=[1, 2], padding=["valid", "same"],
                                                    dhw=[(5, 6, 7), (8, 13, 7)]))
def test_conv3d(check, k, s, padding, dhw):
    # odd and even sizes in one input
    checked = check(layer_model((*dhw, 2), f'layers.Conv3D(3, {k}, strides={s}, padding="{padding}")'))
    assert_no_runtime_permute(checked)


@pytest.mark.parametrize("layer", [
    pytest.param('layers.Conv3D(3, (2, 3, 1), strides=(1, 2, 2), padding="same")', id="k2x3x1-s1x2x2-same"),
    pytest.param('layers.Conv3D(3, 3, dilation_rate=2, padding="same")', id="dilation2-same"),
    pytest.param('layers.Conv3D(4, 3, groups=2, padding="same")', id="groups2-same"),
])
def test_conv3d_options(check, layer):
    check(layer_model((5, 6, 7, 2), layer))


@pytest.mark.parametrize("k, s, padding, mult, n", grid(
    "k{k}-s{s}-{padding}-m{mult}-n{n}", k=[2, 3], s=[1, 2], padding=["valid", "same"], mult=[1, 2], n=[7, 8]))
def test_depthwise_conv2d(check, k, s, padding, mult, n):
    check(layer_model((n, n + 1, 3),
                      f'layers.DepthwiseConv2D({k}, strides={s}, padding="{padding}", depth_multiplier={mult})'))


@pytest.mark.parametrize("extra", ["use_bias=False", "dilation_rate=2", 'activation="relu"'])
def test_depthwise_conv2d_options(check, extra):
    check(layer_model((9, 8, 3), f'layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2, {extra})'))


@pytest.mark.parametrize("s, padding, mult, n", grid("s{s}-{padding}-m{mult}-n{n}", s=[1, 2],
                                                     padding=["valid", "same"], mult=[1, 2], n=[7, 8]))
def test_separable_conv2d(check, s, padding, mult, n):
    check(layer_model((n, n + 1, 3),
                      f'layers.SeparableConv2D(5, 3, strides={s}, padding="{padding}", depth_multiplier={mult})'))


@pytest.mark.parametrize("extra", ["use_bias=False", "dilation_rate=2", 'activation="relu"', "kernel_size=(2, 4)"])
def test_separable_conv2d_options(check, extra):
    kernel = "" if extra.startswith("kernel_size") else "kernel_size=3, "
    check(layer_model((9, 8, 3), f'layers.SeparableConv2D(5, {kernel}padding="same", strides=2, {extra})'))


# =====================================================================================
# Transposed convolutions
# =====================================================================================
@pytest.mark.parametrize("k, s, padding", grid("k{k}-s{s}-{padding}", k=[1, 2, 3, 4, 5], s=[1, 2, 3],
                                               padding=["valid", "same"]))
def test_conv1d_transpose(check, k, s, padding):
    check(layer_model((5, 3), f'layers.Conv1DTranspose(4, {k}, strides={s}, padding="{padding}")'))


@pytest.mark.parametrize("k, s, padding", grid("k{k}-s{s}-{padding}", k=[1, 2, 3, 4, 5], s=[1, 2, 3],
                                               padding=["valid", "same"]))
def test_conv2d_transpose(check, k, s, padding):
    check(layer_model((5, 6, 3), f'layers.Conv2DTranspose(4, {k}, strides={s}, padding="{padding}")'))


@pytest.mark.parametrize("layer", [
    pytest.param('layers.Conv2DTranspose(4, (3, 2), strides=(2, 1), padding="same")', id="2d-k3x2-s2x1-same"),
    pytest.param('layers.Conv2DTranspose(4, (2, 5), strides=(1, 3), padding="valid")', id="2d-k2x5-s1x3-valid"),
    pytest.param('layers.Conv2DTranspose(4, 3, dilation_rate=2, padding="same")', id="2d-dilation2-same"),
    pytest.param('layers.Conv2DTranspose(4, 3, dilation_rate=2, padding="valid")', id="2d-dilation2-valid"),
    pytest.param('layers.Conv2DTranspose(4, 3, strides=2, padding="same", use_bias=False)', id="2d-nobias"),
    pytest.param('layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu")', id="2d-relu"),
    pytest.param('layers.Conv2DTranspose(4, 3, strides=2, padding="same", output_padding=0)', id="2d-op0-same"),
    pytest.param('layers.Conv2DTranspose(4, 4, strides=2, padding="same", output_padding=1)', id="2d-op1-k4-same"),
    pytest.param('layers.Conv2DTranspose(4, 3, strides=2, padding="valid", output_padding=1)', id="2d-op1-valid"),
    pytest.param('layers.Conv1DTranspose(4, 3, dilation_rate=2, padding="same")', id="1d-dilation2-same"),
    pytest.param('layers.Conv1DTranspose(4, 3, strides=2, padding="same", output_padding=1)', id="1d-op1-same"),
    pytest.param('layers.Conv1DTranspose(4, 2, strides=3, padding="valid", output_padding=2)', id="1d-op2-valid"),
])
def test_conv_transpose_options(check, layer):
    shape = (5, 3) if "Conv1D" in layer else (5, 6, 3)
    check(layer_model(shape, layer))


# =====================================================================================
# Pooling
# =====================================================================================
@pytest.mark.parametrize("kind", ["Max", "Average"])
@pytest.mark.parametrize("pool, s, padding, n", grid("p{pool}-s{s}-{padding}-n{n}", pool=[2, 3], s=[1, 2],
                                                     padding=["valid", "same"], n=[7, 8]))
def test_pooling1d(check, kind, pool, s, padding, n):
    check(layer_model((n, 3), f'layers.{kind}Pooling1D({pool}, strides={s}, padding="{padding}")'))


@pytest.mark.parametrize("kind", ["Max", "Average"])
@pytest.mark.parametrize("pool, s, padding, n", grid("p{pool}-s{s}-{padding}-n{n}", pool=[2, 3], s=[1, 2],
                                                     padding=["valid", "same"], n=[7, 8]))
def test_pooling2d(check, kind, pool, s, padding, n):
    # H = n, W = n + 1: one odd and one even axis in every case.
    check(layer_model((n, n + 1, 3), f'layers.{kind}Pooling2D({pool}, strides={s}, padding="{padding}")'))


@pytest.mark.parametrize("kind", ["Max", "Average"])
@pytest.mark.parametrize("args", [
    pytest.param("2", id="p2-default-strides-valid"),
    pytest.param('2, padding="same"', id="p2-default-strides-same"),
    pytest.param('pool_size=(2, 3), padding="same"', id="p2x3-same"),
    pytest.param('pool_size=(3, 2), strides=(1, 2), padding="same"', id="p3x2-s1x2-same"),
    pytest.param('pool_size=4, strides=3, padding="same"', id="p4-s3-same"),
    pytest.param('pool_size=5, strides=1, padding="same"', id="p5-s1-same"),
    pytest.param('pool_size=4, strides=1, padding="same"', id="p4-s1-same"),
    pytest.param('pool_size=3, strides=3, padding="valid"', id="p3-s3-valid"),
])
def test_pooling2d_more(check, kind, args):
    check(layer_model((9, 8, 3), f"layers.{kind}Pooling2D({args})"))


@pytest.mark.parametrize("kind", ["Max", "Average"])
@pytest.mark.parametrize("pool, s, padding", grid("p{pool}-s{s}-{padding}", pool=[2, 3], s=[1, 2],
                                                  padding=["valid", "same"]))
def test_pooling3d(check, kind, pool, s, padding):
    check(layer_model((5, 6, 7, 2), f'layers.{kind}Pooling3D({pool}, strides={s}, padding="{padding}")'))


@pytest.mark.parametrize("keepdims", [False, True], ids=["drop", "keepdims"])
@pytest.mark.parametrize("kind", ["Average", "Max"])
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_global_pooling(check, rank, kind, keepdims):
    shape = {1: (7, 3), 2: (5, 6, 3), 3: (4, 5, 6, 2)}[rank]
    check(layer_model(shape, f"layers.Global{kind}Pooling{rank}D(keepdims={keepdims})"))


@pytest.mark.parametrize("keepdims", [False, True], ids=["drop", "keepdims"])
@pytest.mark.parametrize("kind", ["Average", "Max"])
def test_global_pooling2d_after_conv(check, kind, keepdims):
    check(one_input((6, 5, 3), 'x = layers.Conv2D(4, 3, padding="same")(inp)',
                    f"x = layers.Global{kind}Pooling2D(keepdims={keepdims})(x)",
                    "out = layers.Dense(2)(x)"))


# =====================================================================================
# Flatten, Reshape, Permute, RepeatVector
# =====================================================================================
@pytest.mark.parametrize("body", [
    pytest.param(['x = layers.Conv2D(4, 3)(inp)'], id="conv2d"),
    pytest.param(['x = layers.Conv2D(4, 3, strides=2, padding="same")(inp)',
                  "x = layers.MaxPooling2D()(x)"], id="conv2d-pool"),
    pytest.param(['x = layers.Conv2D(4, 3, activation="relu")(inp)'], id="conv2d-relu"),
    pytest.param(['x = layers.Conv2D(4, 3)(inp)', "x = layers.BatchNormalization()(x)"], id="conv2d-bn"),
])
def test_flatten_dense_after_conv2d(check, body):
    # Keras flattens (H, W, C); the Dense kernel rows are permuted, nothing runs at run time.
    checked = check(one_input((7, 6, 3), *body, "x = layers.Flatten()(x)", "out = layers.Dense(5)(x)"))
    assert_no_runtime_permute(checked)


@pytest.mark.parametrize("between", [
    pytest.param("layers.Dropout(0.5)", id="dropout"),
    pytest.param('layers.Activation("relu")', id="relu"),
    pytest.param("layers.Identity()", id="identity"),
])
def test_flatten_through_elementwise_dense(check, between):
    checked = check(one_input((7, 6, 3), "x = layers.Conv2D(4, 3)(inp)", "x = layers.Flatten()(x)",
                              f"x = {between}(x)", "out = layers.Dense(5)(x)"))
    assert "permute" not in forward_text(checked)


def test_flatten_dense_after_conv1d(check):
    checked = check(one_input((9, 3), "x = layers.Conv1D(4, 3)(inp)", "x = layers.Flatten()(x)",
                              "out = layers.Dense(5)(x)"))
    assert "permute" not in forward_text(checked)


def test_flatten_dense_after_conv3d(check):
    checked = check(one_input((4, 5, 6, 2), "x = layers.Conv3D(3, 2)(inp)", "x = layers.Flatten()(x)",
                              "out = layers.Dense(5)(x)"))
    assert "permute" not in forward_text(checked)


def test_flatten_dense_two_readers(check):
    # Two Dense layers read the same flattened feature map: both get permuted rows.
    check(source("inp = keras.Input(shape=(7, 6, 3))", "x = layers.Conv2D(4, 3)(inp)",
                 "x = layers.Flatten()(x)", "a = layers.Dense(5)(x)", "b = layers.Dense(2)(x)",
                 "return keras.Model(inp, [a, b])"))


def test_flatten_as_output(check):
    # The flattened map is a model output: it must be in Keras' (H, W, C) order.
    check(one_input((7, 6, 3), "x = layers.Conv2D(4, 3)(inp)", "out = layers.Flatten()(x)"))


def test_flatten_output_and_dense(check):
    check(source("inp = keras.Input(shape=(7, 6, 3))", "x = layers.Conv2D(4, 3)(inp)",
                 "f = layers.Flatten()(x)", "d = layers.Dense(5)(f)", "return keras.Model(inp, [f, d])"))


@pytest.mark.parametrize("shape", [(12,), (3, 4), (2, 3, 4)], ids=["2d", "3d", "4d"])
def test_flatten_plain_input(check, shape):
    check(one_input(shape, "x = layers.Flatten()(inp)", "out = layers.Dense(3)(x)"))


@pytest.mark.parametrize("shape, target", [
    pytest.param((12,), (3, 4), id="12-to-3x4"),
    pytest.param((3, 4), (-1,), id="3x4-to-flat"),
    pytest.param((3, 4), (4, 3), id="3x4-to-4x3"),
    pytest.param((2, 3, 4), (6, 4), id="2x3x4-to-6x4"),
    pytest.param((12,), (2, 3, 2), id="12-to-2x3x2"),
    pytest.param((12,), (-1, 2), id="12-to-minus1x2"),
])
def test_reshape(check, shape, target):
    check(layer_model(shape, f"layers.Reshape({target})"))


def test_reshape_after_conv(check):
    # A feature map to a (T, F) sequence: Keras reshapes (H, W, C).
    check(one_input((4, 6, 3), 'x = layers.Conv2D(5, 3, padding="same")(inp)',
                    "x = layers.Reshape((-1, 5))(x)", "out = layers.Dense(2)(x)"))


@pytest.mark.parametrize("then", [
    pytest.param('layers.Conv2D(3, 3, padding="same")', id="conv"),
    pytest.param("layers.UpSampling2D()", id="upsample"),
    pytest.param("layers.Flatten()", id="flatten"),
])
def test_dense_reshape_to_feature_map(check, then):
    # Dense -> Reshape into an image -> conv: the Dense's columns are permuted instead.
    check(one_input((6,), "x = layers.Dense(24)(inp)", "x = layers.Reshape((2, 4, 3))(x)", f"out = {then}(x)"))


@pytest.mark.parametrize("dense", ['layers.Dense(24, activation="relu")', "layers.Dense(24, use_bias=False)"],
                         ids=["relu", "nobias"])
def test_dense_reshape_conv_variants(check, dense):
    check(one_input((6,), f"x = {dense}(inp)", "x = layers.Reshape((2, 4, 3))(x)",
                    'out = layers.Conv2D(3, 3, padding="same")(x)'))


@pytest.mark.parametrize("shape, dims", [
    pytest.param((4, 5), (2, 1), id="3d-21"),
    pytest.param((3, 4, 5), (3, 1, 2), id="4d-312"),
    pytest.param((3, 4, 5), (2, 1, 3), id="4d-213"),
    pytest.param((3, 4, 5), (1, 2, 3), id="4d-identity"),
])
def test_permute(check, shape, dims):
    check(layer_model(shape, f"layers.Permute({dims})"))


@pytest.mark.parametrize("dims", [(2, 1, 3), (3, 1, 2), (1, 3, 2)])
def test_permute_between_convs(check, dims):
    check(one_input((5, 6, 3), 'x = layers.Conv2D(4, 3, padding="same")(inp)',
                    f"x = layers.Permute({dims})(x)", 'out = layers.Conv2D(2, 3)(x)'))


@pytest.mark.parametrize("dims", [
    pytest.param((2, 1, 3), id="213"),
    pytest.param((3, 1, 2), id="312"),  # folds into an identity; the output keeps Keras' layout
])
def test_permute_after_conv_output(check, dims):
    check(after_conv((5, 6, 3), f"layers.Permute({dims})"))


@pytest.mark.parametrize("n", [1, 3])
def test_repeat_vector(check, n):
    check(layer_model((5,), f"layers.RepeatVector({n})"))


def test_repeat_vector_then_lstm(check):
    check(one_input((5,), "x = layers.RepeatVector(4)(inp)", "out = layers.LSTM(3, return_sequences=True)(x)"))


# =====================================================================================
# Dropout, normalisation, rescaling, identity
# =====================================================================================
@pytest.mark.parametrize("shape, where", [
    pytest.param((6,), "input", id="2d"),
    pytest.param((5, 6, 3), "input", id="4d-input"),
    pytest.param((5, 6, 3), "conv", id="4d-conv"),
])
def test_dropout_inference(check, shape, where):
    layer = "layers.Dropout(0.5)"
    check(after_conv(shape, layer) if where == "conv" else layer_model(shape, layer))


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("where", ["input", "conv"])
def test_spatial_dropout_inference(check, rank, where):
    shape = {1: (7, 3), 2: (5, 6, 3), 3: (4, 5, 6, 2)}[rank]
    layer = f"layers.SpatialDropout{rank}D(0.5)"
    check(after_conv(shape, layer) if where == "conv" else layer_model(shape, layer))


BN_ARGS = [
    pytest.param("", id="defaults"),
    pytest.param("momentum=0.9, epsilon=1e-5", id="m0.9-eps1e-5"),
    pytest.param("epsilon=0.5", id="eps0.5"),
    pytest.param("center=False", id="nocenter"),
    pytest.param("scale=False", id="noscale"),
    pytest.param("center=False, scale=False", id="noaffine"),
    pytest.param("momentum=0.5, epsilon=0.1, center=False", id="m0.5-eps0.1-nocenter"),
]


@pytest.mark.parametrize("where", [
    pytest.param(((6,), "input"), id="2d"),
    pytest.param(((5, 4), "input"), id="3d"),
    pytest.param(((5, 6, 3), "input"), id="4d-input"),
    pytest.param(((5, 6, 3), "conv"), id="4d-conv"),
    pytest.param(((7, 3), "conv"), id="3d-conv1d"),
])
@pytest.mark.parametrize("args", BN_ARGS)
def test_batch_norm(check, where, args):
    # epsilon matters: the harness draws moving variances in [0.5, 1.5].
    shape, kind = where
    layer = f"layers.BatchNormalization({args})"
    check(after_conv(shape, layer) if kind == "conv" else layer_model(shape, layer))


@pytest.mark.parametrize("shape, axis, where", [
    pytest.param((5, 4), 1, "input", id="3d-axis1"),
    pytest.param((5, 6, 3), 1, "input", id="4d-input-axis1"),
    pytest.param((5, 6, 3), 2, "conv", id="4d-conv-axis2"),
    pytest.param((5, 6, 3), -1, "conv", id="4d-conv-axis-1"),
    pytest.param((5, 6, 3), 3, "conv", id="4d-conv-axis3"),
])
def test_batch_norm_axis(check, shape, axis, where):
    layer = f"layers.BatchNormalization(axis={axis})"
    check(after_conv(shape, layer) if where == "conv" else layer_model(shape, layer))


@pytest.mark.parametrize("momentum", [0.99, 0.9, 0.5])
@pytest.mark.parametrize("where", ["2d", "4d-conv"])
def test_batch_norm_training_step(where, momentum):
    """One training-mode call: same output (biased batch variance in both) and the same
    moving_mean, so Keras' momentum maps to torch's 1 - momentum."""
    layer = f"layers.BatchNormalization(momentum={momentum})"
    src = layer_model((6,), layer) if where == "2d" else after_conv((5, 6, 3), layer)
    kmodel, tmodel, graph = build_pair(src)
    x = np.random.RandomState(1).standard_normal((4, *kmodel.inputs[0].shape[1:])).astype("float32")
    y_k = np.asarray(kmodel(x, training=True))
    bn_k = next(layer for layer in kmodel.layers if isinstance(layer, keras.layers.BatchNormalization))
    tmodel.train()
    with torch.no_grad():
        y_t = tmodel(torch.from_numpy(verify.to_target_layout(x, graph.inputs[0].layout)))
    y_t = verify.to_source_layout(y_t.numpy(), graph.outputs[0].layout)
    bn_t = next(m for m in tmodel.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm))
    assert np.abs(y_k - y_t).max() <= TOL
    assert np.abs(np.asarray(bn_k.moving_mean) - bn_t.running_mean.numpy()).max() <= TOL


def test_batch_norm_training_moving_variance_documented_deviation():
    """SEMANTICS.md: Keras updates moving_variance with the biased batch variance, torch's
    nn.BatchNorm (which the emitter uses, documented in docs/user_guide.md) with the
    unbiased one. Outputs and moving_mean agree (tested above); the variance update
    differs by exactly the n/(n-1) factor on the batch-variance term."""
    kmodel, tmodel, graph = build_pair(layer_model((6,), "layers.BatchNormalization(momentum=0.5)"))
    x = np.random.RandomState(1).standard_normal((4, 6)).astype("float32")
    bn_k = next(layer for layer in kmodel.layers if isinstance(layer, keras.layers.BatchNormalization))
    bn_t = next(m for m in tmodel.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm))
    before = bn_t.running_var.numpy().copy()
    assert np.abs(np.asarray(bn_k.moving_variance) - before).max() <= TOL
    kmodel(x, training=True)
    tmodel.train()
    with torch.no_grad():
        tmodel(torch.from_numpy(x))
    biased = x.var(axis=0)
    keras_expected = 0.5 * before + 0.5 * biased
    torch_expected = 0.5 * before + 0.5 * biased * 4 / 3
    assert np.abs(np.asarray(bn_k.moving_variance) - keras_expected).max() <= TOL
    assert np.abs(bn_t.running_var.numpy() - torch_expected).max() <= TOL


LN_ARGS = [
    pytest.param("", id="defaults"),
    pytest.param("epsilon=1e-5", id="eps1e-5"),
    pytest.param("epsilon=0.5", id="eps0.5"),
    pytest.param("center=False", id="nocenter"),
    pytest.param("scale=False", id="noscale"),
    pytest.param("center=False, scale=False", id="noaffine"),
]


@pytest.mark.parametrize("where", [
    pytest.param(((6,), "input"), id="2d"),
    pytest.param(((5, 4), "input"), id="3d"),
    pytest.param(((5, 6, 3), "input"), id="4d-input"),
    pytest.param(((5, 6, 3), "conv"), id="4d-conv"),
])
@pytest.mark.parametrize("args", LN_ARGS)
def test_layer_norm(check, where, args):
    shape, kind = where
    # Input scaled by 0.05: variances ~2.5e-3, so an epsilon of 1e-5 instead of 1e-3 shows.
    layer = f"layers.LayerNormalization({args})"
    if kind == "conv":
        check(after_conv(shape, layer))
    else:
        check(one_input(shape, "x = layers.Rescaling(0.05)(inp)", f"out = {layer}(x)"))


@pytest.mark.parametrize("shape, axis, where", [
    pytest.param((5, 4), 1, "input", id="3d-axis1"),
    pytest.param((5, 4), [1, 2], "input", id="3d-axis12"),
    pytest.param((5, 6, 3), [1, 2, 3], "input", id="4d-input-axis123"),
    pytest.param((5, 6, 3), [1, 2, 3], "conv", id="4d-conv-axis123"),
    pytest.param((5, 6, 3), [2, 3], "conv", id="4d-conv-axis23"),
    pytest.param((5, 6, 3), 1, "conv", id="4d-conv-axis1"),
])
def test_layer_norm_axis(check, shape, axis, where):
    layer = f"layers.LayerNormalization(axis={axis})"
    check(after_conv(shape, layer) if where == "conv" else layer_model(shape, layer))


@pytest.mark.parametrize("args", [
    pytest.param("1.0 / 255", id="inv255"),
    pytest.param("2.0, offset=-1.0", id="scale2-offset-1"),
    pytest.param("0.5, offset=0.25", id="scale0.5-offset0.25"),
    pytest.param("scale=-3.0", id="negative"),
])
@pytest.mark.parametrize("where", ["2d", "4d-input", "4d-conv"])
def test_rescaling(check, args, where):
    layer = f"layers.Rescaling({args})"
    if where == "2d":
        check(layer_model((6,), layer))
    elif where == "4d-input":
        check(layer_model((5, 6, 3), layer))
    else:
        check(after_conv((5, 6, 3), layer))


@pytest.mark.parametrize("where", ["2d", "4d-input", "4d-conv"])
def test_rescaling_per_channel(check, where):
    if where == "2d":
        check(layer_model((3,), "layers.Rescaling([0.5, 2.0, -1.0], offset=[0.1, 0.0, -0.2])"))
    elif where == "4d-input":
        check(layer_model((5, 6, 3), "layers.Rescaling([0.5, 2.0, -1.0], offset=[0.1, 0.0, -0.2])"))
    else:
        check(after_conv((5, 6, 3), "layers.Rescaling([0.5, 2.0, -1.0, 3.0], offset=[0.1, 0.0, -0.2, 1.0])"))


@pytest.mark.parametrize("expr", [
    pytest.param("x * 2.0", id="mul"),
    pytest.param("2.0 * x", id="rmul"),
    pytest.param("x / 4.0", id="div"),
    pytest.param("x + 1.5", id="add"),
    pytest.param("x - 0.5", id="sub"),
])
def test_tensor_constant_arithmetic(check, expr):
    check(one_input((5, 6, 3), 'x = layers.Conv2D(4, 3, padding="same")(inp)', f"out = {expr}"))


@pytest.mark.parametrize("where", ["2d", "4d-conv"])
def test_identity(check, where):
    if where == "2d":
        check(one_input((6,), "x = layers.Identity()(inp)", "out = layers.Dense(3)(x)"))
    else:
        check(after_conv((5, 6, 3), "layers.Identity()"))


# =====================================================================================
# Activation layers
# =====================================================================================
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_activation_layer(check, activation):
    check(one_input((7,), "x = layers.Rescaling(4.0)(inp)", f'out = layers.Activation("{activation}")(x)'))


@pytest.mark.parametrize("activation", ["softmax", "log_softmax", "relu6", "leaky_relu", "gelu"])
def test_activation_layer_on_feature_map(check, activation):
    # softmax over the channel axis: dim 1 of the channels-first tensor.
    check(after_conv((5, 6, 3), f'layers.Activation("{activation}")'))


RELU_ARGS = [
    pytest.param("", id="plain"),
    pytest.param("max_value=6.0", id="max6"),
    pytest.param("max_value=1.5", id="max1.5"),
    pytest.param("negative_slope=0.1", id="slope0.1"),
    pytest.param("threshold=0.5", id="thr0.5"),
    pytest.param("max_value=2.0, negative_slope=0.1", id="max2-slope0.1"),
    pytest.param("negative_slope=0.2, threshold=0.5", id="slope0.2-thr0.5"),
    pytest.param("max_value=3.0, threshold=1.0", id="max3-thr1"),
    pytest.param("max_value=2.5, negative_slope=0.3, threshold=0.5", id="all"),
]


@pytest.mark.parametrize("args", RELU_ARGS)
def test_relu_layer(check, args):
    check(one_input((7,), "x = layers.Rescaling(3.0)(inp)", f"out = layers.ReLU({args})(x)"))


@pytest.mark.parametrize("args", [
    pytest.param("", id="default0.3"),
    pytest.param("negative_slope=0.1", id="slope0.1"),
    pytest.param("alpha=0.05", id="legacy-alpha0.05"),
    pytest.param("0.2", id="positional0.2"),
])
def test_leaky_relu_layer(check, args):
    check(layer_model((7,), f"layers.LeakyReLU({args})"))


@pytest.mark.parametrize("args", ["", "alpha=0.5", "alpha=2.0"])
def test_elu_layer(check, args):
    check(layer_model((7,), f"layers.ELU({args})"))


@pytest.mark.parametrize("shape, shared, where", [
    pytest.param((6,), None, "input", id="2d"),
    pytest.param((5, 4), None, "input", id="3d"),
    pytest.param((5, 4), [1], "input", id="3d-shared1"),
    pytest.param((5, 4), [2], "input", id="3d-shared2"),
    pytest.param((5, 6, 3), None, "input", id="4d-input"),
    pytest.param((5, 6, 3), [1, 2], "input", id="4d-input-shared12"),
    pytest.param((5, 6, 3), None, "conv", id="4d-conv"),
    pytest.param((5, 6, 3), [1, 2], "conv", id="4d-conv-shared12"),
    pytest.param((5, 6, 3), [1], "conv", id="4d-conv-shared1"),
    pytest.param((5, 6, 3), [3], "conv", id="4d-conv-shared3"),
    pytest.param((5, 6, 3), [1, 2, 3], "conv", id="4d-conv-shared123"),
])
def test_prelu(check, shape, shared, where):
    layer = f"layers.PReLU(shared_axes={shared})"
    check(after_conv(shape, layer) if where == "conv" else layer_model(shape, layer))


@pytest.mark.parametrize("shape, axis, where", [
    pytest.param((7,), -1, "input", id="2d"),
    pytest.param((5, 4), -1, "input", id="3d"),
    pytest.param((5, 4), 1, "input", id="3d-axis1"),
    pytest.param((5, 6, 3), -1, "input", id="4d-input"),
    pytest.param((5, 6, 3), -1, "conv", id="4d-conv"),
    pytest.param((5, 6, 3), 1, "conv", id="4d-conv-axis1"),
    pytest.param((5, 6, 3), 2, "conv", id="4d-conv-axis2"),
    pytest.param((5, 6, 3), 3, "conv", id="4d-conv-axis3"),
])
def test_softmax_layer(check, shape, axis, where):
    layer = f"layers.Softmax(axis={axis})"
    check(after_conv(shape, layer) if where == "conv" else layer_model(shape, layer))


# =====================================================================================
# Merges
# =====================================================================================
MERGES = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"]


@pytest.mark.parametrize("cls", MERGES)
def test_merge_2d(check, cls):
    check(source("a = keras.Input(shape=(6,))", "b = keras.Input(shape=(6,))",
                 f"out = layers.{cls}()([a, b])", "return keras.Model([a, b], out)"))


@pytest.mark.parametrize("cls", MERGES)
def test_merge_feature_maps(check, cls):
    check(one_input((5, 6, 3), 'a = layers.Conv2D(4, 3, padding="same")(inp)',
                    'b = layers.Conv2D(4, 1)(inp)', f"out = layers.{cls}()([a, b])"))


@pytest.mark.parametrize("cls", [c for c in MERGES if c != "Subtract"])
def test_merge_three_inputs(check, cls):
    check(source("a = keras.Input(shape=(5,))", "b = keras.Input(shape=(5,))", "c = keras.Input(shape=(5,))",
                 f"out = layers.{cls}()([a, b, c])", "return keras.Model([a, b, c], out)"))


@pytest.mark.parametrize("cls", ["Add", "Multiply", "Maximum"])
def test_merge_feature_map_with_input(check, cls):
    # The raw input and a conv output meet: both channels-first.
    check(one_input((5, 6, 4), 'a = layers.Conv2D(4, 3, padding="same")(inp)',
                    f"out = layers.{cls}()([a, inp])"))


@pytest.mark.parametrize("cls", ["Add", "Subtract", "Multiply", "Concatenate"])
def test_merge_sequence_with_feature_map(check, cls):
    # A Conv1D output (channels-first in torch) and a Dense output on (T, F) (channels-last).
    check(one_input((6, 3), 'a = layers.Conv1D(4, 3, padding="same")(inp)', "b = layers.Dense(4)(inp)",
                    f"out = layers.{cls}()([a, b])"))


@pytest.mark.parametrize("fn", ["add", "subtract", "multiply", "average", "maximum", "minimum"])
def test_merge_helper_functions(check, fn):
    check(one_input((5, 6, 3), 'a = layers.Conv2D(4, 3, padding="same")(inp)',
                    'b = layers.Conv2D(4, 1)(inp)', f"out = layers.{fn}([a, b])"))


@pytest.mark.parametrize("op", ["+", "-", "*"])
@pytest.mark.parametrize("where", ["2d", "4d-conv"])
def test_tensor_operators(check, op, where):
    if where == "2d":
        check(one_input((6,), "a = layers.Dense(4)(inp)", "b = layers.Dense(4)(inp)", f"out = a {op} b"))
    else:
        check(one_input((5, 6, 3), 'a = layers.Conv2D(4, 3, padding="same")(inp)',
                        'b = layers.Conv2D(4, 1)(inp)', f"out = a {op} b"))


@pytest.mark.parametrize("axis", [-1, 1, 2, 3])
@pytest.mark.parametrize("helper", [False, True], ids=["layer", "function"])
def test_concatenate_feature_maps(check, axis, helper):
    merge = f"layers.concatenate([a, b], axis={axis})" if helper else f"layers.Concatenate(axis={axis})([a, b])"
    check(one_input((5, 6, 3), 'a = layers.Conv2D(4, 3, padding="same")(inp)',
                    'b = layers.Conv2D(4, 1)(inp)', f"out = {merge}"))


@pytest.mark.parametrize("axis", [-1, 1])
def test_concatenate_2d(check, axis):
    check(source("a = keras.Input(shape=(4,))", "b = keras.Input(shape=(3,))",
                 f"out = layers.Concatenate(axis={axis})([a, b])", "return keras.Model([a, b], out)"))


@pytest.mark.parametrize("axis", [-1, 1, 2])
def test_concatenate_3d(check, axis):
    shapes = {-1: ((5, 4), (5, 3)), 1: ((5, 4), (2, 4)), 2: ((5, 4), (5, 2))}[axis]
    check(source(f"a = keras.Input(shape={shapes[0]})", f"b = keras.Input(shape={shapes[1]})",
                 f"out = layers.Concatenate(axis={axis})([a, b])", "return keras.Model([a, b], out)"))


@pytest.mark.parametrize("then", [
    pytest.param("layers.Flatten()", id="flatten"),
    pytest.param("layers.GlobalAveragePooling2D()", id="gap"),
    pytest.param("layers.GlobalMaxPooling2D(keepdims=True)", id="gmp-keepdims"),
    pytest.param("layers.Rescaling(0.5, offset=1.0)", id="rescaling"),
    pytest.param("layers.PReLU()", id="prelu"),
    pytest.param("layers.PReLU(shared_axes=[1, 2])", id="prelu-shared12"),
    pytest.param("layers.ReLU(max_value=1.0)", id="relu-max"),
    pytest.param("layers.ReLU(threshold=0.5, negative_slope=0.1)", id="relu-threshold"),
    pytest.param("layers.Cropping2D(1)", id="crop"),
    pytest.param("layers.Reshape((-1, 4))", id="reshape"),
    pytest.param("layers.Permute((2, 1, 3))", id="permute"),
    pytest.param("layers.BatchNormalization(center=False)", id="bn-nocenter"),
    pytest.param("layers.LayerNormalization(scale=False)", id="ln-noscale"),
    pytest.param("layers.Softmax()", id="softmax"),
])
@pytest.mark.parametrize("merge", ["Add", "Subtract"])
def test_merge_then_unary(check, merge, then):
    # The merge's `a + b` may be inlined into the next expression: it must keep its precedence.
    check(one_input((5, 6, 3), 'a = layers.Conv2D(4, 3, padding="same")(inp)', 'b = layers.Conv2D(4, 1)(inp)',
                    f"x = layers.{merge}()([a, b])", f"out = {then}(x)"))


@pytest.mark.parametrize("then", [
    pytest.param("layers.RepeatVector(2)", id="repeat"),
    pytest.param("layers.Reshape((2, 2))", id="reshape"),
    pytest.param("layers.ReLU(max_value=1.0)", id="relu-max"),
    pytest.param("layers.Rescaling([1.0, 2.0, 3.0, 4.0])", id="rescaling-list"),
    pytest.param("layers.BatchNormalization(scale=False)", id="bn-noscale"),
])
def test_merge_then_unary_2d(check, then):
    check(one_input((6,), "a = layers.Dense(4)(inp)", "b = layers.Dense(4)(inp)", "x = a - b", f"out = {then}(x)"))


@pytest.mark.parametrize("merge", ["layers.Concatenate()", "layers.Concatenate(axis=1)", "layers.Add()",
                                   "layers.Maximum()"])
def test_merge_mixed_layouts(check, merge):
    # A conv output (channels-first in torch) meets a Permute output (channels-last): aligned first.
    check(source("a_in = keras.Input(shape=(5, 6, 3))", "b_in = keras.Input(shape=(6, 5, 4))",
                 'a = layers.Conv2D(4, 3, padding="same")(a_in)', "b = layers.Permute((2, 1, 3))(b_in)",
                 f"out = {merge}([a, b])", "return keras.Model([a_in, b_in], out)"))


def test_concatenate_three_feature_maps_then_flatten_dense(check):
    check(one_input((5, 6, 3), 'a = layers.Conv2D(4, 3, padding="same")(inp)', 'b = layers.Conv2D(2, 1)(inp)',
                    "x = layers.Concatenate()([a, b, inp])", "x = layers.Flatten()(x)",
                    "out = layers.Dense(3)(x)"))


# =====================================================================================
# Padding, cropping, upsampling
# =====================================================================================
@pytest.mark.parametrize("padding", [
    pytest.param("1", id="int1"), pytest.param("3", id="int3"),
    pytest.param("(1, 2)", id="asym-1-2"), pytest.param("(0, 2)", id="asym-0-2"),
])
def test_zero_padding1d(check, padding):
    check(layer_model((5, 3), f"layers.ZeroPadding1D({padding})"))


@pytest.mark.parametrize("padding", [
    pytest.param("1", id="int1"), pytest.param("(1, 2)", id="sym-h1-w2"),
    pytest.param("((1, 2), (0, 3))", id="asym-12-03"), pytest.param("((0, 1), (2, 0))", id="asym-01-20"),
])
@pytest.mark.parametrize("where", ["input", "conv"])
def test_zero_padding2d(check, padding, where):
    layer = f"layers.ZeroPadding2D({padding})"
    check(after_conv((5, 6, 3), layer) if where == "conv" else layer_model((5, 6, 3), layer))


@pytest.mark.parametrize("cropping", [
    pytest.param("1", id="int1"), pytest.param("(1, 2)", id="asym-1-2"), pytest.param("(0, 2)", id="asym-0-2"),
    pytest.param("(2, 0)", id="asym-2-0"),
])
def test_cropping1d(check, cropping):
    check(layer_model((7, 3), f"layers.Cropping1D({cropping})"))


@pytest.mark.parametrize("cropping", [
    pytest.param("1", id="int1"), pytest.param("(1, 2)", id="sym-h1-w2"),
    pytest.param("((1, 2), (0, 3))", id="asym-12-03"), pytest.param("((0, 0), (2, 0))", id="asym-00-20"),
])
@pytest.mark.parametrize("where", ["input", "conv"])
def test_cropping2d(check, cropping, where):
    layer = f"layers.Cropping2D({cropping})"
    check(after_conv((7, 8, 3), layer) if where == "conv" else layer_model((7, 8, 3), layer))


@pytest.mark.parametrize("size", [2, 3])
def test_upsampling1d(check, size):
    check(layer_model((5, 3), f"layers.UpSampling1D({size})"))


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
@pytest.mark.parametrize("size", [pytest.param("2", id="2"), pytest.param("(2, 3)", id="2x3"),
                                  pytest.param("(3, 1)", id="3x1")])
@pytest.mark.parametrize("where", ["input", "conv"])
def test_upsampling2d(check, interpolation, size, where):
    layer = f'layers.UpSampling2D({size}, interpolation="{interpolation}")'
    check(after_conv((4, 5, 3), layer) if where == "conv" else layer_model((4, 5, 3), layer))


# =====================================================================================
# Embedding and recurrent layers
# =====================================================================================
@pytest.mark.parametrize("then", [
    pytest.param(None, id="output"),
    pytest.param("layers.Flatten()", id="flatten"),
    pytest.param("layers.GlobalAveragePooling1D()", id="gap1d"),
    pytest.param('layers.Conv1D(3, 3, padding="same")', id="conv1d"),
    pytest.param("layers.LSTM(3)", id="lstm"),
    pytest.param("layers.Dense(3)", id="dense"),
])
def test_embedding(check, then):
    body = ["out = layers.Embedding(20, 4)(inp)"] if then is None else [
        "x = layers.Embedding(20, 4)(inp)", f"out = {then}(x)"]
    check(one_input((6,), *body, dtype="int32"))


def test_variable_length_sequence_input(check):
    """``Input(shape=(None,))`` (keras.io's text classifier): the harness and ``--verify``
    draw a concrete length for the free axis (it raised a TypeError on ``None``)."""
    check(one_input((None,), "x = layers.Embedding(20, 4)(inp)",
                    'x = layers.Conv1D(5, 7, strides=3, activation="relu")(x)',
                    'x = layers.Conv1D(5, 7, strides=3, activation="relu")(x)',
                    "out = layers.GlobalMaxPooling1D()(x)", dtype="int64"))


@pytest.mark.parametrize("shape, layer", [
    pytest.param((None, 3), 'layers.Conv1D(4, 4, padding="same")', id="conv1d-even-kernel"),
    pytest.param((None, 3), 'layers.Conv1D(4, 3, dilation_rate=2, padding="same")', id="conv1d-dilated"),
    pytest.param((None, None, 3), 'layers.Conv2D(4, (2, 3), padding="same")', id="conv2d"),
])
def test_same_padding_on_a_free_axis(check, shape, layer):
    """Stride-1 'same' padding on an axis of unknown length (text of any length): its pads
    do not depend on the length (the torch selection pass divided None by the stride)."""
    check(layer_model(shape, layer))


def test_same_padding_with_strides_on_a_free_axis_is_refused():
    src = one_input((None, 3), 'x = layers.Conv1D(4, 3, strides=2, padding="same")(inp)',
                    "out = layers.GlobalMaxPooling1D()(x)")
    result = translate(src, "case.py")
    assert any("strides > 1 on an axis of unknown length" in d.message for d in result.stubs), result.stubs


@pytest.mark.parametrize("activation", [
    pytest.param("layers.LeakyReLU(negative_slope=0.1)", id="leaky_relu"),
    pytest.param("layers.ReLU(max_value=1.0, threshold=0.2)", id="relu-args"),
    pytest.param("layers.ELU(alpha=0.5)", id="elu"),
    pytest.param("layers.Softmax()", id="softmax"),
])
def test_activation_layer_object_as_activation(check, activation):
    """``Dense(..., activation=LeakyReLU(0.1))``: Keras calls the layer (it was refused, with
    the layer object's whole repr in the message)."""
    check(layer_model((6,), f"layers.Dense(4, activation={activation})"))


def test_activation_layer_with_weights_is_refused():
    src = layer_model((6,), "layers.Dense(4, activation=layers.PReLU())")
    (stub, *_) = translate(src, "case.py").stubs
    assert "activation=PReLU(...)" in stub.message and "LayerSpec" not in stub.message


def test_dict_of_outputs(check):
    """``keras.Model(inputs, {"z": ..., "a": ...})`` returns a dict: compared key by key with
    the torch tuple (``run_both`` crashed on the dict)."""
    check(source("inp = keras.Input(shape=(6,))", "h = layers.Dense(5)(inp)",
                 'return keras.Model(inp, {"z": layers.Dense(1, name="z")(h), "a": layers.Dense(3, name="a")(h)})'))


MASKED_RNN_FLAGS = grid("seq{rs:d}-state{rst:d}-back{gb:d}", rs=[False, True], rst=[False, True], gb=[False, True])
RNN_FLAGS = grid("seq{rs:d}-state{rst:d}-back{gb:d}", rs=[False, True], rst=[False, True], gb=[False, True])
N_STATES = {"SimpleRNN": 1, "LSTM": 2, "GRU": 1}


def unpacked(layer: str, n_outputs: int) -> str:
    """``layer`` applied to the input, its outputs unpacked into ``o0, o1, ...``."""
    names = [f"o{i}" for i in range(n_outputs)]
    if n_outputs == 1:
        return layer_model((5, 4), layer)
    return source("inp = keras.Input(shape=(5, 4))", f"{', '.join(names)} = {layer}(inp)",
                  f"return keras.Model(inp, [{', '.join(names)}])")


@pytest.mark.parametrize("rs, rst, gb", RNN_FLAGS)
@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
def test_rnn(check, cell, rs, rst, gb):
    # go_backwards: Keras returns the sequence in processing order (not re-reversed).
    layer = f"layers.{cell}(3, return_sequences={rs}, return_state={rst}, go_backwards={gb})"
    check(unpacked(layer, 1 + N_STATES[cell] * rst))


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_rnn_return_state_as_one_list(check, cell):
    check(one_input((5, 4), "x = layers.Dense(4)(inp)",
                    f"out = layers.{cell}(3, return_sequences=True, return_state=True)(x)"))
@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("rs", [False, True], ids=["last", "seq"])
def test_rnn_no_bias(check, cell, rs):
    check(layer_model((5, 4), f"layers.{cell}(3, use_bias=False, return_sequences={rs})"))


@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
def test_rnn_stacked(check, cell):
    check(one_input((5, 4), f"x = layers.{cell}(6, return_sequences=True)(inp)", f"out = layers.{cell}(3)(x)"))


@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("wrap", [False, True], ids=["plain", "bidirectional"])
def test_rnn_dropout_is_the_identity_at_inference(check, cell, wrap):
    layer = f"layers.{cell}(3, dropout=0.4, return_sequences=True)"
    check(layer_model((5, 4), f"layers.Bidirectional({layer})" if wrap else layer))


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
@pytest.mark.parametrize("wrap", [False, True], ids=["plain", "bidirectional"])
def test_rnn_dropout_in_training_drops_whole_input_features_of_a_sequence(cell, wrap):
    """Keras' RNN dropout=: one mask per sequence and input feature, the same at every step,
    scaled by 1 / (1 - rate). Each training output must be the inference output of the
    input times such a mask (found among all 2^features of them)."""
    layer = f"layers.{cell}(3, dropout=0.5, return_sequences=True)"
    kmodel, tmodel, graph = build_pair(layer_model((6, 3), f"layers.Bidirectional({layer})" if wrap else layer))
    x = np.random.RandomState(3).standard_normal((4, 6, 3)).astype("float32")
    torch.manual_seed(0)
    trained = run_training_mode(tmodel, graph, x)
    tmodel.eval()
    masks = [np.array(bits, np.float32) * 2.0 for bits in itertools.product([0, 1], repeat=3)]
    found = []
    for n in range(len(x)):
        with torch.no_grad():
            candidates = [tmodel(torch.from_numpy(x[n:n + 1] * mask)).numpy() for mask in masks]
        match = [i for i, c in enumerate(candidates) if np.abs(c - trained[n:n + 1]).max() <= 1e-5]
        assert match, n
        found.append(match[0])
    assert len(set(found)) > 1 or found[0] not in (0, len(masks) - 1)  # (a draw, not all kept or all dropped)


@pytest.mark.parametrize("rs", [False, True], ids=["last", "seq"])
@pytest.mark.parametrize("mode", ["concat", "sum", "mul", "ave", None])
@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
def test_bidirectional(check, cell, mode, rs):
    # return_sequences=False: the backward half is its state after reading x[:, 0].
    merge = "None" if mode is None else f'"{mode}"'
    layer = f"layers.Bidirectional(layers.{cell}(3, return_sequences={rs}), merge_mode={merge})"
    check(unpacked(layer, 2 if mode is None else 1))


@pytest.mark.parametrize("rs", [False, True], ids=["last", "seq"])
@pytest.mark.parametrize("mode", ["concat", "sum", None])
@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
def test_bidirectional_return_state(check, cell, mode, rs):
    merge = "None" if mode is None else f'"{mode}"'
    layer = (f"layers.Bidirectional(layers.{cell}(3, return_sequences={rs}, return_state=True), "
             f"merge_mode={merge})")
    check(unpacked(layer, (2 if mode is None else 1) + 2 * N_STATES[cell]))


@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
def test_bidirectional_no_bias(check, cell):
    check(layer_model((5, 4), f"layers.Bidirectional(layers.{cell}(3, use_bias=False))"))


def test_bidirectional_stacked_on_embedding(check):
    check(one_input((6,), "x = layers.Embedding(20, 4)(inp)",
                    "x = layers.Bidirectional(layers.LSTM(3, return_sequences=True))(x)",
                    "x = layers.Bidirectional(layers.GRU(2))(x)", "out = layers.Dense(2)(x)", dtype="int32"))


def test_conv1d_then_lstm(check):
    # channels-first Conv1D output goes back to (N, T, F) for the LSTM.
    check(one_input((8, 3), 'x = layers.Conv1D(4, 3, padding="same")(inp)', "x = layers.MaxPooling1D()(x)",
                    "out = layers.LSTM(3)(x)"))


# -------------------------------------------------------------------------------------
# Recurrent layers started from a given state (initial_state): Keras' seq2seq
# encoder-decoder; torch's states are (layers * directions, N, H), Keras' (N, H)
# -------------------------------------------------------------------------------------
def states_list(cell: str, prefix: str = "s") -> str:
    """The Python list of an RNN's state names: ``[s0, s1]`` (LSTM) or ``[s0]``."""
    return "[" + ", ".join(f"{prefix}{i}" for i in range(N_STATES[cell])) + "]"


def seq2seq(cell: str, decoder: str, state: str | None = None) -> str:
    """An encoder over ``enc`` (7, 5) returning its states, a decoder ``decoder`` called on
    ``dec`` (6, 4) with ``initial_state=`` them (``state``: how they are passed)."""
    names = states_list(cell)[1:-1]
    return source("enc = keras.Input(shape=(7, 5))", "dec = keras.Input(shape=(6, 4))",
                  f"_, {names} = layers.{cell}(3, return_state=True)(enc)",
                  f"y = {decoder}(dec, initial_state={state or states_list(cell)})",
                  "out = layers.Dense(2)(y)", "return keras.Model([enc, dec], out)")


@pytest.mark.parametrize("rs, rst, gb", RNN_FLAGS)
@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
def test_rnn_initial_state_from_encoder(check, cell, rs, rst, gb):
    checked = check(seq2seq(cell, f"layers.{cell}(3, return_sequences={rs}, go_backwards={gb})"))
    if rst:  # the decoder's own states as outputs too
        src = source("enc = keras.Input(shape=(7, 5))", "dec = keras.Input(shape=(6, 4))",
                     f"_, {states_list(cell)[1:-1]} = layers.{cell}(3, return_state=True)(enc)",
                     f"y, {states_list(cell, 'd')[1:-1]} = layers.{cell}(3, return_sequences={rs}, "
                     f"return_state=True, go_backwards={gb})(dec, initial_state={states_list(cell)})",
                     f"return keras.Model([enc, dec], [y, {states_list(cell, 'd')[1:-1]}])")
        checked = check(src)
    assert ".unsqueeze(0)" in forward_text(checked)


@pytest.mark.parametrize("state", ["h", "[h]", "(h,)"])
@pytest.mark.parametrize("cell", ["SimpleRNN", "GRU"])
def test_rnn_initial_state_one_tensor(check, cell, state):
    # GRU(...)(x, initial_state=h): a single state given bare or in a list
    check(source("enc = keras.Input(shape=(7, 5))", "dec = keras.Input(shape=(6, 4))",
                 f"_, h = layers.{cell}(3, return_state=True)(enc)",
                 f"out = layers.{cell}(3, return_sequences=True)(dec, initial_state={state})",
                 "return keras.Model([enc, dec], out)"))


@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
def test_rnn_initial_state_from_dense(check, cell):
    # a conditioning vector -> Dense -> the initial state(s)
    states = [f"layers.Dense(3, activation=\"tanh\")(cond)" for _ in range(N_STATES[cell])]
    check(source("cond = keras.Input(shape=(5,))", "seq = keras.Input(shape=(6, 4))",
                 f"out = layers.{cell}(3, return_sequences=True)(seq, initial_state=[{', '.join(states)}])",
                 "return keras.Model([cond, seq], out)"))


def test_rnn_initial_state_positional(check):
    # LSTM.call(sequences, initial_state, ...): the second positional argument
    src = seq2seq("LSTM", "layers.LSTM(3)").replace("(dec, initial_state=", "(dec, ")
    assert "initial_state" not in src
    check(src)


@pytest.mark.parametrize("rs, rst, gb", MASKED_RNN_FLAGS)
@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
def test_rnn_initial_state_masked(check, cell, rs, rst, gb):
    # Keras 3 passes a layer its input's mask only when the call has one tensor argument:
    # given initial_state, the RNN reads every step, padded or not (checked: keras 3.15)
    n = N_STATES[cell]
    outs = "[y" + "".join(f", d{i}" for i in range(n)) + "]" if rst else "y"
    checked = check(source("t = keras.Input(shape=(6,), dtype=\"int32\")", "cond = keras.Input(shape=(5,))",
                           f"s = [layers.Dense(3)(cond) for _ in range({n})]",
                           "x = layers.Embedding(4, 5, mask_zero=True)(t)",
                           f"{outs[1:-1] if rst else outs} = layers.{cell}(3, return_sequences={rs}, "
                           f"return_state={rst}, go_backwards={gb})(x, initial_state=s)",
                           f"return keras.Model([t, cond], {outs})"))
    assert "_keep" not in forward_text(checked)


def test_rnn_initial_state_in_sequence_printed():
    text = translate(seq2seq("LSTM", "layers.LSTM(3, return_sequences=True)"), "case.py").text
    assert "self.lstm2(dec, (s0.unsqueeze(0), s1.unsqueeze(0)))" in text, text
    text = translate(seq2seq("GRU", "layers.GRU(3, return_sequences=True)", "s0"), "case.py").text
    assert "self.gru2(dec, s0.unsqueeze(0))" in text, text


def test_rnn_initial_state_in_a_subclassed_model(check):
    """``self.dec(x, initial_state=[h, c])`` inside a subclassed model's call()."""
    check("import keras\nfrom keras import layers\n\n\nclass S2S(keras.Model):\n"
          "    def __init__(self):\n        super().__init__()\n"
          "        self.enc = layers.LSTM(6, return_state=True)\n"
          "        self.dec = layers.LSTM(6, return_sequences=True)\n        self.out = layers.Dense(3)\n\n"
          "    def call(self, inputs):\n        _, h, c = self.enc(inputs)\n"
          "        return self.out(self.dec(inputs, initial_state=[h, c]))\n\n\n"
          "def build_model():\n    m = S2S()\n    m(keras.Input(shape=(6, 4)))\n    return m\n")


def test_rnn_initial_state_golden_case_numbers(check):
    """Keras' character-level seq2seq (the golden case, time axes of unknown length)."""
    with open(os.path.join(os.path.dirname(__file__), "golden", "seq2seq_initial_state", "input.py"),
              encoding="utf-8") as fh:
        check(fh.read())


@pytest.mark.parametrize("call, why", [
    pytest.param("layers.Bidirectional(layers.LSTM(3))(dec, initial_state=[s0, s1, s0, s1])", "Bidirectional",
                 id="bidirectional"),
    pytest.param("layers.LSTM(3)(dec, initial_state=[s0])", "takes 2 state", id="lstm-one-state"),
], )
def test_rnn_initial_state_refused(call, why):
    src = source("enc = keras.Input(shape=(7, 5))", "dec = keras.Input(shape=(6, 4))",
                 "_, s0, s1 = layers.LSTM(3, return_state=True)(enc)", f"out = {call}",
                 "return keras.Model([enc, dec], out)")
    result = translate(src, "case.py")
    assert not result.program.models
    assert any(d.severity == "stub" and why in d.message and "initial_state" in d.message
               for d in result.diagnostics), [d.message for d in result.diagnostics]


def test_rnn_initial_state_read_back_from_the_same_layer_refused():
    # a decoding loop feeding a layer its own state: stays a reported stub
    src = source("dec = keras.Input(shape=(6, 4))", "rnn = layers.LSTM(3, return_state=True)",
                 "y, h, c = rnn(dec)", "y, h, c = rnn(dec, initial_state=[h, c])", "out = y",
                 "return keras.Model(dec, out)")
    result = translate(src, "case.py")
    assert not result.program.models
    assert any(d.severity == "stub" and "same layer" in d.message for d in result.diagnostics), \
        [d.message for d in result.diagnostics]


# =====================================================================================
# Layers with no faithful torch equivalent are refused, never mistranslated
# =====================================================================================
@pytest.mark.parametrize("shape, layer, dtype", [
    pytest.param((1,), "layers.TextVectorization(max_tokens=20)", "string", id="text-vectorization"),
    pytest.param((5, 6, 3), 'layers.Resizing(4, 4, interpolation="bicubic")', None, id="resizing-bicubic"),
    pytest.param((5, 8), "layers.MultiHeadAttention(2, 4, attention_axes=(1,))", None, id="mha-attention_axes"),
    pytest.param((5, 4), "layers.GRU(3, reset_after=False)", None, id="gru-reset_after-False"),
    pytest.param((5, 4), 'layers.Bidirectional(layers.LSTM(3, activation="relu"))', None,
                 id="bidirectional-lstm-relu"),  # (LSTM(relu) alone: tests/test_lstm_activations.py)
    pytest.param((5, 4), 'layers.SimpleRNN(3, activation="relu")', None, id="simplernn-relu"),
    pytest.param((5, 4), 'layers.GRU(3, recurrent_activation="hard_sigmoid")', None, id="gru-hard_sigmoid"),
    pytest.param((4, 5, 3), 'layers.UpSampling2D(interpolation="bicubic")', None, id="upsampling-bicubic"),
    pytest.param((5, 6, 3), "layers.LayerNormalization(rms_scaling=True)", None, id="layernorm-rms_scaling"),
])
def test_refused(shape, layer, dtype):
    result = translate(layer_model(shape, layer, dtype=dtype), "case.py")
    assert not result.program.models
    assert any(d.severity == "stub" for d in result.diagnostics)


# =====================================================================================
# Attention
# =====================================================================================
def inputs_model(shapes: dict, out: str, dtypes: dict | None = None) -> str:
    """A model over named inputs ``shapes`` ({name: shape}) returning the expression ``out``."""
    dtypes = dtypes or {}
    lines = [f"{n} = keras.Input(shape={s!r}{', dtype=' + repr(dtypes[n]) if n in dtypes else ''})"
             for n, s in shapes.items()]
    names = list(shapes)
    model_in = names[0] if len(names) == 1 else f"[{', '.join(names)}]"
    return source(*lines, f"out = {out}", f"return keras.Model({model_in}, out)")


MHA_CASES = [
    # nn.MultiheadAttention: heads x key_dim = the query's features, values of key_dim
    pytest.param({"q": (5, 8)}, "MultiHeadAttention(2, 4)", "q, q", id="self"),
    pytest.param({"q": (5, 8)}, "MultiHeadAttention(2, 4, use_bias=False)", "q, q", id="self-nobias"),
    pytest.param({"q": (5, 8)}, "MultiHeadAttention(4, 2, dropout=0.3)", "q, q", id="self-dropout"),
    pytest.param({"q": (5, 8), "v": (7, 6)}, "MultiHeadAttention(2, 4)", "q, v", id="cross-vdim"),
    pytest.param({"q": (5, 8), "v": (7, 6), "k": (7, 3)}, "MultiHeadAttention(2, 4)", "q, v, key=k", id="cross-kdim-vdim"),
    pytest.param({"q": (5, 8), "v": (7, 8)}, "MultiHeadAttention(2, 4)", "q, v, v", id="key-is-value"),
    pytest.param({"q": (5, 8)}, "MultiHeadAttention(2, 4)", "q, q, use_causal_mask=True", id="self-causal"),
    pytest.param({"q": (5, 8), "v": (7, 6)}, "MultiHeadAttention(2, 4)", "q, v, use_causal_mask=True",
                 id="cross-causal-T<S"),
    # projections + scaled_dot_product_attention
    pytest.param({"q": (5, 8)}, "MultiHeadAttention(3, 2)", "q, q", id="func-key_dim"),
    pytest.param({"q": (5, 8), "v": (7, 6)}, "MultiHeadAttention(3, 2, value_dim=5, output_shape=7)", "q, v",
                 id="func-value_dim-output_shape"),
    pytest.param({"q": (5, 8), "v": (7, 6), "k": (7, 3)},
                 "MultiHeadAttention(2, 3, value_dim=4, use_bias=False)", "q, v, k", id="func-key-nobias"),
    pytest.param({"q": (5, 8)}, "MultiHeadAttention(2, 4, output_shape=(6,))", "q, q", id="func-output_shape-tuple"),
    pytest.param({"q": (6, 8), "v": (4, 6)}, "MultiHeadAttention(3, 2)", "q, v, use_causal_mask=True",
                 id="func-causal-T>S"),
    pytest.param({"q": (5, 8), "v": (7, 6)}, "MultiHeadAttention(2, 3, dropout=0.5)", "query=q, value=v",
                 id="func-dropout-keywords"),
]


@pytest.mark.parametrize("shapes, layer, args", MHA_CASES)
def test_multi_head_attention(check, shapes, layer, args):
    check(inputs_model(shapes, f"layers.{layer}({args})"))


@pytest.mark.parametrize("layer", ["MultiHeadAttention(2, 4)", "MultiHeadAttention(3, 2, value_dim=5)"],
                         ids=["nn", "func"])
@pytest.mark.parametrize("causal", [False, True], ids=["mask", "mask-causal"])
def test_multi_head_attention_attention_mask(check, layer, causal):
    # an int (N, T, S) mask input: nonzero = attend (random ints in [0, 10): some zeros)
    check(inputs_model({"q": (5, 8), "v": (7, 6), "m": (5, 7)},
                       f"layers.{layer}(q, v, attention_mask=m, use_causal_mask={causal})", {"m": "int32"}))


def test_multi_head_attention_shared_layer(check):
    # one layer called twice: one set of weights, two calls
    check(source("a = keras.Input(shape=(5, 8))", "b = keras.Input(shape=(5, 8))",
                 "mha = layers.MultiHeadAttention(2, 4)", "x = mha(a, b)", "out = mha(x, a)",
                 "return keras.Model([a, b], out)"))


def test_transformer_encoder_block(check):
    check(source("inp = keras.Input(shape=(6, 8))",
                 "x = layers.MultiHeadAttention(num_heads=2, key_dim=4, dropout=0.1)(inp, inp)",
                 "x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([inp, x]))",
                 'f = layers.Dense(16, activation="relu")(x)', "f = layers.Dense(8)(f)",
                 "out = layers.LayerNormalization(epsilon=1e-6)(x + f)", "return keras.Model(inp, out)"))


ATTENTION_CASES = [
    pytest.param("Attention()", id="dot"),
    pytest.param("Attention(use_scale=True)", id="dot-scale"),
    pytest.param('Attention(score_mode="concat")', id="concat"),
    pytest.param('Attention(use_scale=True, score_mode="concat", dropout=0.2)', id="concat-scale-dropout"),
    pytest.param("AdditiveAttention()", id="additive"),
    pytest.param("AdditiveAttention(use_scale=False)", id="additive-noscale"),
]


@pytest.mark.parametrize("with_key", [False, True], ids=["qv", "qvk"])
@pytest.mark.parametrize("causal", [False, True], ids=["plain", "causal"])
@pytest.mark.parametrize("layer", ATTENTION_CASES)
def test_attention(check, layer, with_key, causal):
    inputs = "[q, v, k]" if with_key else "[q, v]"
    check(inputs_model({"q": (5, 4), "v": (7, 4), "k": (7, 4)} if with_key else {"q": (5, 4), "v": (7, 4)},
                       f"layers.{layer}({inputs}, use_causal_mask={causal})"))


# =====================================================================================
# Embedding(mask_zero=True): the mask reaches the layers that read it
# =====================================================================================
def tokens_model(*body: str, seq: int = 6) -> str:
    """``t``: int token ids (a small vocabulary: many zeros, i.e. padding), then ``body``."""
    return source(f"t = keras.Input(shape=({seq},), dtype=\"int32\")", *body, "return keras.Model(t, out)")


#: padding at the end, in the middle, at the start, everywhere (a fully padded sequence)
PADDED_TOKENS = np.array([[3, 1, 2, 0, 0, 0], [0, 2, 0, 3, 1, 0], [0, 0, 0, 0, 0, 0], [1, 2, 3, 1, 2, 3]],
                         dtype="int32")


def check_tokens(src: str, tokens: np.ndarray = PADDED_TOKENS) -> float:
    """Max |keras - torch| over every output on ``tokens``."""
    kmodel, tmodel, graph = build_pair(src)
    k_out = kmodel(tokens, training=False)
    k_out = k_out if isinstance(k_out, (list, tuple)) else [k_out]
    tmodel.eval()
    with torch.no_grad():
        t_out = tmodel(torch.from_numpy(tokens))
    t_out = t_out if isinstance(t_out, (list, tuple)) else [t_out]
    errors = []
    for k, t, lay in zip(k_out, t_out, verify.output_layouts(graph)):
        k = np.asarray(k)
        t = verify.to_source_layout(t.numpy(), lay)
        assert k.shape == t.shape and not np.isnan(t).any()
        errors.append(float(np.abs(k - t).max()))
    return max(errors)


def check_padded(check, src: str, tokens: np.ndarray = PADDED_TOKENS) -> None:
    """The usual random-token check, then the hand-made padding patterns of ``tokens``."""
    check(src)
    err = check_tokens(src, tokens)
    assert err <= TOL, f"max abs error {err:.3g} on padded tokens"



@pytest.mark.parametrize("rs, rst, gb", MASKED_RNN_FLAGS)
@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
def test_masked_rnn(check, cell, rs, rst, gb):
    # Keras skips padded steps: the state is carried over, the output repeated
    layer = f"layers.{cell}(3, return_sequences={rs}, return_state={rst}, go_backwards={gb})"
    names = ["o0"] + [f"o{i + 1}" for i in range(N_STATES[cell] * rst)]
    body = ["x = layers.Embedding(4, 5, mask_zero=True)(t)", f"{', '.join(names)} = {layer}(x)",
            f"out = [{', '.join(names)}]" if rst else "out = o0"]
    src = tokens_model(*body)
    check_padded(check, src)


@pytest.mark.parametrize("between", [
    pytest.param('layers.Dense(4, activation="tanh")', id="dense"),
    pytest.param("layers.Dropout(0.5)", id="dropout"),
    pytest.param("layers.LayerNormalization()", id="layer-norm"),
    pytest.param("layers.LSTM(4, return_sequences=True)", id="lstm-sequences"),
])
def test_mask_passes_through(check, between):
    src = tokens_model("x = layers.Embedding(4, 5, mask_zero=True)(t)", f"x = {between}(x)", "out = layers.GRU(3)(x)")
    check_padded(check, src)


def test_masked_global_average_pooling1d(check):
    # a fully padded sequence gives 0 / 0 in both frameworks: check_tokens leaves that row out
    src = tokens_model("x = layers.Embedding(4, 5, mask_zero=True)(t)", "out = layers.GlobalAveragePooling1D()(x)")
    check_padded(check, src, PADDED_TOKENS[[0, 1, 3]])


@pytest.mark.parametrize("layer", ["MultiHeadAttention(2, 4)", "MultiHeadAttention(2, 3)"], ids=["heads-split", "func"])
@pytest.mark.parametrize("causal", [False, True], ids=["padding", "padding-causal"])
def test_masked_multi_head_attention(check, layer, causal):
    # query and value masks: a padded query step or a fully padded sequence attends uniformly
    src = tokens_model("x = layers.Embedding(4, 8, mask_zero=True)(t)",
                       f"out = layers.{layer}(x, x, use_causal_mask={causal})")
    check_padded(check, src)


def test_masked_cross_attention_key_mask(check):
    src = source("t = keras.Input(shape=(6,), dtype=\"int32\")", "u = keras.Input(shape=(4, 6))",
                 "x = layers.Embedding(4, 6, mask_zero=True)(t)",
                 "out = layers.MultiHeadAttention(2, 3)(u, x, key=x)", "return keras.Model([t, u], out)")
    check(src)


@pytest.mark.parametrize("layer", ["Attention()", 'Attention(use_scale=True, score_mode="concat")',
                                   "AdditiveAttention()"])
def test_masked_attention(check, layer):
    # value mask: padded steps get -1e9; query mask: a padded query step outputs 0
    src = tokens_model("x = layers.Embedding(4, 5, mask_zero=True)(t)", f"out = layers.{layer}([x, x])")
    check_padded(check, src, PADDED_TOKENS[[0, 1, 3]])


@pytest.mark.parametrize("then", [
    pytest.param("layers.Bidirectional(layers.LSTM(3))", id="bidirectional"),
    pytest.param("layers.Softmax()", id="softmax"),
])
def test_mask_reader_not_translated_is_refused(then):
    # never computed without its mask: a reported stub
    src = tokens_model("x = layers.Embedding(4, 6, mask_zero=True)(t)", f"out = {then}(x)")
    result = translate(src, "case.py")
    assert not result.program.models or "NotImplementedError" in result.text
    assert any("mask" in d.message for d in result.program.diagnostics)


def test_mask_dropped_where_keras_drops_it(check):
    # Conv1D does not support masking: Keras drops the mask, the LSTM after it reads every step
    check(tokens_model("x = layers.Embedding(4, 5, mask_zero=True)(t)", 'x = layers.Conv1D(4, 3, padding="same")(x)',
                       "out = layers.LSTM(3)(x)"))


# =====================================================================================
# Normalisation and preprocessing
# =====================================================================================
@pytest.mark.parametrize("shape, layer, where", [
    pytest.param((5, 3), "Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 0.5])", "input", id="per-feature"),
    pytest.param((5, 3), "Normalization(axis=None, mean=2.0, variance=3.0)", "input", id="scalar"),
    pytest.param((5, 3), "Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 0.5], invert=True)", "input",
                 id="invert"),
    pytest.param((5, 3), "Normalization(axis=1, mean=[1, 2, 3, 4, 5], variance=[1, 2, 3, 4, 5])", "input",
                 id="axis1"),
    pytest.param((5, 6, 3), "Normalization(mean=[0.5, -1.0, 2.0, 0.0], variance=[2.0, 0.5, 1.0, 3.0])", "conv",
                 id="conv-channels"),
    pytest.param((5, 6, 3), "Normalization(axis=(1, 3), mean=[[0.1 * i - j for j in range(4)] for i in range(5)], "
                            "variance=[[1.0 + 0.2 * i + j for j in range(4)] for i in range(5)])", "conv",
                 id="conv-axis13"),
    pytest.param((5, 6, 3), "Normalization(axis=(1, 3), mean=[1.0, -2.0, 0.5, 3.0], variance=[1.0, 2.0, 3.0, 0.5])",
                 "conv", id="conv-axis13-stats-on-last"),
    pytest.param((5, 6, 3), "Normalization(mean=0.5, variance=2.0)", "conv", id="conv-scalar-stats"),
])
def test_normalization_given_statistics(check, shape, layer, where):
    layer = f"layers.{layer}"
    check(after_conv(shape, layer) if where == "conv" else layer_model(shape, layer))


@pytest.mark.parametrize("shape, axis, where", [
    pytest.param((5, 3), -1, "input", id="per-feature"),
    pytest.param((5, 3), None, "input", id="scalar"),
    pytest.param((5, 6, 3), -1, "conv", id="conv-channels"),
    pytest.param((5, 6, 3), (1, 2), "conv", id="conv-axis12-permuted"),
])
def test_normalization_adapted(check, shape, axis, where):
    # adapt() statistics are Keras weights (mean, variance, count): torch buffers
    layer = f"layers.Normalization(axis={axis})"
    check(after_conv(shape, layer) if where == "conv" else layer_model(shape, layer))


def test_normalization_adapt_is_reported():
    src = ("import keras\nimport numpy as np\nfrom keras import layers\n\n\ndef build_model():\n"
           "    norm = layers.Normalization()\n    norm.adapt(np.ones((4, 3), dtype=\"float32\"))\n"
           "    inp = keras.Input(shape=(3,))\n    return keras.Model(inp, layers.Dense(2)(norm(inp)))\n")
    result = translate(src, "case.py")
    assert any("adapt()" in d.message for d in result.program.diagnostics)
    assert 'register_buffer("normalization_mean"' in result.text or "_mean" in result.text


@pytest.mark.parametrize("shape, layer, where", [
    pytest.param((5, 6), "RMSNormalization()", "input", id="last"),
    pytest.param((5, 6), "RMSNormalization(epsilon=0.1)", "input", id="eps0.1"),
    pytest.param((5, 6), "RMSNormalization(axis=[1, 2])", "input", id="axis12"),
    pytest.param((5, 6, 3), "RMSNormalization()", "conv", id="conv"),
])
def test_rms_normalization(check, shape, layer, where):
    layer = f"layers.{layer}"
    check(after_conv(shape, layer) if where == "conv" else one_input(shape, "x = layers.Rescaling(0.05)(inp)",
                                                                     f"out = {layer}(x)"))


@pytest.mark.parametrize("shape, layer, where", [
    pytest.param((6,), "GroupNormalization(3)", "input", id="2d"),
    pytest.param((5, 6), "GroupNormalization(2, epsilon=0.1)", "input", id="3d"),
    pytest.param((5, 6, 3), "GroupNormalization(2)", "conv", id="conv"),
    pytest.param((5, 6, 3), "GroupNormalization(-1)", "conv", id="conv-instance"),
    pytest.param((5, 6, 3), "GroupNormalization(1, center=False)", "conv", id="conv-layer-nocenter"),
    pytest.param((5, 6, 3), "GroupNormalization(2, scale=False)", "conv", id="conv-noscale"),
    pytest.param((5, 6, 3), "GroupNormalization(2, center=False, scale=False)", "conv", id="conv-noaffine"),
])
def test_group_normalization(check, shape, layer, where):
    layer = f"layers.{layer}"
    check(after_conv(shape, layer) if where == "conv" else layer_model(shape, layer))


@pytest.mark.parametrize("layer", [
    "RandomFlip()", 'RandomFlip("horizontal")', "RandomRotation(0.2)", "RandomZoom(0.1)",
    "RandomTranslation(0.1, 0.2)", "RandomContrast(0.3)", "GaussianNoise(0.5)", "GaussianDropout(0.3)"])
def test_random_augmentation_is_identity_at_inference(check, layer):
    check(one_input((7, 6, 3), f"x = layers.{layer}(inp)", 'out = layers.Conv2D(2, 3)(x)'))


def run_training_mode(tmodel, graph, x: np.ndarray) -> np.ndarray:
    """The torch model in training mode on channels-last ``x``, the result channels-last."""
    tmodel.train()
    with torch.no_grad():
        y = tmodel(torch.from_numpy(verify.to_target_layout(x, graph.inputs[0].layout)))
    return verify.to_source_layout(y.numpy(), graph.outputs[0].layout)


@pytest.mark.parametrize("mode, flipped", [("horizontal", (2,)), ("vertical", (1,)),
                                           ("horizontal_and_vertical", (1, 2))])
@pytest.mark.parametrize("where", ["input", "conv"])
def test_random_flip_training(mode, flipped, where):
    """In training each image is left alone or flipped (both axes with one draw for
    horizontal_and_vertical), as Keras does; over 64 images both happen."""
    layer = f'layers.RandomFlip("{mode}")'
    # after a 1x1 conv with identity weights the flip runs on a channels-first map
    src = layer_model((5, 4, 3), layer) if where == "input" else one_input(
        (5, 4, 3), 'x = layers.Conv2D(3, 1, use_bias=False)(inp)',
        f"out = {layer}(x)")
    kmodel, tmodel, graph = build_pair(src)
    if where == "conv":
        tmodel.conv1.weight.data = torch.eye(3).view(3, 3, 1, 1)
        kmodel.layers[1].kernel.assign(np.eye(3, dtype="float32").reshape(1, 1, 3, 3))
    x = np.random.RandomState(0).standard_normal((64, 5, 4, 3)).astype("float32")
    y = run_training_mode(tmodel, graph, x)
    same = np.all(y == x, axis=(1, 2, 3))
    flip = np.all(y == np.flip(x, flipped), axis=(1, 2, 3))
    assert (same | flip).all() and 0 < flip.sum() < 64
    k = np.asarray(kmodel(x, training=True))
    k_flip = np.all(k == np.flip(x, flipped), axis=(1, 2, 3))
    assert 0 < k_flip.sum() < 64  # Keras draws the same way


@pytest.mark.parametrize("layer, mean, std", [
    pytest.param("layers.GaussianNoise(0.5)", 0.0, 0.5, id="noise"),
    pytest.param("layers.GaussianDropout(0.2)", 1.0, 0.5, id="dropout"),  # sqrt(0.2 / 0.8)
])
def test_gaussian_noise_layers_in_training(layer, mean, std):
    """GaussianNoise adds N(0, stddev) noise, GaussianDropout multiplies by N(1, sqrt(rate /
    (1 - rate))), in training only (both were refused): the torch draws have Keras'
    distribution on a feature map (a channels-first one after the conv)."""
    src = one_input((6, 5, 3), 'x = layers.Conv2D(3, 1, use_bias=False)(inp)', f"out = {layer}(x)")
    kmodel, tmodel, graph = build_pair(src)
    tmodel.conv1.weight.data = torch.eye(3).view(3, 3, 1, 1)
    kmodel.layers[1].kernel.assign(np.eye(3, dtype="float32").reshape(1, 1, 3, 3))
    x = np.random.RandomState(0).uniform(1.0, 2.0, size=(200, 6, 5, 3)).astype("float32")
    y = run_training_mode(tmodel, graph, x)
    k = np.asarray(kmodel(x, training=True))
    for out in (y, k):
        noise = out - x if mean == 0.0 else out / x
        assert abs(noise.mean() - mean) < 0.02 and abs(noise.std() - std) < 0.02, (noise.mean(), noise.std())
    assert not np.allclose(y, k)


def test_random_contrast_training():
    """Per image: (x - mean) * f + mean, clipped, f uniform in [1 - lower, 1 + upper] with
    Keras' bounds (RandomContrast(0.3): f in [1.0, 1.3])."""
    _, tmodel, graph = build_pair(layer_model((5, 4, 3), "layers.RandomContrast(0.3)"))
    x = (np.random.RandomState(0).uniform(size=(64, 5, 4, 3)) * 200).astype("float32")
    y = run_training_mode(tmodel, graph, x)
    mean = x.mean(axis=(1, 2), keepdims=True)
    f = (y - mean) / (x - mean)
    unclipped = (y > 0) & (y < 255) & (np.abs(x - mean) > 1.0)
    factors = []
    for i in range(64):
        fi = f[i][unclipped[i]]
        assert np.allclose(fi, fi[0], atol=1e-3)
        factors.append(fi[0])
    assert 1.0 - 1e-4 <= min(factors) and max(factors) <= 1.3 + 1e-4 and max(factors) - min(factors) > 0.1


# (RandomRotation, RandomZoom, RandomTranslation in training: tests/test_random_geometric_augmentation.py)


@pytest.mark.parametrize("size, mode", grid("{size[0]}x{size[1]}-{mode}", size=[(8, 9), (3, 2), (5, 3)],
                                            mode=["bilinear", "nearest"]))
@pytest.mark.parametrize("where", ["input", "conv"])
def test_resizing(check, size, mode, where):
    layer = f'layers.Resizing({size[0]}, {size[1]}, interpolation="{mode}")'
    check(after_conv((5, 6, 3), layer) if where == "conv" else layer_model((5, 6, 3), layer))


@pytest.mark.parametrize("size", [(4, 3), (7, 6), (2, 5)])
@pytest.mark.parametrize("where", ["input", "conv"])
def test_center_crop(check, size, where):
    layer = f"layers.CenterCrop({size[0]}, {size[1]})"
    check(after_conv((7, 6, 3), layer) if where == "conv" else layer_model((7, 6, 3), layer))


@pytest.mark.parametrize("where", ["input", "conv"])
def test_random_crop_where_the_sizes_agree_is_the_identity(check, where):
    layer = "layers.RandomCrop(7, 6)"
    check(after_conv((7, 6, 3), layer) if where == "conv" else layer_model((7, 6, 3), layer))


@pytest.mark.parametrize("shape, size", [((5, 4, 3), (7, 6)), ((9, 4, 3), (6, 6)), ((4, 9, 3), (7, 5))])
@pytest.mark.parametrize("where", ["input", "conv"])
def test_random_crop_training_without_room_matches_keras(shape, size, where):
    """An image not larger than the target on some axis: Keras' training path is the
    target-sized slice at its centred offsets, resized; no random draw."""
    layer = f"layers.RandomCrop({size[0]}, {size[1]})"
    src = after_conv(shape, layer) if where == "conv" else layer_model(shape, layer)
    kmodel, tmodel, graph = build_pair(src)
    x = np.random.RandomState(0).standard_normal((3, *shape)).astype("float32")
    expected = np.asarray(kmodel(x, training=True))
    got = run_training_mode(tmodel, graph, x)
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() <= TOL


def test_random_crop_training_takes_one_window_of_the_image_per_batch():
    kmodel, tmodel, graph = build_pair(layer_model((9, 8, 2), "layers.RandomCrop(5, 4)"))
    x = np.random.RandomState(1).standard_normal((3, 9, 8, 2)).astype("float32")
    torch.manual_seed(0)
    seen = set()
    for _ in range(12):
        got = run_training_mode(tmodel, graph, x)
        windows = [(i, j) for i in range(5) for j in range(5)
                   if np.array_equal(got, x[:, i:i + 5, j:j + 4, :])]
        assert len(windows) == 1, windows
        seen.add(windows[0])
    assert len(seen) > 1  # (a random offset, not a fixed one)


@pytest.mark.parametrize("shape, size", [((9, 8, 3), (5, 4)), ((6, 9, 3), (6, 5)), ((5, 4, 3), (7, 6))])
def test_random_crop_inference_is_keras_smart_resize(shape, size):
    """At inference Keras documents the centred window of the target's aspect ratio resized to
    the target: keras.preprocessing.image.smart_resize (Keras 3 itself passes the image
    through uncropped, not the shape it declares)."""
    kmodel, tmodel, graph = build_pair(layer_model(shape, f"layers.RandomCrop({size[0]}, {size[1]})"))
    x = np.random.RandomState(2).standard_normal((3, *shape)).astype("float32")
    expected = np.asarray(keras.preprocessing.image.smart_resize(x, size))
    tmodel.eval()
    with torch.no_grad():
        y = tmodel(torch.from_numpy(verify.to_target_layout(x, graph.inputs[0].layout)))
    got = verify.to_source_layout(y.numpy(), graph.outputs[0].layout)
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() <= TOL


def test_masked_sequential(check):
    # a Sequential model carries the mask from layer to layer like a Functional one
    src = ("import keras\nfrom keras import layers\n\n\ndef build_model():\n"
           "    return keras.Sequential([keras.Input(shape=(6,), dtype=\"int32\"), "
           "layers.Embedding(4, 5, mask_zero=True), layers.Dense(4), layers.SimpleRNN(3)])\n")
    check_padded(check, src)


def test_masked_model_output_is_reported():
    # Keras leaves padded steps out of fit()'s loss when the output carries the mask
    result = translate(tokens_model("x = layers.Embedding(4, 5, mask_zero=True)(t)",
                                    "out = layers.LSTM(3, return_sequences=True)(x)"), "case.py")
    assert any("carries Keras' mask" in d.message for d in result.program.diagnostics)


def test_explicit_mask_argument_is_refused():
    result = translate(source("t = keras.Input(shape=(6, 4))", "m = keras.Input(shape=(6,), dtype=\"bool\")",
                              "out = layers.LSTM(3)(t, mask=m)", "return keras.Model([t, m], out)"), "case.py")
    assert any(d.severity == "stub" and "mask=" in d.message for d in result.diagnostics)


def test_masked_attention_inside_a_custom_layer(check):
    """Inside call(), MultiHeadAttention unsets the masks of the tensors it reads (Keras
    3.15): the second attention sees the query mask of the first one's output only."""
    src = ("import keras\nfrom keras import layers\n\n\nclass Block(layers.Layer):\n"
           "    def __init__(self, **kwargs):\n        super().__init__(**kwargs)\n"
           "        self.att = layers.MultiHeadAttention(num_heads=2, key_dim=4)\n"
           "        self.cross = layers.MultiHeadAttention(num_heads=3, key_dim=5)\n\n"
           "    def call(self, x):\n        y = self.att(x, x, use_causal_mask=True)\n"
           "        return self.cross(y, x)\n\n\n"
           "def build_model():\n    t = keras.Input(shape=(6,), dtype=\"int32\")\n"
           "    x = layers.Embedding(4, 8, mask_zero=True)(t)\n"
           "    return keras.Model(t, layers.GlobalAveragePooling1D()(Block()(x)))\n")
    check_padded(check, src, PADDED_TOKENS[[0, 1, 3]])


# =====================================================================================
# Tensor math: keras.ops in a Functional build, tf.* in a layer's call(), Python operators
# (the layout pass rewrites their axes for channels-first tensors, or permutes back)
# =====================================================================================
CONV = 'x = layers.Conv2D(4, 3, padding="same")(inp)'


def on_conv(*body: str) -> str:
    """``body`` on ``x``, a conv's (N, 5, 6, 4) output (channels-first in torch); sets ``out``."""
    return one_input((5, 6, 3), CONV, *body)


@pytest.mark.parametrize("fn", ["mean", "sum", "max", "min"])
@pytest.mark.parametrize("axis", [-1, 1, 2, (1, 2), (1, 2, 3), (2, -1)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True], ids=["drop", "keep"])
def test_reductions_on_feature_map(check, fn, axis, keepdims):
    check(on_conv(f"out = keras.ops.{fn}(x, axis={axis!r}, keepdims={keepdims})"))


@pytest.mark.parametrize("fn", ["mean", "max"])
@pytest.mark.parametrize("axis", [1, -1])
def test_reduction_then_conv1d(check, fn, axis):
    # (N, H, W, C) reduced over H or C: what is left feeds a Conv1D (channels-first again)
    check(on_conv(f"y = keras.ops.{fn}(x, axis={axis})", 'out = layers.Conv1D(2, 3, padding="same")(y)'))


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [1, -1])
def test_argmax(check, fn, axis):
    check(on_conv(f'out = keras.ops.cast(keras.ops.{fn}(x, axis={axis}), "float32")'))


@pytest.mark.parametrize("axis", [1, 2, 3, -1])
def test_expand_dims_on_feature_map(check, axis):
    check(on_conv(f"out = keras.ops.expand_dims(x, {axis})"))


@pytest.mark.parametrize("index", [
    ":, 1:4, ::2", "..., :2", ":, 0", ":, :, 2, None", ":, -1, 1:, 3", ":, None", "..., None", ":, 1::2, :, 1:3",
    ":, :, :", ":, 1:3, :, :", ":, :, 1:3, :", ":, 1:3, :",
])
def test_subscript_feature_map(check, index):
    check(on_conv(f"out = x[{index}]"))


@pytest.mark.parametrize("index", [":, 0", ":, -1, :", ":, 1:, 2:", "..., ::2", ":, :3, None"])
def test_subscript_sequence(check, index):
    check(one_input((5, 4), "x = layers.Dense(6)(inp)", f"out = x[{index}]"))
    check(one_input((5, 4), 'x = layers.Conv1D(6, 3, padding="same")(inp)', f"out = x[{index}]"))


def test_expand_dims_then_conv3d(check):
    # a new spatial axis keeps the data channels-first into Conv3D: no permute at all
    checked = check(on_conv("y = keras.ops.expand_dims(x, 1)", "out = layers.Conv3D(2, (1, 3, 3))(y)"))
    assert_no_runtime_permute(checked)


@pytest.mark.parametrize("body", [
    pytest.param(('x = layers.Conv2D(1, 3, padding="same")(inp)', "out = keras.ops.squeeze(x, -1)"), id="channel"),
    pytest.param(('x = layers.Conv2D(4, (5, 3))(inp)', "out = keras.ops.squeeze(x, axis=1)"), id="height"),
    pytest.param(('x = layers.Conv2D(4, (5, 3))(inp)', "out = keras.ops.squeeze(x)"), id="all"),
])
def test_squeeze(check, body):
    check(one_input((5, 6, 3), *body))


@pytest.mark.parametrize("axis", [1, 3, -1])
def test_stack_feature_maps(check, axis):
    check(one_input((5, 6, 3), 'a = layers.Conv2D(4, 3, padding="same")(inp)', "b = layers.Conv2D(4, 1)(inp)",
                    f"out = keras.ops.stack([a, b], axis={axis})"))


@pytest.mark.parametrize("spec, axis", [(2, -1), ([1], -1), ([1, 3], 3), (5, 1), ([2, 4], 2)], ids=str)
def test_split_feature_map(check, spec, axis):
    check(on_conv(f"out = keras.ops.split(x, {spec!r}, axis={axis})"))


@pytest.mark.parametrize("indices, axis", [([0, 2], -1), (1, -1), ([3, 0], 1), (-1, 2)], ids=str)
def test_take(check, indices, axis):
    check(on_conv(f"out = keras.ops.take(x, {indices!r}, axis={axis})"))


@pytest.mark.parametrize("target, then", [
    pytest.param((-1, 30, 4), "", id="merge-spatial"),
    pytest.param((-1, 30, 4), 'layers.Conv1D(3, 3, padding="same")', id="merge-spatial-conv1d"),
    pytest.param((-1, 5, 3, 2, 4), "", id="split-spatial"),
    pytest.param((-1, 4, 30), "", id="channels-moved"),
    pytest.param((-1, 120), "layers.Dense(3)", id="flat-dense"),
    pytest.param((-1, 5, 24), "", id="mix-channel-spatial"),
])
def test_ops_reshape_on_feature_map(check, target, then):
    body = [f"y = keras.ops.reshape(x, {target!r})", f"out = {then}(y)" if then else "out = y"]
    check(on_conv(*body))


def test_reshape_keeping_channels_needs_no_permute(check):
    checked = check(on_conv("y = keras.ops.reshape(x, (-1, 30, 4))", 'out = layers.Conv1D(3, 3)(y)'))
    assert_no_runtime_permute(checked)


@pytest.mark.parametrize("perm", [(0, 3, 1, 2), (0, 2, 1, 3), (0, 1, 3, 2)], ids=str)
def test_ops_transpose_on_feature_map(check, perm):
    check(on_conv(f"out = keras.ops.transpose(x, {perm!r})"))


@pytest.mark.parametrize("expr", [
    pytest.param("keras.ops.matmul(a, keras.ops.transpose(b, (0, 2, 1)))", id="ops-matmul"),
    pytest.param("a @ keras.ops.transpose(b, (0, 2, 1))", id="operator"),
    pytest.param("keras.ops.transpose(a, (0, 2, 1)) @ b", id="gram"),
])
def test_matmul(check, expr):
    check(one_input((5, 4), "a = layers.Dense(3)(inp)", "b = layers.Dense(3)(inp)", f"out = {expr}"))


def test_matmul_of_feature_maps(check):
    # (N, H*W, C) attention-style scores from a conv output
    check(on_conv("q = keras.ops.reshape(x, (-1, 30, 4))", "out = q @ keras.ops.transpose(q, (0, 2, 1)) / 2.0"))


ELEMENTWISE = [
    pytest.param("keras.ops.negative(x)", id="negative"),
    pytest.param("-x", id="neg-operator"),
    pytest.param("keras.ops.abs(x)", id="abs"),
    pytest.param("keras.ops.absolute(x)", id="absolute"),
    pytest.param("keras.ops.square(x)", id="square"),
    pytest.param("keras.ops.sqrt(keras.ops.abs(x))", id="sqrt"),
    pytest.param("keras.ops.rsqrt(keras.ops.abs(x) + 0.5)", id="rsqrt"),
    pytest.param("keras.ops.exp(x * 0.5)", id="exp"),
    pytest.param("keras.ops.log(keras.ops.abs(x) + 0.1)", id="log"),
    pytest.param("keras.ops.clip(x, -0.5, 0.25)", id="clip"),
    pytest.param("keras.ops.floor(x * 3.0)", id="floor"),
    pytest.param("keras.ops.floor(0.9 + x)", id="floor-keep-prob"),
    pytest.param("keras.ops.sin(x * 3.0)", id="sin"),
    pytest.param("keras.ops.cos(x * 3.0) - keras.ops.sin(x)", id="cos"),
    pytest.param("keras.ops.where(x > 0, x, 0.1 * x)", id="where"),
    pytest.param("keras.ops.where(x <= 0.2, 1.0, x)", id="where-number"),
    pytest.param('keras.ops.cast(keras.ops.cast(x * 3.0, "int32"), "float32")', id="cast-truncates"),
    pytest.param('keras.ops.cast(x > 0.1, "float32")', id="cast-bool"),
    pytest.param("keras.ops.maximum(x, 0.0)", id="maximum-number"),
    pytest.param("keras.ops.minimum(0.5, x)", id="minimum-number"),
    pytest.param("keras.ops.divide(x, keras.ops.abs(x) + 1.0)", id="divide"),
    pytest.param("keras.ops.true_divide(x, 4.0)", id="true_divide-number"),
    pytest.param("keras.ops.power(keras.ops.abs(x), 1.5)", id="power"),
    pytest.param("keras.ops.subtract(1.0, x)", id="subtract-number-first"),
    pytest.param("keras.ops.multiply(x, 0.3)", id="multiply-number"),
    pytest.param('keras.ops.cast(keras.ops.not_equal(x, x * 2.0), "float32")', id="not_equal"),
    pytest.param("keras.ops.softmax(x, axis=1)", id="ops-softmax-axis1"),
    pytest.param("keras.ops.softmax(x)", id="ops-softmax"),
    pytest.param("keras.activations.softmax(x, axis=2)", id="activations-softmax-axis2"),
    pytest.param("keras.ops.log_softmax(x, axis=-1)", id="ops-log_softmax"),
    pytest.param("keras.ops.gelu(x)", id="ops-gelu-approximate"),
    pytest.param("keras.ops.gelu(x, approximate=False)", id="ops-gelu-exact"),
    pytest.param("keras.activations.gelu(x)", id="activations-gelu-exact"),
    pytest.param("keras.ops.leaky_relu(x, negative_slope=0.1)", id="ops-leaky_relu"),
    pytest.param("keras.activations.relu(x, max_value=0.5, negative_slope=0.1)", id="activations-relu-args"),
    pytest.param("keras.ops.elu(x, alpha=0.5)", id="ops-elu"),
    pytest.param("x + keras.ops.zeros_like(x)", id="zeros_like"),
    pytest.param("keras.ops.ones_like(x) - x", id="ones_like"),
    pytest.param("keras.ops.full_like(x, 0.25) * x", id="full_like"),
    pytest.param('x + keras.ops.cast(keras.ops.ones_like(x, dtype="int32"), "float32")', id="ones_like-dtype"),
    pytest.param("keras.ops.full_like(x, 2.5)", id="full_like-as-output"),
]


@pytest.mark.parametrize("expr", ELEMENTWISE)
def test_elementwise_functions(check, expr):
    check(on_conv(f"out = {expr}"))


@pytest.mark.parametrize("expr", [
    pytest.param("x * 0.5", id="x*0.5"),
    pytest.param("2.0 - x", id="2.0-x"),
    pytest.param("x / (keras.ops.abs(y) + 1.0)", id="x/y"),
    pytest.param("x ** 2", id="x**2"),
    pytest.param("(keras.ops.abs(x) + 0.5) ** keras.ops.tanh(y)", id="x**y"),
    pytest.param("2.0 ** x", id="2.0**x"),
    pytest.param("(-2.0) ** y", id="neg-base"),
    pytest.param("-x + 1", id="-x+1"),
    pytest.param("1.0 / (keras.ops.abs(x) + 1.0)", id="1/x"),
    pytest.param("-(x - y) * 3", id="neg-of-sum"),
])
@pytest.mark.parametrize("where", ["2d", "4d-conv"])
def test_python_operators_with_numbers(check, expr, where):
    if where == "2d":
        body = ("x = layers.Dense(4)(inp)", "y = layers.Dense(4)(inp)")
        shape = (6,)
    else:
        body = (CONV, "y = layers.Conv2D(4, 1)(inp)")
        shape = (5, 6, 3)
    if "(-2.0) ** y" in expr:  # an integer-valued exponent: a negative base is defined
        body += ("y = keras.ops.cast(keras.ops.cast(y * 3.0, 'int32'), 'float32')",)
    check(one_input(shape, *body, f"out = {expr}"))


@pytest.mark.parametrize("axis", [-1, 1])
def test_ops_concatenate_axis(check, axis):
    check(one_input((5, 6, 3), CONV, f"b = layers.Conv2D({2 if axis == -1 else 4}, 1)(inp)",
                    f"out = keras.ops.concatenate([x, b], axis={axis})"))


@pytest.mark.parametrize("size, interpolation, antialias", [
    ((7, 9), "bilinear", False), ((3, 4), "bilinear", False), ((3, 4), "bilinear", True),
    ((7, 9), "nearest", False), ((3, 4), "nearest", False), ((10, 12), "nearest", False),
    ((7, 9), "bicubic", True), ((3, 4), "bicubic", True),
], ids=str)
def test_image_resize(check, size, interpolation, antialias):
    check(on_conv(f'out = keras.ops.image.resize(x, {size!r}, interpolation="{interpolation}", '
                  f"antialias={antialias})"))


def test_image_resize_of_the_input(check):
    check(one_input((5, 6, 3), "y = keras.ops.image.resize(inp, (8, 8))", 'out = layers.Conv2D(2, 3)(y)'))


@pytest.mark.parametrize("args", [
    "2", "(2, 3)", "3, strides=2", "3, strides=2, padding='same'", "2, strides=1, padding='same'",
    "(2, 3), strides=1, dilation_rate=2", "3, strides=(2, 1), padding='same'",
])
def test_extract_patches(check, args):
    check(on_conv(f"out = keras.ops.image.extract_patches(x, {args})"))


def test_extract_patches_then_dense(check):
    # ViT-style: patches of the image, a Dense projection per patch
    check(one_input((8, 6, 3), "p = keras.ops.image.extract_patches(inp, 2)", "out = layers.Dense(5)(p)"))


# -- tf.* inside a custom layer's call() (TensorFlow functions cannot take Keras symbolic tensors)
TF_HEADER = "import keras\nfrom keras import layers\nimport tensorflow as tf\n\n\n"


def tf_layer(shape: tuple, *call: str, after_conv: bool = True, filters: int = 4) -> str:
    """A custom layer whose ``call(self, x)`` runs ``call`` (the last line returns), applied to a
    conv's output (or the input itself)."""
    body = "".join(f"        {line}\n" for line in call)
    head = (f'    x = layers.Conv{len(shape) - 1}D({filters}, 3, padding="same")(inp)\n'
            if after_conv else "    x = inp\n")
    return (TF_HEADER + "class Op(layers.Layer):\n    def call(self, x):\n" + body + "\n\n"
            f"def build_model():\n    inp = keras.Input(shape={shape!r})\n" + head
            + "    return keras.Model(inp, Op()(x))\n")


TF_CALLS = [
    pytest.param("return tf.reduce_mean(x, axis=[1, 2])", id="reduce_mean"),
    pytest.param("return tf.reduce_sum(x, axis=-1, keepdims=True)", id="reduce_sum-keepdims"),
    pytest.param("return tf.math.reduce_max(x, axis=2)", id="math.reduce_max"),
    pytest.param("return tf.reduce_min(input_tensor=x, axis=1)", id="reduce_min-keywords"),
    pytest.param("return tf.cast(tf.argmax(x, axis=-1), tf.float32)", id="argmax-cast"),
    pytest.param("return tf.concat([x, tf.square(x)], axis=-1)", id="concat-square"),
    pytest.param("return tf.nn.softmax(x, axis=-1)", id="nn.softmax"),
    pytest.param("return tf.nn.softmax(x)", id="nn.softmax-default"),
    pytest.param("return tf.nn.leaky_relu(x, alpha=0.1)", id="nn.leaky_relu-alpha"),
    pytest.param("return tf.nn.gelu(x)", id="nn.gelu"),
    pytest.param("return tf.nn.relu6(x * 4.0)", id="nn.relu6"),
    pytest.param("return tf.clip_by_value(x, -0.3, 0.3)", id="clip_by_value"),
    pytest.param("return tf.where(x > 0.0, x, 0.0)", id="where"),
    pytest.param("return tf.math.rsqrt(tf.abs(x) + 1.0)", id="rsqrt-abs"),
    pytest.param("return tf.math.log(tf.exp(x) + 1.0)", id="log-exp"),
    pytest.param("return tf.maximum(x, -0.1) - tf.minimum(x, 0.2)", id="maximum-minimum-numbers"),
    pytest.param("return tf.gather(x, [0, 2], axis=-1)", id="gather"),
    pytest.param("return tf.gather(x, 3, axis=2)", id="gather-scalar"),
    pytest.param("a, b = tf.split(x, [1, -1], axis=-1)\nreturn a * b", id="split-sizes"),
    pytest.param("a, b = tf.split(x, 2, axis=3)\nreturn tf.stack([a, b], axis=1)", id="split-stack"),
    pytest.param("return tf.expand_dims(x, axis=2)", id="expand_dims"),
    pytest.param("return tf.squeeze(tf.reduce_mean(x, axis=-1, keepdims=True), axis=-1)", id="squeeze"),
    pytest.param("return tf.reshape(x, [tf.shape(x)[0], -1, 4])", id="reshape-tf.shape"),
    pytest.param("return tf.reshape(x, (-1, x.shape[1] * x.shape[2], x.shape[3]))", id="reshape-static"),
    pytest.param("return tf.transpose(x, perm=[0, 3, 1, 2])", id="transpose"),
    pytest.param("d = tf.cast(tf.shape(x)[-1], tf.float32)\nreturn x / tf.sqrt(d)", id="static-scale"),
    pytest.param("return x * tf.constant(2.0) + tf.convert_to_tensor(x)", id="constant"),
    pytest.param("return tf.math.l2_normalize(x, axis=-1)", id="l2_normalize"),
    pytest.param("return tf.nn.l2_normalize(x, axis=[1, 2], epsilon=1e-3)", id="nn.l2_normalize-spatial"),
    pytest.param("q = tf.reshape(x, [-1, 30, 4])\nreturn tf.matmul(q, q, transpose_b=True)", id="matmul-transpose_b"),
    pytest.param("return tf.image.resize(x, (7, 9))", id="image.resize"),
    pytest.param("return tf.image.resize(x, [3, 4], method='nearest')", id="image.resize-nearest"),
    pytest.param("return tf.image.resize(x, [7, 9], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)",
                 id="image.resize-ResizeMethod"),
    pytest.param("return tf.image.extract_patches(x, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], 'VALID')",
                 id="image.extract_patches"),
    pytest.param("return tf.image.extract_patches(x, sizes=[1, 3, 3, 1], strides=[1, 2, 2, 1], "
                 "rates=[1, 1, 1, 1], padding='SAME')", id="image.extract_patches-same"),
]


@pytest.mark.parametrize("body", [
    pytest.param("out = keras.ops.einsum('bhwc,bhwc->bc', x, x)", id="sum-over-pixels"),
    pytest.param("out = keras.ops.einsum('bhwc->bwh', x)", id="transpose-and-reduce"),
    pytest.param("t = keras.ops.einsum('bhwc->bch', x)\nout = layers.Conv1D(2, 3)(t)", id="then-conv1d"),
    pytest.param("q = keras.ops.reshape(x, (-1, 30, 4))\nout = keras.ops.einsum('bic,bjc->bij', q, q)",
                 id="attention-scores"),
    pytest.param("out = keras.ops.einsum(\"bhwc,bhwc->bhw\", x, keras.ops.ones_like(x))", id="with-ones_like"),
])
def test_einsum(check, body):
    """Computed in Keras' axis order: channels-first operands are permuted back once."""
    check(on_conv(*body.split("\n")))


@pytest.mark.parametrize("call", [
    pytest.param("return tf.einsum('bhwc,cd->bhwd', x, self.w)", id="einsum-weight"),
    pytest.param("q = tf.reshape(x, [-1, 30, 4])\nreturn tf.einsum('bik,bjk->bij', q, q)", id="tf.einsum"),
    pytest.param("return x + keras.ops.ones((keras.ops.shape(x)[0], 5, 6, 4))", id="ops.ones-feature-map"),
    pytest.param("return x * keras.ops.zeros((tf.shape(x)[0], 5, 6, 1)) + 1.0", id="ops.zeros-broadcast"),
    pytest.param("return keras.ops.zeros((tf.shape(x)[0], 3), dtype='float32') + tf.reduce_mean(x, axis=[1, 2])[:, :3]",
                 id="ops.zeros-2d"),
    pytest.param("return tf.zeros_like(x) + tf.ones_like(x) * x", id="tf.zeros_like-ones_like"),
])
def test_filled_tensors_and_einsum_in_call(check, call):
    lines = call.split("\n")
    if "self.w" in call:  # a weight of the layer (add_weight): an einsum operand without a batch axis
        src = tf_layer((5, 6, 3), *lines).replace(
            "class Op(layers.Layer):\n", "class Op(layers.Layer):\n"
            "    def build(self, input_shape):\n"
            "        self.w = self.add_weight(shape=(4, 3), initializer='glorot_uniform')\n\n")
        check(src)
    else:
        check(tf_layer((5, 6, 3), *lines))


@pytest.mark.parametrize("call", TF_CALLS)
def test_tf_functions_in_call(check, call):
    check(tf_layer((5, 6, 3), *call.split("\n")))


@pytest.mark.parametrize("call", [
    pytest.param("return tf.reduce_mean(x, axis=1)", id="mean-time"),
    pytest.param("return tf.nn.softmax(tf.matmul(x, x, transpose_b=True) / 2.0, axis=-1)", id="self-scores"),
    pytest.param("return tf.transpose(x, [0, 2, 1])", id="transpose"),
])
def test_tf_functions_on_sequences(check, call):
    check(tf_layer((6, 4), call, after_conv=False))
    check(tf_layer((6, 4), call))


# -- random numbers: the same distribution, not the same draws
SAMPLING = TF_HEADER + '''class Sampling(layers.Layer):
    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = tf.shape(z_mean)[0]
        dim = tf.shape(z_mean)[1]
        epsilon = {draw}
        return z_mean + tf.exp(0.5 * z_log_var) * epsilon


def build_model():
    inp = keras.Input(shape=(6,))
    z_mean = layers.Dense(3)(inp)
    z_log_var = layers.Dense(3)(inp)
    return keras.Model(inp, Sampling()([z_mean, z_log_var]))
'''


@pytest.mark.parametrize("draw, kind", [
    ("tf.random.normal(shape=(batch, dim))", "normal"),
    ("keras.random.normal(shape=(batch, dim), mean=1.0, stddev=2.0, seed=3)", "normal"),
    ("tf.random.uniform((batch, dim), minval=-1.0, maxval=3.0)", "uniform"),
    ("keras.random.uniform(tf.shape(z_mean))", "uniform"),
], ids=["tf-normal", "keras-normal-args", "tf-uniform", "keras-uniform"])
def test_random_noise_distribution(draw, kind):
    """Keras and torch draw different numbers: the translation is checked on the noise's
    shape and distribution (12000 draws: mean, spread, range), and the difference is reported."""
    src = SAMPLING.format(draw=draw)
    result = translate(src, "case.py")
    assert any("random generator" in d.message for d in result.diagnostics), result.diagnostics
    assert "draws other numbers" in result.text
    keras.backend.clear_session()
    kmodel = load_source_module(src).build_model()
    tmodel = verify.load_generated(result.text).build_model()
    # zero weights: z_mean = 0 and exp(0.5 * z_log_var) = 1, so each model returns its noise
    for w in kmodel.weights:
        w.assign(np.zeros(w.shape, "float32"))
    with torch.no_grad():
        for p in tmodel.parameters():
            p.zero_()
    x = np.zeros((4000, 6), "float32")
    kout = np.asarray(kmodel(x))
    torch.manual_seed(0)
    with torch.no_grad():
        tout = tmodel(torch.from_numpy(x)).numpy()
    assert tout.shape == kout.shape == (4000, 3)
    assert abs(tout.mean() - kout.mean()) < 0.1 and abs(tout.std() - kout.std()) < 0.1, (kout.mean(), kout.std())
    assert not np.allclose(tout, kout)
    if kind == "uniform":
        assert abs(tout.min() - kout.min()) < 0.01 and abs(tout.max() - kout.max()) < 0.01


@pytest.mark.parametrize("call", [
    pytest.param("return x + 0.0 * tf.random.normal(tf.shape(x))", id="noise-like-feature-map"),
    pytest.param("return x + 0.0 * keras.random.uniform((tf.shape(x)[0], 5, 6, 1))", id="noise-broadcast"),
])
def test_random_noise_shapes_on_feature_maps(check, call):
    # zero times the noise: only its shape and layout matter, and the outputs agree exactly
    check(tf_layer((5, 6, 3), call))


@pytest.mark.parametrize("body, reason", [
    pytest.param("out = keras.ops.mean(x)", "batch axis", id="mean-all-axes"),
    pytest.param("out = keras.ops.sum(x, axis=0)", "batch axis", id="sum-batch"),
    pytest.param("out = keras.ops.concatenate([x, x])", "batch axis", id="concatenate-default-axis0"),
    pytest.param("out = keras.ops.stack([x, x])", "batch axis", id="stack-default-axis0"),
    pytest.param("out = keras.ops.split(x, 2)", "batch axis", id="split-default-axis0"),
    pytest.param("out = keras.ops.take(x, [0, 1])", "flattened", id="take-without-axis"),
    pytest.param("out = keras.ops.transpose(x)", "batch axis", id="transpose-reverse-all"),
    pytest.param("out = keras.ops.transpose(x, (1, 0, 2, 3))", "batch axis", id="transpose-batch"),
    pytest.param("out = keras.ops.reshape(x, (3, -1))", "batch size", id="reshape-static-batch"),
    pytest.param("out = keras.ops.reshape(x, (-1, 7, 7))", "cannot reshape", id="reshape-bad-size"),
    pytest.param("out = keras.ops.expand_dims(keras.ops.expand_dims(x, 1), 1)", "rank 6", id="rank6"),
    pytest.param('out = keras.ops.image.resize(x, (7, 9), interpolation="bicubic")', "bicubic", id="bicubic"),
    pytest.param('out = keras.ops.image.resize(x, (7, 9), interpolation="area")', "area", id="area"),
    pytest.param("out = keras.ops.image.resize(x, (7, 9), crop_to_aspect_ratio=True)", "crop_to_aspect_ratio",
                 id="resize-crop"),
    pytest.param("out = keras.ops.image.extract_patches(x, (2, 2, 2))", "3-D", id="patches-3d"),
    pytest.param("out = keras.ops.einsum('bhwc->hwc', x)", "batch axis", id="einsum-sums-the-batch"),
    pytest.param("out = keras.ops.einsum('...c->...c', x)", "ellipsis", id="einsum-ellipsis"),
    pytest.param("out = keras.ops.einsum('bhwc', x)", "explicit output", id="einsum-implicit-output"),
    pytest.param("out = keras.ops.einsum('bhw,bhwc->bc', x, x)", "names 3 axes", id="einsum-rank-mismatch"),
    pytest.param("out = x + keras.ops.zeros((5, 6, 4))", "neither a tensor nor a number", id="zeros-static-shape"),
    pytest.param("out = keras.ops.full_like(x, x)", "fill_value", id="full_like-tensor-fill"),
    pytest.param("out = keras.ops.cumsum(x, axis=1)", "cumsum", id="unknown-ops-function"),
    pytest.param("out = x[0]", "batch axis", id="index-batch"),
    pytest.param("out = x[:, ::-1]", "negative step", id="reverse"),
    pytest.param("out = x[:, 2:2]", "empty slice", id="empty-slice"),
    pytest.param("out = x[:, keras.ops.argmax(x, axis=1)]", "static ints", id="tensor-index"),
    pytest.param("out = x // 2", "x // 2", id="floordiv"),
    pytest.param("out = x % 2", "x % 2", id="modulo"),
    pytest.param("out = keras.ops.clip(x, x, 1.0)", "x_min", id="clip-tensor-bound"),
    pytest.param("out = keras.ops.where(x > 0)", "indices", id="where-one-argument"),
    pytest.param("out = keras.ops.take(x, keras.ops.cast(x, 'int32'), axis=1)", "indices", id="take-tensor-indices"),
    pytest.param("out = keras.ops.cast(x, 'complex64')", "complex64", id="cast-complex"),
    pytest.param("out = keras.ops.max(x, axis=1, initial=0.0)", "initial", id="max-initial"),
])
def test_refused_tensor_math(body, reason):
    """What has no faithful translation is a marked stub naming the construct, never a guess."""
    result = translate(on_conv(body), "case.py")
    assert not result.program.models, result.text
    assert any(reason in d.message for d in result.stubs), [d.message for d in result.diagnostics]


@pytest.mark.parametrize("call, reason", [
    pytest.param("return tf.reduce_mean(x)", "batch axis", id="reduce_mean-all"),
    pytest.param("return tf.gather(x, [0, 1])", "batch axis", id="gather-axis0"),
    pytest.param("return x + tf.random.normal((3, 5, 6, 4))", "batch size", id="random-static-batch"),
    pytest.param("return tf.math.cumsum(x, axis=1)", "tensorflow.math.cumsum", id="unknown-tf-function"),
    pytest.param("return tf.image.resize(x, (7, 9), method='lanczos3')", "lanczos3", id="lanczos"),
    pytest.param("return tf.image.resize(x, (7, 9), preserve_aspect_ratio=True)", "preserve_aspect_ratio",
                 id="preserve_aspect_ratio"),
    pytest.param("return tf.nn.silu(x, beta=2.0)", "beta", id="silu-beta"),
    pytest.param("return tf.split(x, [1, 2], axis=-1)", "do not fit", id="split-bad-sizes"),
])
def test_refused_tf_functions(call, reason):
    """The refusal is a marked stub: the custom layer whose call() uses the function becomes one
    opaque stub module that raises when called (the model around it is translated)."""
    result = translate(tf_layer((5, 6, 3), call), "case.py")
    assert any(reason in d.message for d in result.stubs), [d.message for d in result.diagnostics]
    stub = result.text.split("class Op(nn.Module):", 1)[1].split("\nclass ", 1)[0]
    assert "raise NotImplementedError" in stub and reason in stub, result.text


@pytest.mark.parametrize("case, builder, compared", [
    ("tensor_math_functional", "build_model", 2),
    ("tensor_math_in_call", "build_encoder", 2),  # the third output is the sampled noise
    ("tensor_math_filled_and_einsum", "build_model", 3),
])
def test_golden_tensor_math_cases_are_numerically_equal(case, builder, compared):
    import pathlib

    src = (pathlib.Path(__file__).parent / "golden" / case / "input.py").read_text()
    checked = check_source(src, builder=builder)
    errors = [c.max_abs for c in checked.comparisons[:compared]]
    assert max(errors) <= TOL, errors
    assert checked.keras_params == checked.torch_params


def test_matmul_with_a_custom_layer_weight(check):
    """``x @ self.w`` (add_weight): the weight is a variable operand of matmul, numbers stay attributes."""
    check(TF_HEADER + '''class Linear(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros")

    def call(self, x):
        return keras.ops.relu(x @ self.w + self.b) * 0.5 - tf.matmul(x, self.w) / 3.0


def build_model():
    inp = keras.Input(shape=(6,))
    return keras.Model(inp, Linear(4)(inp))
''')
