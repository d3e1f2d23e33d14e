"""model.layers in torch terms (printers/torch/model_layers.py): a Sequential's layer list
as the frontend records it is Keras' own, and each layer maps to the child module that
holds its weights; index forms of a functional model (whose order is not known) stay stubs."""

from __future__ import annotations

import os

import pytest
import torch  # noqa: F401  (before TensorFlow)

import keras

from transpiler import verify
from transpiler.printers.torch.model_layers import ModelLayers
from transpiler.printers.torch.printer import print_model_class
from transpiler.translate import translate

ROOT = os.path.dirname(os.path.dirname(__file__))


@pytest.mark.parametrize("name", ["lstm_classifier", "mlp_regression", "mnist_cnn"])
def test_sequential_layers_map_to_their_modules(name):
    path = os.path.join(ROOT, "corpus", "keras", f"{name}.py")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    result = translate(source, path)
    md = result.program.models[0]
    layers = ModelLayers.of(md, print_model_class(md, os.path.basename(path), {}).text)
    keras.backend.clear_session()  # Keras' automatic layer names count per session
    kmodel = getattr(verify.load_generated(source, f"{name}_keras"), md.builder)()
    tmodel = getattr(verify.load_generated(result.text, f"{name}_torch"), md.builder)()
    assert md.graph.from_keras.keras_layers == [layer.name for layer in kmodel.layers]
    for i, layer in enumerate(kmodel.layers):
        child = layers.child(i)
        if child is None:  # a function in forward(): only weightless layers may be
            assert layer.count_params() == 0, layer.name
            continue
        assert layers.child(i - len(kmodel.layers)) == child  # negative indexes too
        # what the generated count_params() sums
        torch_params = sum(t.numel() for t in getattr(tmodel, child).state_dict().values() if t.is_floating_point())
        if not isinstance(layer, keras.layers.LSTM):  # torch's LSTM has a second bias
            assert torch_params == layer.count_params(), (layer.name, child)
        shape = tuple(layer.output.shape)
        if len(shape) == 4:  # NHWC → the torch module's NCHW
            shape = (shape[0], shape[3], shape[1], shape[2])
        assert layers.shapes[child] == shape, (layer.name, child)


def test_functional_model_layers_index_stays_a_stub():
    source = ("import keras\n\ndef build_model():\n    inputs = keras.Input(shape=(4,))\n"
              "    x = keras.layers.Dense(8)(inputs)\n    return keras.Model(inputs, keras.layers.Dense(1)(x))\n\n"
              "model = build_model()\nmodel.layers[1].trainable = False\n")
    result = translate(source, "f.py")
    assert [d.message for d in result.stubs] == ["not translated yet: model.layers[1].trainable = False"]


#: what model.count_params() becomes in torch: Keras counts the non-trainable weights too
#: (BatchNorm's moving statistics, torch's buffers)
TORCH_COUNT = "sum(t.numel() for t in model.state_dict().values() if t.is_floating_point())"


@pytest.mark.parametrize("name", ["resnet_small", "conv1d_timeseries"])
def test_count_params_gives_the_same_number_both_ways(name):
    """K's model.count_params() → T1's sum over the floating state → K1's count_params():
    the three numbers are equal (resnet_small has BatchNorm: its moving statistics count)."""
    path = os.path.join(ROOT, "corpus", "keras", f"{name}.py")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    t1 = translate(source, path).text
    k1 = translate(t1, f"{name}_torch.py", "keras").text
    assert TORCH_COUNT in t1 and "model.count_params()" in k1
    keras.backend.clear_session()
    expected = verify.load_generated(source, f"{name}_keras").build_model().count_params()
    tmodel = verify.load_generated(t1, f"{name}_torch").build_model()
    assert eval(TORCH_COUNT, {"model": tmodel}) == expected
    assert verify.load_generated(k1, f"{name}_torch_keras").build_model().count_params() == expected
