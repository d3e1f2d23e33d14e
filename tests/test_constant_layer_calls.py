"""A Functional model's layer called on constants only: ``layers.Embedding(...)(ops.arange(n))``
(keras.io's BERT and movielens position embeddings, built with the functional API).

Keras runs that call once, eagerly, while the model is built: the model holds the result as a
constant, the Embedding's weights are never trained and are not among the model's weights.
The torch module holds the same Embedding with its weights as non-persistent buffers (constants,
out of the state_dict, as they are out of Keras' model), so the constant is the same function of
the layer's initial weights, and a Keras checkpoint (which lacks them) converts with ``--weights``. Checked numerically (an initializer both
frameworks draw the same: ``Constant``), and the generated program runs and trains.

Also: a ``@dataclass`` hyperparameter class (``config.MAX_LEN``) reads as the plain class.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from program_runner import run
from transpiler.translate import translate

SOURCE = '''import keras
import tensorflow as tf
from keras import layers, ops
from dataclasses import dataclass


@dataclass
class Config:
    MAX_LEN = 6
    VOCAB = 20
    DIM = 4


config = Config()


def build_model():
    inp = keras.Input(shape=(config.MAX_LEN,), dtype="int32")
    tok = layers.Embedding(config.VOCAB, config.DIM)(inp)
    pos = layers.Embedding(config.MAX_LEN, config.DIM, name="position_embedding",
                           embeddings_initializer=keras.initializers.Constant(0.25))({positions})
    out = layers.Dense(3)(tok + pos)
    return keras.Model(inp, out)
'''

POSITIONS = {"ops_arange": "ops.arange(config.MAX_LEN)",
             "tf_range": "tf.range(start=0, limit=config.MAX_LEN, delta=1)"}


@pytest.mark.parametrize("positions", list(POSITIONS.values()), ids=list(POSITIONS))
def test_position_embedding_of_constants_in_a_functional_model(positions):
    import keras

    from harness import load_source_module, randomize_keras_weights
    from transpiler import verify

    source = SOURCE.replace("{positions}", positions)
    result = translate(source, "case.py")
    assert not result.stubs, [s.message for s in result.stubs]
    assert "module.register_buffer(name, weight.detach(), persistent=False)" in result.text, result.text
    assert any("called on constants only" in w.message for w in result.diagnostics)
    md = next(m for m in result.program.models if m.builder == "build_model")
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    kmodel = load_source_module(source).build_model()
    randomize_keras_weights(kmodel, 0)
    # Keras' model holds the constant, not the position Embedding's weights
    assert "position_embedding" not in [layer.name for layer in kmodel.layers]
    tmodel = generated.build_model()
    assert "position_embedding.weight" not in tmodel.state_dict()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel))  # (strict: the same keys)
    assert not tmodel.position_embedding.weight.requires_grad
    inputs = verify.random_inputs(md.graph, 3, 0)
    comparisons = verify.run_both(kmodel, tmodel, md.graph, inputs)
    assert comparisons and max(c.max_abs for c in comparisons) <= 1e-5, result.text
    # the trainable weights are the same ones on both sides
    trainable = sum(p.numel() for p in tmodel.parameters() if p.requires_grad)
    assert trainable == sum(int(np.prod(w.shape)) for w in kmodel.trainable_weights)


PROGRAM = SOURCE.replace("{positions}", "tf.range(start=0, limit=config.MAX_LEN, delta=1)") + '''

import numpy as np

model = build_model()
model.compile(optimizer="adam", loss="mse")
x = np.random.randint(0, config.VOCAB, size=(32, config.MAX_LEN))
y = np.random.random((32, config.MAX_LEN, 3))
model.fit(x, y, epochs=1, batch_size=8)
'''


def test_generated_program_with_a_constant_position_embedding_runs(tmp_path):
    result = translate(PROGRAM, "prog.py")
    assert not result.stubs, [s.message for s in result.stubs]
    path = tmp_path / "prog_torch.py"
    path.write_text(result.text)
    done = run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "loss" in done.stdout


def test_weights_of_a_model_with_a_constant_position_embedding_convert_and_load(tmp_path):
    """Keras' file has no weights for the layer called on constants: ``--weights`` converts the
    others (matched by path: Keras' counter of model.layers skips that layer) and the generated
    program loads them into its module with the same keys (strict)."""
    program = PROGRAM.replace("model.fit(", "model.save_weights('init.weights.h5')\nmodel.fit(")
    source = tmp_path / "prog.py"
    source.write_text(program)
    done = run([sys.executable, str(source)], cwd=tmp_path, capture_output=True, text=True, timeout=600,
               env={**__import__("os").environ, "KERAS_BACKEND": "tensorflow"}, preload=())
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "prog_torch.py"
    done = run([sys.executable, "-m", "transpiler", str(source), "--to", "pytorch", "-o", str(out), "--weights",
                str(tmp_path / "init.weights.h5"), "--weights-out", str(tmp_path / "init.pt")],
               cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    assert "\nfit(model" in text, text
    text = text.replace("\nfit(model", "\nmodel.load_state_dict(torch.load('init.pt'))\nprint('loaded')\nfit(model", 1)
    out.write_text(text)
    done = run([sys.executable, str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "loaded" in done.stdout and "loss" in done.stdout


def test_a_layer_called_on_constants_and_on_the_models_tensors_is_refused():
    source = '''import keras
from keras import layers, ops


def build_model():
    inp = keras.Input(shape=(6,), dtype="int32")
    emb = layers.Embedding(6, 4)
    pos = emb(ops.arange(6))
    out = layers.Dense(3)(emb(inp) + pos)
    return keras.Model(inp, out)
'''
    result = translate(source, "case.py")
    assert any("after a call on constants" in s.message for s in result.stubs), result.text


@pytest.mark.parametrize("decorator", ["@dataclass", "@dataclass(frozen=True)", "@dataclasses.dataclass"])
def test_a_dataclass_of_constants_reads_as_the_class(decorator):
    source = f'''import dataclasses
from dataclasses import dataclass
import keras
from keras import layers


{decorator}
class Config:
    WIDTH = 7
    UNITS = 3


config = Config()


def build_model():
    inp = keras.Input(shape=(config.WIDTH,))
    return keras.Model(inp, layers.Dense(config.UNITS)(inp))
'''
    result = translate(source, "case.py")
    assert not result.stubs, [s.message for s in result.stubs]
    md = next(m for m in result.program.models if m.builder == "build_model")
    assert md.graph.inputs[0].shape == (None, 7)
    assert md.graph.outputs[0].shape == (None, 3)


UNSTACK = '''import keras
import tensorflow as tf
from keras import layers, ops


def build_model():
    inp = keras.Input(shape=(3, 5))
    x = layers.Dense(4)(inp)
    parts = []
    for step in {call}:
        parts.append(ops.expand_dims(step, 1))
    x = layers.concatenate(parts[::-1], axis=1)
    return keras.Model(inp, layers.Dense(2)(x))
'''


@pytest.mark.parametrize("call", ["ops.unstack(x, axis=1)", "keras.ops.unstack(x, num=3, axis=-2)"])
def test_unstack_over_an_axis_after_the_batch_axis(call):
    """``ops.unstack(x, axis=1)`` (keras.io's movielens transformer): one ``x[:, i]`` per step;
    the steps put back in reverse order, so a wrong index shows in the numbers."""
    from harness import check_source, max_error

    checked = check_source(UNSTACK.replace("{call}", call))
    assert max_error(checked) <= 1e-5, checked.translation.text
    assert checked.keras_params == checked.torch_params


def test_unstack_of_the_batch_axis_is_refused():
    result = translate(UNSTACK.replace("{call}", "ops.unstack(x)"), "case.py")
    assert any("batch axis" in s.message for s in result.stubs), [s.message for s in result.stubs]
