"""keras.metrics.TruePositives / FalsePositives / TrueNegatives / FalseNegatives: the generated
training runtime's classes (transpiler/runtime/torch/metrics.py) against Keras' own over several
batches, on probabilities and on logits (the model's sigmoid moved into the loss), and a compiled
program logging them under Keras' names."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from transpiler.translate import translate

CLASSES = ["TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives"]


@pytest.mark.parametrize("logits", [False, True], ids=["probabilities", "logits"])
@pytest.mark.parametrize("cls", CLASSES)
def test_confusion_counts_like_keras(cls, logits):
    import keras

    from transpiler.runtime.torch import metrics

    ours = getattr(metrics, cls)(from_logits=True) if logits else getattr(metrics, cls)()
    theirs = getattr(keras.metrics, cls)()
    rng = np.random.RandomState(5)
    for batch in range(4):
        raw = rng.randn(16, 2) * 2  # two outputs per sample: every value is counted
        probs = 1 / (1 + np.exp(-raw))
        target = (rng.rand(16, 2) < probs).astype("float32")
        ours.update_state(torch.from_numpy(raw if logits else probs), torch.from_numpy(target))
        theirs.update_state(target, probs.astype("float32"))
        assert ours.result() == float(theirs.result()), (batch, ours.result(), float(theirs.result()))
    ours.reset_state()
    theirs.reset_state()
    assert ours.result() == float(theirs.result()) == 0.0


SCRIPT = """import numpy as np
import keras
from keras import layers


def build_model():
    model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy",
                  metrics=[keras.metrics.TruePositives(name="tp"), keras.metrics.FalsePositives(),
                           keras.metrics.TrueNegatives(), keras.metrics.FalseNegatives()])
    return model


x = np.random.rand(64, 4).astype("float32")
y = (x[:, 0] > 0.5).astype("float32")
model = build_model()
history = model.fit(x, y, epochs=2, validation_split=0.25, verbose=2)
"""


def test_confusion_metrics_translate_and_count_every_sample():
    """Logged under Keras' names (name= kept); per epoch the four counts add up to the number
    of samples seen (48 training, 16 validation)."""
    result = translate(SCRIPT, "p.py")
    assert not result.stubs, result.stubs
    assert '("tp", 0, TruePositives(from_logits=True))' in result.text
    namespace = {"__name__": "confusion_metrics_program"}
    exec(compile(result.text, "confusion.py", "exec"), namespace)
    history = namespace["history"].history
    cells = ("tp", "false_positives", "true_negatives", "false_negatives")
    assert set(cells) | {f"val_{c}" for c in cells} <= set(history), history.keys()
    for epoch in range(2):
        assert sum(history[c][epoch] for c in cells) == 48
        assert sum(history[f"val_{c}"][epoch] for c in cells) == 16
