"""A tf.data ``.map(process)`` whose function is defined inside the function building the
pipeline (keras.io movielens' ``get_dataset_from_csv``): ``process`` splits comma-separated
sequences with ``tf.strings.split(...).to_tensor()`` and returns (features, target). It is
translated in place (runtime/torch/text.py ``strings_split``), fit takes its labels from the
pairs it returns, and a lookup a helper's block calls is an attribute of the module holding it
(issue 18)."""

from __future__ import annotations

import os
import sys

import program_runner  # (tests/program_runner.py)
from transpiler.translate import translate

PROGRAM = '''
import math
import numpy as np
import pandas as pd
import tensorflow as tf
import keras
from keras import layers
from keras.layers import StringLookup

rng = np.random.default_rng(0)
items = [f"item_{i}" for i in range(12)]
frame = pd.DataFrame({
    "user": rng.choice(["u1", "u2", "u3"], 48),
    "sequence": [",".join(rng.choice(items, 4)) for _ in range(48)],
    "ratings": [",".join(str(float(r)) for r in rng.integers(1, 6, 4)) for _ in range(48)],
})
VOCABULARY = list(pd.Series(items).unique())


def get_dataset(frame, batch_size=8):
    def process(features):
        ids = tf.strings.split(features["sequence"], ",").to_tensor()
        features["target_item"] = ids[:, -1]
        features["sequence"] = ids[:, :-1]
        ratings = tf.strings.to_number(tf.strings.split(features["ratings"], ","), tf.dtypes.float32).to_tensor()
        features["ratings"] = ratings[:, :-1]
        return features, ratings[:, -1]

    return tf.data.Dataset.from_tensor_slices(dict(frame)).batch(batch_size).map(process)


def encode(inputs):
    dims = int(math.sqrt(len(VOCABULARY)))
    lookup = StringLookup(vocabulary=VOCABULARY, mask_token=None, num_oov_indices=0)
    embedding = layers.Embedding(input_dim=len(VOCABULARY), output_dim=dims)

    def encode_item(item):
        return embedding(lookup(item))

    target = encode_item(inputs["target_item"])
    sequence = encode_item(inputs["sequence"]) * keras.ops.expand_dims(inputs["ratings"], -1)
    return layers.concatenate([sequence, target], axis=1)


def create_model():
    inputs = {
        "sequence": layers.Input(name="sequence", shape=(3,), dtype="string"),
        "target_item": layers.Input(name="target_item", shape=(1,), dtype="string"),
        "ratings": layers.Input(name="ratings", shape=(3,), dtype="float32"),
    }
    features = layers.Flatten()(encode(inputs))
    outputs = layers.Dense(1)(layers.Dense(8, activation="relu")(features))
    return keras.Model(inputs=inputs, outputs=outputs)


model = create_model()
model.compile(optimizer="adam", loss="mse")
train_dataset = get_dataset(frame)
history = model.fit(train_dataset, epochs=2)
print("final loss", history.history["loss"][-1])
'''


def test_nested_map_function_translates_and_trains(tmp_path):
    result = translate(PROGRAM, "nested_map.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "ids = strings_split(features[\"sequence\"], sep=\",\").to_tensor()" in result.text
    out = tmp_path / "nested_map_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300,
                             cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "final loss" in run.stdout and "Epoch 2/2" in run.stdout
