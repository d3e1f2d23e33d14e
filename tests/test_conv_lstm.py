"""Keras' ConvLSTM2D (issue 18, keras.io's conv_lstm next-frame prediction): torch has no
convolutional LSTM, so the output holds the runtime's ConvLSTM2D (runtime/torch/recurrent.py)
on (N, C, T, H, W) sequences, the layout of nn.Conv3d's input. Numeric tests compare with Keras
on the same weights (converted by the project's weights path)."""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from harness import check_source, max_error
from transpiler.translate import translate

SOURCE = '''
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(4, 7, 6, 2))
    x = layers.ConvLSTM2D(3, {kernel}, return_sequences=True{extra})(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.ConvLSTM2D(4, 3, padding="same"{last})(x)
    return keras.Model(inputs, layers.Conv2D(2, 1)(x))
'''


@pytest.mark.parametrize("kernel, extra, last", [
    ("(3, 3)", ', padding="same", activation="relu"', ""),
    ("(2, 3)", "", ", go_backwards=True"),
    ("(3, 2)", ', padding="same", strides=(2, 1), use_bias=False', ", return_sequences=True"),
    ("3", ', padding="same", dilation_rate=2', ', activation="sigmoid"'),
])
def test_conv_lstm2d_matches_keras(kernel, extra, last):
    source = SOURCE.format(kernel=kernel, extra=extra, last=last)
    if "return_sequences=True" in last:  # (a sequence out: a Conv3D reads it)
        source = source.replace("layers.Conv2D(2, 1)", "layers.Conv3D(2, 1)")
    checked = check_source(source)
    error = max_error(checked)
    print(f"ConvLSTM2D {kernel}{extra}{last}: max abs error {error:.2e}")
    assert error <= 1e-5, checked.translation.text
    assert checked.keras_params == checked.torch_params
    assert "class ConvLSTM2D(nn.Module):" in checked.translation.text


def test_feature_maps_stay_channels_first_between_conv_lstm_layers():
    text = translate(SOURCE.format(kernel="3", extra="", last=""), "case.py").text
    assert "nn.BatchNorm3d(3" in text and ".permute(" not in text, text


@pytest.mark.parametrize("extra, refusal", [(", return_state=True", "return_state=True"),
                                            (", recurrent_dropout=0.1", "recurrent_dropout"),
                                            (', recurrent_activation="hard_sigmoid"', "recurrent_activation"),
                                            (', data_format="channels_first"', "data_format")])
def test_what_is_not_translated_is_a_stub(extra, refusal):
    result = translate(SOURCE.format(kernel="3", extra=extra, last=""), "case.py")
    assert any(refusal in d.message for d in result.stubs), [d.message for d in result.stubs]


def test_the_keras_printer_writes_the_layer_back():
    """The Keras emitter of the op (the way back) builds a layer of the source's config."""
    import keras

    from transpiler.frontend_ast.keras.frontend import read_keras
    from transpiler.printers.keras.ops import emit

    source = SOURCE.format(kernel="(3, 2)", extra=', padding="same", strides=(2, 1), activation="relu"',
                           last=", go_backwards=True, use_bias=False")
    graph = read_keras(source, "case.py").models[0].graph
    texts = [emit(n).layer for n in graph.nodes if n.op == "conv_lstm2d"]
    assert len(texts) == 2
    built = [eval(t, {"layers": keras.layers}).get_config() for t in texts]  # noqa: S307  (our own output)
    keys = ("filters", "kernel_size", "strides", "padding", "activation", "use_bias", "return_sequences",
            "go_backwards", "dilation_rate")
    assert [{k: c[k] for k in keys} for c in built] == [
        {"filters": 3, "kernel_size": (3, 2), "strides": (2, 1), "padding": "same", "activation": "relu",
         "use_bias": True, "return_sequences": True, "go_backwards": False, "dilation_rate": (1, 1)},
        {"filters": 4, "kernel_size": (3, 3), "strides": (1, 1), "padding": "same", "activation": "tanh",
         "use_bias": False, "return_sequences": False, "go_backwards": True, "dilation_rate": (1, 1)}]
