"""Numeric tests (Keras vs generated torch, same weights and inputs) for the ops real keras.io
models use and the corpus did not: ``activation=ops.gelu`` (Keras calls ``ops.gelu(x)``, which
approximates), position embeddings on ``ops.arange``, ``stop_gradient``.

Each case is a tiny functional model run through ``harness.check_source`` (random Keras
weights mapped into the torch module with strict ``load_state_dict``): max |keras - torch|
<= 1e-5 and equal parameter counts.
"""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from harness import check_source, max_error

TOL = 1e-5
HEADER = "import keras\nimport tensorflow as tf\nfrom keras import layers, ops\n\n\n"


def model_source(*body: str, classes: str = "") -> str:
    return HEADER + classes + "def build_model():\n" + "".join(f"    {line}\n" for line in body)


@pytest.fixture
def check(record_property):
    def run(src: str):
        checked = check_source(src)
        assert checked.comparisons, "the model has no output to compare"
        err = max_error(checked)
        record_property("max_abs_error", err)
        assert err <= TOL, f"max abs error {err:.3g} > {TOL}\n{checked.translation.text}"
        assert checked.keras_params == checked.torch_params, checked.translation.text
        return checked

    return run


@pytest.mark.parametrize("activation", ["ops.gelu", "keras.ops.nn.gelu", "keras.activations.gelu", "tf.nn.gelu",
                                        '"gelu"'])
def test_dense_activation_gelu_function_defaults(check, activation):
    """``activation=ops.gelu`` is the tanh approximation (ops.gelu's default), the others exact:
    inputs scaled x3 so the two forms differ by more than the tolerance."""
    checked = check(model_source("inp = keras.Input(shape=(6,))", "x = layers.Rescaling(3.0)(inp)",
                                 f"out = layers.Dense(5, activation={activation})(x)",
                                 "return keras.Model(inp, out)"))
    approximate = 'approximate="tanh"' in checked.translation.text
    assert approximate == ("ops" in activation), checked.translation.text
