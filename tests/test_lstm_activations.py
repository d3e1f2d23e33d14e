"""``LSTM(activation=...)`` other than tanh (issue 18, keras.io timeseries_traffic_forecasting's
``LSTM(activation="relu")``): torch's nn.LSTM applies tanh only, so the output uses the
runtime's ActivationLSTM (runtime/torch/recurrent.py: nn.LSTM's parameters, Keras' arithmetic
stepped in Python). Numeric tests compare with Keras on the same weights.
"""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from harness import check_source, max_error
from transpiler.translate import translate

SOURCE = '''
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(7, 3))
    x = layers.LSTM(6, activation={act!r}, return_sequences=True{extra})(inputs)
    x = layers.LSTM(5, activation={act!r}{extra})(x)
    return keras.Model(inputs, layers.Dense(2)(x))
'''


@pytest.mark.parametrize("act, extra", [("relu", ""), ("sigmoid", ""), ("elu", ", use_bias=False"),
                                        ("linear", ""), ("relu", ", go_backwards=True")])
def test_lstm_with_another_activation_matches_keras(act, extra):
    checked = check_source(SOURCE.format(act=act, extra=extra))
    assert max_error(checked) <= 1e-5, checked.translation.text
    assert checked.keras_params == checked.torch_params
    assert "class ActivationLSTM(nn.LSTM):" in checked.translation.text


def test_lstm_relu_with_masking_and_returned_states_matches_keras():
    source = '''
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(6,), dtype="int32")
    x = layers.Embedding(20, 4, mask_zero=True)(inputs)
    x, h, c = layers.LSTM(5, activation="relu", return_state=True)(x)
    return keras.Model(inputs, layers.Concatenate()([x, h, c]))
'''
    checked = check_source(source)
    assert max_error(checked) <= 1e-5, checked.translation.text


def test_tanh_lstm_stays_nn_lstm():
    text = translate(SOURCE.format(act="tanh", extra=""), "case.py").text
    assert "nn.LSTM(3, 6, batch_first=True)" in text and "ActivationLSTM" not in text


def test_an_activation_without_a_torch_function_is_a_stub():
    result = translate(SOURCE.format(act="hard_sigmoid", extra=""), "case.py")
    assert any("torch RNNs use tanh only" in d.message for d in result.stubs)


def test_a_bidirectional_relu_lstm_is_a_stub_not_a_wrong_module():
    source = SOURCE.format(act="relu", extra="").replace(
        "layers.LSTM(6, activation='relu', return_sequences=True)",
        "layers.Bidirectional(layers.LSTM(6, activation='relu', return_sequences=True))")
    result = translate(source, "case.py")
    assert "Bidirectional" in source and result.stubs
    assert "nn.LSTM(3, 6, batch_first=True, bidirectional=True)" not in result.text
