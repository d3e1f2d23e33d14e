"""StringLookup / IntegerLookup / Normalization adapted inside a helper called on a model's
tensors (issue 18, the pattern of keras.io's structured_data_classification_from_scratch):
``encode(feature, name, dataset)`` makes a lookup, adapts it on ``dataset.map(lambda x, y:
x[name])`` and calls it on the ``keras.Input``. The adapt() runs where the helper is called
(frontend_ast/keras/data_adapt.py), the vocabulary is built at run time as Keras builds it
(runtime/torch/preprocessing.py ``adapt_lookup``) and the encoding's width, which sizes the
Dense after it, is a run-time size the generated module takes as a constructor argument."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow)

import program_runner  # (tests/program_runner.py)
from transpiler import verify
from transpiler.runtime.torch import preprocessing, text
from transpiler.translate import translate

RNG = np.random.default_rng(3)
INTS = RNG.integers(0, 5, size=(40, 1))
STRINGS = np.array([["a", "bb", "c", "a", "zz"][i] for i in RNG.integers(0, 5, 40)], dtype=object)[:, None]


def _cases():
    for kind, data in (("IntegerLookup", INTS), ("StringLookup", STRINGS)):
        other = {"num_oov_indices": 0} if kind == "IntegerLookup" else {"mask_token": ""}
        for mode in ("int", "one_hot", "multi_hot", "binary", "count", "tf_idf"):
            for kwargs in ({}, other, {"max_tokens": 4}, {"max_tokens": 6, "pad_to_max_tokens": True}):
                if mode == "int" and (kwargs.get("num_oov_indices") == 0 or kwargs.get("pad_to_max_tokens")):
                    continue
                yield kind, data, mode, kwargs


@pytest.mark.parametrize("kind, data, mode, kwargs", list(_cases()))
def test_adapted_lookup_equals_keras(kind, data, mode, kwargs):
    """``adapt_lookup`` on batches (as a mapped tf.data pipeline gives them) builds Keras'
    vocabulary (by count, ties by token), a module's lookup built before or after it holds it,
    and the encoding and its width equal Keras' in every output mode."""
    import keras

    layer = getattr(keras.layers, kind)(output_mode=mode, **kwargs)
    layer.adapt(data)
    key = f"test_{kind}_{mode}_{sorted(kwargs.items())}"
    before = torch.nn.Module()
    before.lookup = getattr(text, kind)(output_mode=mode, **kwargs)
    preprocessing.adapted_state(before, "lookup", key)  # (built before adapt: kept in step)
    batches = [torch.as_tensor(data[i:i + 8]) if kind == "IntegerLookup" else data[i:i + 8]
               for i in range(0, len(data), 8)]
    preprocessing.adapt_lookup(key, getattr(text, kind)(output_mode=mode, **kwargs), batches)
    after = torch.nn.Module()
    after.lookup = getattr(text, kind)(output_mode=mode, **kwargs)
    preprocessing.adapted_state(after, "lookup", key)
    probe = data[:6] if kwargs.get("num_oov_indices") == 0 else \
        np.concatenate([data[:6], np.array([[9]]) if kind == "IntegerLookup" else np.array([["q"]], dtype=object)])
    expected = np.asarray(layer(probe))
    for module in (before, after):
        got = module.lookup(probe).numpy()
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    if mode != "int":
        assert preprocessing.adapted_depth(key) == expected.shape[-1] == layer.vocabulary_size() or \
            kwargs.get("pad_to_max_tokens") and preprocessing.adapted_depth(key) == 6


PROGRAM = '''
import numpy as np
import pandas as pd
import tensorflow as tf
import keras
from keras import layers

rng = np.random.default_rng(0)
frame = pd.DataFrame({
    "colour": rng.choice(["red", "green", "blue", "teal"], 64),
    "size": rng.integers(0, 5, 64),
    "weight": rng.normal(3.0, 2.0, 64),
    "target": rng.integers(0, 2, 64),
})


def frame_to_dataset(frame):
    frame = frame.copy()
    labels = frame.pop("target")
    return tf.data.Dataset.from_tensor_slices((dict(frame), labels))


train_ds = frame_to_dataset(frame).batch(16)


def encode_numerical(feature, name, dataset):
    normalizer = layers.Normalization()
    feature_ds = dataset.map(lambda x, y: x[name])
    feature_ds = feature_ds.map(lambda x: tf.expand_dims(x, -1))
    normalizer.adapt(feature_ds)
    return normalizer(feature)


def encode_categorical(feature, name, dataset, is_string):
    lookup_class = layers.StringLookup if is_string else layers.IntegerLookup
    lookup = lookup_class(output_mode="binary")
    feature_ds = dataset.map(lambda x, y: x[name])
    feature_ds = feature_ds.map(lambda x: tf.expand_dims(x, -1))
    lookup.adapt(feature_ds)
    return lookup(feature)


colour = keras.Input(shape=(1,), name="colour", dtype="string")
size = keras.Input(shape=(1,), name="size", dtype="int64")
weight = keras.Input(shape=(1,), name="weight")
all_inputs = [colour, size, weight]
features = layers.concatenate([
    encode_categorical(colour, "colour", train_ds, True),
    encode_categorical(size, "size", train_ds, False),
    encode_numerical(weight, "weight", train_ds),
])
x = layers.Dense(8, activation="relu")(features)
output = layers.Dense(1, activation="sigmoid")(x)
model = keras.Model(all_inputs, output)
'''

TRAINING = '''
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
model.fit(train_ds, epochs=2)
sample = {"colour": "teal", "size": 7, "weight": 2.5}
input_dict = {name: tf.convert_to_tensor([value]) for name, value in sample.items()}
predictions = model.predict(input_dict)
print("probability", float(predictions[0][0]))
'''


def test_helper_adapted_lookups_translate_with_run_time_widths():
    result = translate(PROGRAM, "tabular_helpers.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    flat = " ".join(result.text.split()).replace('"', "'")
    assert "adapt_lookup( 'string_lookup', StringLookup(output_mode='binary'), " \
           "train_ds.map(lambda x, y: x['colour']).map(lambda x: " in flat
    assert "nn.Linear(string_lookup_depth + integer_lookup_depth + 1, 8)" in flat
    assert "model = Net(adapted_depth('string_lookup'), adapted_depth('integer_lookup'))" in flat
    assert "def encode_categorical" not in result.text  # (the helper goes with the model's statements)


def test_helper_adapted_model_predicts_like_keras():
    """The generated module, its lookups' vocabularies and Normalization's statistics computed
    by the generated program itself, gives Keras' predictions from the same Dense weights,
    out-of-vocabulary tokens included."""
    import keras

    result = translate(PROGRAM, "tabular_helpers.py")
    md = result.program.models[0]
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    original = verify.load_generated(PROGRAM, "keras_tabular_helpers")
    kmodel = original.model
    weights = {k: v for k, v in verify.map_keras_weights(md.graph, kmodel).items() if "normaliz" not in k}
    tmodel = generated.model.eval()
    missing, unexpected = tmodel.load_state_dict(weights, strict=False)
    assert not unexpected and all("normaliz" in k for k in missing), (missing, unexpected)
    colour = np.array([["red"], ["teal"], ["purple"], ["blue"], ["green"]], dtype=object)
    size = np.array([[0], [4], [9], [2], [-1]], dtype=np.int64)
    weight = np.array([[1.0], [3.0], [5.5], [-2.0], [0.0]], dtype=np.float32)
    expected = np.asarray(kmodel([colour, size, weight]))
    with torch.no_grad():
        got = tmodel(colour, torch.from_numpy(size), torch.from_numpy(weight)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_helper_adapted_program_trains_and_predicts_on_a_dict_of_scalars(tmp_path):
    """The whole generated program runs as plain PyTorch: adapt, build, fit, and predict on a
    dict of one-value tensors (Keras gives a (1,) input the missing last axis of (None, 1))."""
    result = translate(PROGRAM + TRAINING, "tabular_helpers.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    out = tmp_path / "tabular_helpers_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300,
                             cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "probability" in run.stdout and "Epoch 2/2" in run.stdout


ATTENTION = '''
import math
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(1)
VOCABULARY = sorted(set(f"m{i}" for i in rng.integers(0, 30, 200)))


def create_model():
    ids = keras.Input(shape=(3,), name="ids", dtype="string")
    dims = int(math.sqrt(len(VOCABULARY)))
    index = layers.StringLookup(vocabulary=VOCABULARY, mask_token=None, num_oov_indices=0)(ids)
    encoded = layers.Embedding(input_dim=len(VOCABULARY), output_dim=dims)(index)
    attention = layers.MultiHeadAttention(num_heads=2, key_dim=encoded.shape[2])(encoded, encoded)
    x = layers.LayerNormalization()(layers.Add()([encoded, attention]))
    outputs = layers.Dense(1)(layers.Flatten()(x))
    return keras.Model(ids, outputs)


model = create_model()
'''


def test_attention_whose_head_size_is_computed_at_run_time_predicts_like_keras():
    """keras.io movielens: ``MultiHeadAttention(key_dim=x.shape[2])`` where that axis is an
    Embedding's ``int(math.sqrt(len(vocabulary)))``: the head size is a run-time size (the heads
    split with -1), never its stand-in number, and the module equals Keras on the same weights."""
    import keras

    result = translate(ATTENTION, "attention_sizes.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert ".unflatten(-1, (2, -1))" in result.text
    md = result.program.models[0]
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    kmodel = verify.load_generated(ATTENTION, "keras_attention_sizes").model
    tmodel = generated.model.eval()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    ids = np.array([["m1", "m2", "m3"], ["m4", "m1", "m9"]], dtype=object)
    known = set(generated.VOCABULARY)
    ids = np.vectorize(lambda t: t if t in known else generated.VOCABULARY[0], otypes=[object])(ids)
    with torch.no_grad():
        got = tmodel(ids).numpy()
    np.testing.assert_allclose(got, np.asarray(kmodel(ids)), rtol=1e-5, atol=1e-5)
