"""A model's own train_step as keras.io's "customizing fit" writes it: the gradients over
``self.trainable_variables`` held in a variable, and metric trackers other than ``Mean``
(``CategoricalAccuracy``) updated with ``(y, y_pred)`` (issue 18 item 3; keras.io's
trainer_pattern). Before, both made the whole step a stub and ``fit`` with it."""

from __future__ import annotations

import os

import numpy as np

from transpiler.translate import translate

ROOT = os.path.dirname(os.path.dirname(__file__))
PROGRAM = os.path.join(ROOT, "tests", "programs", "custom_step_accuracy_tracker.py")


def _source() -> str:
    with open(PROGRAM, encoding="utf-8") as fh:
        return fh.read()


def test_accuracy_tracker_and_trainable_variables_translate():
    result = translate(_source(), PROGRAM)
    assert not result.stubs, [d.message for d in result.stubs]
    text = result.text
    assert 'self.accuracy = MeanMetricWrapper(categorical_accuracy, name="accuracy")' in text
    assert "trainable_vars = [p for p in self.parameters() if p.requires_grad]" in text
    assert "fit_train_step(model, x, y, epochs=2, batch_size=16)" in text


def test_untranslated_tracker_is_still_a_stub():
    source = _source().replace('keras.metrics.CategoricalAccuracy(name="accuracy")',
                               "keras.metrics.AUC()")
    result = translate(source, PROGRAM)
    assert any("train_step()" in d.message and "AUC" in d.message for d in result.stubs), \
        [d.message for d in result.stubs]


def test_step_with_accuracy_tracker_trains_like_keras():
    from transpiler.verify_training import STEPS, run_both

    k, t = run_both(PROGRAM, exact=True)
    assert len(k) == STEPS and np.all(np.isfinite(k))
    rel = np.abs(np.asarray(k) - np.asarray(t)) / np.maximum(np.abs(np.asarray(k)), 1e-12)
    assert rel.max() <= 1e-4, list(zip(k, t))
