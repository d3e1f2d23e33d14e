"""A function that returns ``keras.Model(...)`` and is called at several module-level
statements with arguments that change the model (keras.io's mlp_image_classification:
``build_classifier(blocks)`` for three kinds of blocks). The PyTorch output kept one class
for the function (its last call's) and dropped the assignments, so the program failed with
a NameError and no stub; now each call's statement constructs its own class, the function
goes (or, still called elsewhere, is a marked stub), and each model computes Keras' numbers."""

from __future__ import annotations

import os

import torch  # noqa: F401 (torch before tensorflow)
import numpy as np
import pytest

from harness import load_source_module, randomize_keras_weights
from transpiler import verify
from transpiler.translate import translate

SCRIPT = '''import keras
from keras import layers


def build_classifier(blocks, extra=False):
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(16)(inputs)
    if extra:
        x = x + layers.Dense(16)(x)
    x = blocks(x)
    return keras.Model(inputs, layers.Dense(3)(x))


a_blocks = keras.Sequential([layers.Dense(16, activation="relu") for _ in range(2)])
b_blocks = keras.Sequential([layers.Dense(16, activation="tanh")])
a_model = build_classifier(a_blocks)
b_model = build_classifier(b_blocks, extra=True)
'''


def test_each_call_constructs_its_own_model_like_keras():
    result = translate(SCRIPT, "case.py")
    assert not result.stubs
    assert "a_model = AModel(a_blocks)" in result.text and "b_model = BModel(b_blocks)" in result.text
    assert "def build_classifier" not in result.text  # nothing calls it any more
    import keras

    keras.backend.clear_session()
    kmod = load_source_module(SCRIPT, "per_call_keras")
    tmod = verify.load_generated(result.text, "per_call_torch")
    x = np.random.default_rng(0).standard_normal((4, 8)).astype("float32")
    for var in ("a_model", "b_model"):
        md = next(m for m in result.program.models if m.var == var)
        kmodel, tmodel = getattr(kmod, var), getattr(tmod, var)
        randomize_keras_weights(kmodel)
        tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
        tmodel.eval()
        with torch.no_grad():
            got = tmodel(torch.as_tensor(x)).numpy()
        assert float(np.max(np.abs(got - keras.ops.convert_to_numpy(kmodel(x))))) <= 1e-5, var


def test_a_call_left_elsewhere_meets_a_marked_stub():
    result = translate(SCRIPT + "c_model = [build_classifier(a_blocks)]\n", "case.py")
    assert any("builds another model at each call" in d.message for d in result.stubs), \
        [str(d) for d in result.stubs]
    assert "raise NotImplementedError" in result.text.split("def build_classifier", 1)[1].split("\n\n")[0]


REALWORLD = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "shared", "realworld", "keras",
                                          "mlp_image_classification.py"))


@pytest.mark.skipif(not os.path.exists(REALWORLD), reason="the shared real-world scripts are not here")
def test_mlp_image_classification_binds_each_classifier():
    with open(REALWORLD, encoding="utf-8") as fh:
        result = translate(fh.read(), REALWORLD)
    for var in ("mlpmixer_classifier", "fnet_classifier", "gmlp_classifier"):
        head = result.text.split(f"history = run_experiment({var})", 1)[0]
        assert f"\n{var} = " in head, f"{var} is used before anything binds it"
