"""Models Keras builds lazily (issue 18 item 3): a subclassed model or a keras.Sequential
never given an input shape is read from its first use (frontend_ast/keras/lazy.py), and
one whose shape nothing fixes is reported, never a crash of the whole program."""

from __future__ import annotations

import os

import pytest

from harness import check_source, max_error
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
HEAD = "import keras\nfrom keras import layers\n\n\n"


def _golden(case: str) -> str:
    with open(os.path.join(GOLDEN, case, "input.py")) as fh:
        return fh.read()


@pytest.mark.parametrize("case", ["subclass_built_on_first_use", "sequential_built_by_build_call"])
def test_lazily_built_golden_cases_are_numerically_equal(case):
    checked = check_source(_golden(case), batch=4)
    assert not checked.translation.stubs, [str(d) for d in checked.translation.stubs]
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5


TUPLE_INPUT = HEAD + '''def build_encoder():
    inputs = keras.Input(shape=(6,))
    return keras.Model(inputs, layers.Dense(8, activation="tanh")(inputs), name="encoder")


class Translator(keras.Model):
    """Two inputs: features for a built encoder, token ids for an Embedding."""

    def __init__(self, encoder, vocab=30):
        super().__init__()
        self.encoder = encoder
        self.embed = layers.Embedding(vocab, 8)
        self.pool = layers.GlobalAveragePooling1D()
        self.head = layers.Dense(3)

    def call(self, inputs):
        source = inputs[0]
        target = inputs[1]
        x = self.encoder(source)
        y = self.pool(self.embed(target))
        return self.head(layers.Concatenate()([x, y]))


def build_model():
    return Translator(build_encoder())
'''


def test_a_tuple_input_is_read_element_by_element():
    """``source = inputs[0]`` goes to a built encoder (its input shape), ``inputs[1]`` to an
    Embedding (token ids): the model takes both, with those shapes."""
    checked = check_source(TUPLE_INPUT, batch=4)
    assert not checked.translation.stubs, [str(d) for d in checked.translation.stubs]
    assert [v.shape for v in checked.graph.inputs] == [(None, 6), (None, None)]
    assert [v.dtype for v in checked.graph.inputs] == ["float32", "int64"]
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5


NEVER_CALLED = HEAD + '''class Block(layers.Layer):
    def __init__(self, dim, **kwargs):
        super().__init__(**kwargs)
        self.ffn = keras.Sequential([layers.Dense(dim, activation="relu"), layers.Dense(dim)])

    def call(self, x):
        return x + self.ffn(x)


unused_block = Block(8)


def build_model():
    inputs = keras.Input(shape=(4,))
    return keras.Model(inputs, layers.Dense(2)(inputs))
'''


def test_a_sequential_in_a_layer_that_is_never_called_does_not_abort_the_program():
    """Regression: 'Sequential model without a known input shape' aborted four keras.io
    scripts (mlp_image_classification, ner_transformers, semantic_image_clustering,
    transformer_asr) for ``self.ffn = keras.Sequential([...])`` in a layer never built."""
    result = translate(NEVER_CALLED, "net.py")
    assert [md.class_name for md in result.program.models] == ["Net"]
    assert not any("input shape" in d.message for d in result.stubs), [str(d) for d in result.stubs]


UNKNOWN_SHAPE = HEAD + '''def build_model():
    return keras.Sequential([layers.Dense(8, activation="relu"), layers.Dense(1)])


def load():
    import pandas
    return pandas.read_csv("data.csv")


model = build_model()
model.compile(optimizer="sgd", loss="mse")
model.fit(load(), epochs=1)
'''


def test_a_model_whose_input_shape_nothing_fixes_is_reported():
    """No Input, no build(), data of unknown shape, a first layer that takes any width: a
    marked stub naming the model, and its fit() reported, not a crash."""
    result = translate(UNKNOWN_SHAPE, "net.py")
    messages = [d.message for d in result.stubs]
    assert any("input shape is never given statically" in m for m in messages), messages
    assert any(m.startswith("model.fit()") for m in messages), messages
    compile(result.text, "net_torch.py", "exec")


def test_realworld_pattern_model_wrapping_a_layer_with_a_sequential_is_read():
    """ner_transformers' structure: a Model subclass fitted on a tf.data pipeline, whose
    call() hands token ids to an Embedding and then to a layer holding a Sequential."""
    source = _golden("subclass_built_on_first_use").replace(
        "def build_model():\n    return Tagger()",
        "import tensorflow as tf\n\nmodel = Tagger()\nmodel.compile(optimizer='adam', loss='mse')\n"
        "model.fit(tf.data.TextLineDataset('data.txt'), epochs=1)")
    result = translate(source, "net.py")
    assert [md.class_name for md in result.program.models] == ["Tagger"]
    assert "self.fc1 = nn.Linear(8, 16)" in result.text


def test_weights_moved_between_translated_models_run_like_keras(tmp_path):
    """``ema.set_weights(model.get_weights())`` and a restored ``get_weights()`` snapshot:
    the program runs and both models predict the same (0.0 apart), as in Keras."""
    import subprocess
    import sys

    result = translate(_golden("weights_copied_between_models"), "input.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    code = result.text.split('"""', 2)[2]  # (after the docstring, which names them)
    assert ".set_weights(" not in code and ".get_weights(" not in code
    out = tmp_path / "program.py"
    out.write_text(result.text)
    proc = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "0.0"


def test_weights_from_elsewhere_stay_a_marked_stub():
    """A list not read from a translated model is in Keras' layout (a Dense kernel is
    (in, out)): not loaded positionally into the torch module."""
    source = _golden("weights_copied_between_models").replace(
        "ema.set_weights(model.get_weights())", "ema.set_weights([w * 0 for w in model.get_weights()])")
    result = translate(source, "input.py")
    assert any("ema.set_weights" in d.message for d in result.stubs), [str(d) for d in result.stubs]
