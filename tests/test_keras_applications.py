"""``keras.applications`` networks read from Keras' own definitions (transpiler/frontend_ast/keras/zoo.py).

keras.io's supervised_contrastive_learning and semantic_image_clustering take
``keras.applications.ResNet50V2(weights=None, include_top=False, pooling="avg")`` as their
encoder: the network must translate with Keras' layer names, and compute what Keras computes
(same weights, same input), which the numeric cases check on the smallest networks.
"""

from __future__ import annotations

import pytest

from transpiler.translate import translate

HEADER = "import keras\nfrom keras import layers\n\n\n"


def resnet_source(call: str) -> str:
    return HEADER + ("def build_model():\n"
                     f"    base = {call}\n"
                     "    inp = keras.Input(shape=(32, 32, 3))\n"
                     "    out = layers.Dense(5)(base(inp))\n"
                     "    return keras.Model(inp, out)\n")


V2 = "keras.applications.ResNet50V2(include_top=False, weights=None, input_shape=(32, 32, 3), pooling='avg')"


def test_resnet50v2_translates_with_keras_layer_names():
    result = translate(resnet_source(V2), "case.py")
    assert [d.message for d in result.stubs] == []
    text = result.text
    for name in ("conv1_conv", "conv2_block1_preact_bn", "conv2_block1_0_conv", "conv4_block6_3_conv", "post_bn"):
        assert f"self.{name} = " in text, name
    assert "nn.Conv2d(3, 64, kernel_size=7, stride=2)" in text
    (md,) = result.program.models
    convs = [n for n in md.graph.nodes if n.op.startswith("conv")]
    assert len(convs) == 1 + 3 * 16 + 4  # stem, three per block, a projection per stage


def test_resnet50_v1_stride_in_the_first_convolution_of_a_stage():
    call = "keras.applications.ResNet50(include_top=False, weights=None, input_shape=(64, 64, 3))"
    result = translate(resnet_source(call).replace("base(inp)", "layers.GlobalAveragePooling2D()(base(inp))")
                       .replace("(32, 32, 3))\n    out", "(64, 64, 3))\n    out"), "case.py")
    assert [d.message for d in result.stubs] == []
    assert "self.conv3_block1_1_conv = nn.Conv2d(256, 128, kernel_size=1, stride=2)" in result.text


def test_pretrained_weights_are_a_marked_stub_not_a_model():
    source = HEADER + "base = keras.applications.ResNet50V2(include_top=False, input_shape=(32, 32, 3))\n"
    result = translate(source, "case.py")
    assert any("pretrained weights" in d.message and d.span.line == 5 for d in result.stubs), \
        [d.message for d in result.stubs]


def test_imported_constructor_name():
    source = resnet_source(V2.replace("keras.applications.", "")).replace(
        "from keras import layers\n", "from keras import layers\nfrom keras.applications.resnet_v2 import ResNet50V2\n")
    result = translate(source, "case.py")
    assert [d.message for d in result.stubs] == []
    assert "self.conv5_block3_3_conv = " in result.text


@pytest.mark.slow
@pytest.mark.parametrize("call", [
    "keras.applications.ResNet50V2(include_top=False, weights=None, input_shape=(32, 32, 3), pooling='avg')",
    "keras.applications.ResNet50(include_top=False, weights=None, input_shape=(32, 32, 3), pooling='max')",
], ids=["resnet50v2_avg", "resnet50_max"])
def test_resnet_numerics_match_keras(call):
    import torch  # noqa: F401  (before TensorFlow, see conftest.py)
    from harness import check_source, max_error

    checked = check_source(resnet_source(call))
    assert checked.comparisons
    err = max_error(checked)
    assert err <= 1e-4, f"max abs error {err:.3g}"
    assert checked.keras_params == checked.torch_params
