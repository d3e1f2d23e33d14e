"""Models used as layers of other models (issue 18, keras.io supervised_contrastive_learning,
semisupervised_simclr): a builder's model called on a tensor or placed in a Sequential, one
model used by two others, and what the output says about Keras' shared weights."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ENCODER = """
import numpy as np
import keras
from keras import layers


def create_encoder():
    inner_in = keras.Input(shape=(8,))
    inner = keras.Model(inner_in, layers.Dense(16)(inner_in), name="inner")
    inputs = keras.Input(shape=(8,))
    return keras.Model(inputs, inner(layers.Dense(8)(inputs)), name="enc")


def add_head(encoder):
    inputs = keras.Input(shape=(8,))
    outputs = layers.Dense(4)(encoder(inputs))
    return keras.Model(inputs, outputs)


def create_classifier(encoder):
    inputs = keras.Input(shape=(8,))
    outputs = layers.Dense(3)(encoder(inputs))
    return keras.Model(inputs, outputs)


encoder = create_encoder()
with_head = add_head(encoder)
classifier = create_classifier(encoder)
classifier.summary()
"""


def run_text(text: str, tmp_path) -> subprocess.CompletedProcess:
    (tmp_path / "out.py").write_text(text)
    done = program_runner.run([sys.executable, "out.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_builder_model_called_as_a_layer_by_two_models_translates_and_runs(tmp_path):
    """(the encoder holds only other models: the structure printer found no call of it)"""
    result = translate(textwrap.dedent(ENCODER), "case.py")
    assert [d.message for d in result.stubs] == []
    assert len(result.program.models) == 3
    out = run_text(result.text, tmp_path).stdout
    assert "Linear(in_features=16, out_features=3" in out, out


def test_a_shared_model_used_as_a_layer_is_the_same_instance(tmp_path):
    """Keras shares the encoder's layers between the models that call it: the torch modules take
    the program's encoder instance (``WithHead(encoder)``, ``self.enc = encoder``), so no
    warning about a copy at those calls, and both hold the one encoder."""
    result = translate(textwrap.dedent(ENCODER), "case.py")
    lines = textwrap.dedent(ENCODER).splitlines()
    warned = {d.span.line for d in result.program.diagnostics
              if d.severity == "warning" and "Keras shares its layers" in d.message}
    assert not warned & {i for i, text in enumerate(lines, 1) if "encoder(inputs)" in text}
    text = result.text + "\nprint('shared:', with_head.enc is encoder and classifier.enc is encoder)\n"
    assert "shared: True" in run_text(text, tmp_path).stdout


SEQUENTIAL_OF_BUILDERS = """
import keras
from keras import layers


def get_encoder():
    return keras.Sequential([keras.Input(shape=(8,)), layers.Dense(16, activation="relu")], name="encoder")


baseline = keras.Sequential([keras.Input(shape=(8,)), get_encoder(), layers.Dense(3)], name="baseline")
finetuning = keras.Sequential([keras.Input(shape=(8,)), get_encoder(), layers.Dense(2)], name="finetuning")
"""


def test_builder_called_in_a_sequential_is_a_model_of_its_own():
    result = translate(textwrap.dedent(SEQUENTIAL_OF_BUILDERS), "case.py")
    assert [d.message for d in result.stubs] == []
    names = {md.class_name for md in result.program.models}
    assert {"Baseline", "Finetuning"} <= names, names
    # Keras builds a new encoder at each call: nothing shared, nothing to warn about
    assert not [d for d in result.program.diagnostics if "Keras shares its layers" in d.message]


NEVER_COMPILED = """
import numpy as np
import keras
from keras import layers


def create_encoder():
    inputs = keras.Input(shape=(8,))
    return keras.Model(inputs, layers.Dense(4)(inputs))


def create_classifier(encoder, trainable=True):
    inputs = keras.Input(shape=(8,))
    model = keras.Model(inputs, layers.Dense(3)(encoder(inputs)))
    model.compile(optimizer="adam", loss="mse")
    return model


x = np.random.rand(16, 8).astype("float32")
y = np.random.rand(16, 3).astype("float32")
encoder = create_encoder()
classifier = create_classifier(encoder)
classifier.fit(x, y, epochs=1)
print("done")
"""


def test_training_call_of_a_model_compiled_in_its_builder_translates_never_as_the_keras_line(tmp_path):
    """(``classifier.fit(...)`` was printed as written: an nn.Module has no fit, the program
    failed when run, with no stub in its text; then it was a marked stub; since the compile
    inside the returning builder is read (frontend_ast/keras/training_returns.py) it trains)"""
    result = translate(textwrap.dedent(NEVER_COMPILED), "case.py")
    assert not result.stubs, [d.message for d in result.stubs]
    assert "\nclassifier.fit(" not in result.text
    assert "done" in run_text(result.text, tmp_path).stdout


DICT_INPUTS = """
import keras
from keras import layers


def create_cross_attention(latent_dim, data_dim, dim):
    inputs = {
        "latent_array": layers.Input(shape=(latent_dim, dim), name="latent_array"),
        "data_array": layers.Input(shape=(data_dim, dim), name="data_array"),
    }
    query = layers.Dense(dim)(inputs["latent_array"])
    value = layers.Dense(dim)(inputs["data_array"])
    attention = layers.MultiHeadAttention(num_heads=2, key_dim=dim)(query, value)
    return keras.Model(inputs=inputs, outputs=attention)


def build_model():
    cross = create_cross_attention(4, 6, 8)
    data = keras.Input(shape=(6, 8))
    latent = keras.Input(shape=(4, 8))
    out = cross({"data_array": data, "latent_array": latent})
    out = layers.GlobalAveragePooling1D()(out)
    return keras.Model([data, latent], layers.Dense(3)(out))
"""


def test_model_called_on_a_dict_of_tensors_is_a_layer_matched_by_input_name():
    """keras.io perceiver: ``self.cross_attention({"latent_array": ..., "data_array": ...})`` (a
    dict was taken for data: "model output", then "GlobalAveragePooling1D: called on something
    that is not a tensor"); the MultiHeadAttention inside, re-called by the model used as a
    layer, got its query and value as one list ("a call needs query and value")."""
    result = translate(textwrap.dedent(DICT_INPUTS), "case.py")
    assert [d.message for d in result.stubs] == []
    md = next(m for m in result.program.models if m.builder == "build_model")
    attention = next(n for n in md.graph.nodes if n.op == "multi_head_attention")
    data, latent = md.graph.inputs
    # the query comes from the latent input (dict key order differs from the model's inputs)
    producers = {id(v): v for v in [data, latent]}
    query_source = attention.inputs[0].producer.inputs[0]
    assert query_source is latent, (query_source, producers)
    assert attention.outputs[0].shape == (None, 4, 8)
