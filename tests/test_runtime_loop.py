"""runtime/torch/loop.py (Keras' fit/evaluate as a torch loop) run as code against Keras, and
its specialisation for a program's features (printers/runtime_prune.py)."""

from __future__ import annotations

import ast
import itertools
import random

import numpy as np
import pytest

from transpiler.printers import runtime_prune
from transpiler.printers.runtime_prune import specialise

LOOP = "torch.loop"
FUNCTIONS = ("make_loader", "train_step", "fit", "evaluate")
_TREE, FLAGS = runtime_prune._parsed(LOOP)
FEATURES = sorted(flag.lower() for flag in FLAGS)


def _combinations():
    rng = random.Random(17)
    combos = [frozenset(), frozenset(FEATURES)] + [frozenset({f}) for f in FEATURES]
    combos += [frozenset(f for f in FEATURES if rng.random() < 0.5) for _ in range(40)]
    return combos


@pytest.mark.parametrize("features", _combinations(), ids=lambda f: "+".join(sorted(f)) or "none")
def test_every_specialisation_is_plain_python(features):
    """No feature flag, loop_code() or unread parameter survives; the code parses."""
    for name in FUNCTIONS:
        text = specialise(LOOP, name, features)
        tree = ast.parse(text)
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert not names & FLAGS and "loop_code" not in names, (name, names & FLAGS)
        fn = tree.body[0]
        defaults = fn.args.args[len(fn.args.args) - len(fn.args.defaults):]
        unread = [a.arg for a in defaults if a.arg not in names]
        assert not unread, (name, unread)


def test_unused_options_go_with_their_parameters_and_docs():
    plain = specialise(LOOP, "make_loader", frozenset())
    assert plain.splitlines()[0] == "def make_loader(inputs, targets=None, batch_size=32, shuffle=False):"
    assert "element_map" not in plain and "sample_weight" not in plain and plain.count('"""') == 2
    mapped = specialise(LOOP, "make_loader", frozenset({"map"}))
    assert "``element_map`` (tf.data's .map() before .batch())" in mapped and "default_collate" in mapped
    fit = specialise(LOOP, "fit", frozenset())
    assert "for batch in loader:" in fit and "callbacks" not in fit and "**clip" not in fit
    stopping = specialise(LOOP, "fit", frozenset({"stop"}))
    assert "for step, batch in enumerate(loader):" not in stopping  # nothing reads step
    with_callbacks = specialise(LOOP, "fit", frozenset({"callback_objects", "stop"}))
    assert "for step, batch in enumerate(loader):" in with_callbacks  # on_train_batch_begin(step)
    assert "model(*inputs, return_logits=True)" in specialise(LOOP, "train_step", frozenset({"logits"}))


def test_loop_code_lands_where_asked():
    splices = (("epoch_end", ("# EarlyStopping", "if logs['loss'] < 1:", "    model.stop_training = True")),
               ("setup", ("best = None",)))
    text = specialise(LOOP, "fit", frozenset({"stop"}), splices, name_as="fit_2")
    lines = [ln.strip() for ln in text.splitlines()]
    assert text.startswith("def fit_2(")
    assert lines.index("best = None") < lines.index("for epoch in range(epochs):")
    printed = next(i for i, ln in enumerate(lines) if ln.startswith("print(f\"Epoch"))
    assert lines[printed + 1:printed + 4] == ["# EarlyStopping", "if logs['loss'] < 1:", "model.stop_training = True"]


def test_specialisations_are_cached():
    assert specialise(LOOP, "fit", frozenset({"weights"})) is specialise(LOOP, "fit", frozenset({"weights"}))


def test_runtime_fit_matches_keras_fit():
    """Every option on: fit() with validation_split, class weights, clipping, a stateful
    metric and a callback object gives Keras' history (plain SGD, no shuffling)."""
    import torch  # (before TensorFlow)

    import keras

    from transpiler.runtime.torch import callbacks, loop, metrics

    rng = np.random.RandomState(0)
    x = rng.randn(40, 3).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]], dtype="float32") > 0).astype("float32")
    kmodel = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="sigmoid")])
    kmodel.compile(optimizer=keras.optimizers.SGD(0.5, clipnorm=0.1), loss="binary_crossentropy",
                   metrics=[keras.metrics.Precision(name="precision")])
    kernel, bias = (np.array(w) for w in kmodel.get_weights())

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = torch.nn.Linear(3, 1)
            with torch.no_grad():
                self.dense.weight.copy_(torch.from_numpy(kernel.T))
                self.dense.bias.copy_(torch.from_numpy(bias))

        def forward(self, inputs):
            return torch.sigmoid(self.dense(inputs))

        def regularization_loss(self):
            return 0.0

    from transpiler.runtime.torch import losses

    model = Model()
    seen = []
    history = loop.fit(model, torch.optim.SGD(model.parameters(), lr=0.5), losses.binary_crossentropy_from_probs,
                       x, y, epochs=3, batch_size=8, verbose=0, validation_split=0.25,
                       class_weight={0: 1.0, 1: 2.0}, metrics=[("precision", 0, metrics.Precision())],
                       callbacks=[callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(e))],
                       shuffle=False, clipnorm=0.1)
    theirs = kmodel.fit(x, y, epochs=3, batch_size=8, verbose=0, validation_split=0.25,
                        class_weight={0: 1.0, 1: 2.0}, shuffle=False)
    assert seen == [0, 1, 2] and set(history.history) == set(theirs.history)
    for key in theirs.history:
        np.testing.assert_allclose(history.history[key], theirs.history[key], rtol=2e-4, atol=1e-6, err_msg=key)


def test_attribute_and_keyword_names_are_not_reads():
    """``scheduler.step()`` does not read a variable ``step``; ``f(shuffle=...)`` no ``shuffle``."""
    text = specialise(LOOP, "fit", frozenset({"scheduler"}))
    assert "for batch in loader:" in text and "scheduler.step()" in text
    assert runtime_prune._names_read(cst_expr("f(a.step, shuffle=b)")) == {"f", "a", "b"}


def cst_expr(code):
    import libcst

    return libcst.parse_expression(code)
