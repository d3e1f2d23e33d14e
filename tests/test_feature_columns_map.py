"""tf.data ``.map()`` on a dataset of feature columns (keras.io structured_data_classification_
from_scratch: ``train_ds.map(lambda x, y: x[name]).map(lambda x: tf.expand_dims(x, -1))`` to
adapt a Normalization / lookup to one column): the runtime's FeatureDataset maps each batch as
tf.data does (runtime/torch/tabular.py), the lambdas translated as tf.data pipelines' are
(printers/torch/dataset_features.py); the statements were stubs ("tf.data ['map'] on a dataset
of feature columns"). fit() on such a mapped dataset takes its mapped columns and labels."""

from __future__ import annotations

import numpy as np
import pytest

import torch  # noqa: F401  (before TensorFlow)

from transpiler import verify
from transpiler.translate import translate

PROGRAM = '''
import numpy as np
import pandas as pd
import tensorflow as tf
import keras
from keras import layers

dataframe = pd.DataFrame({"age": [63.0, 37.0, 41.0, 56.0, 57.0],
                          "thal": ["fixed", "normal", "normal", "reversible", "fixed"],
                          "target": [1, 0, 0, 1, 0]})


def dataframe_to_dataset(dataframe):
    dataframe = dataframe.copy()
    labels = dataframe.pop("target")
    return tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))


train_ds = dataframe_to_dataset(dataframe)
train_ds = train_ds.batch(2)
feature_ds = train_ds.map(lambda x, y: x["age"])
feature_ds = feature_ds.map(lambda x: tf.expand_dims(x, -1))
thal_ds = train_ds.map(lambda x, y: x["thal"])
normalizer = layers.Normalization()
normalizer.adapt(feature_ds)

age = keras.Input(shape=(1,), name="age")
model = keras.Model(age, layers.Dense(1, activation="sigmoid")(normalizer(age)))
model.compile("adam", "binary_crossentropy")
'''


def _text(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def test_map_on_feature_columns_gives_tf_datas_batches_and_adapts_like_keras():
    result = translate(PROGRAM, "feature_map.py")
    assert not result.stubs, [d.message for d in result.stubs]
    assert "feature_ds = feature_ds.map(lambda x: x[..., None])" in result.text
    generated = verify.load_generated(result.text)
    original = verify.load_generated(PROGRAM, "keras_feature_map")
    ours = [np.asarray(b) for b in generated.feature_ds]
    theirs = [b.numpy() for b in original.feature_ds]
    assert [o.shape for o in ours] == [t.shape for t in theirs] == [(2, 1), (2, 1), (1, 1)]
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t)
    assert [[_text(s) for s in b] for b in generated.thal_ds] == \
        [[_text(s) for s in b.numpy()] for b in original.thal_ds]
    np.testing.assert_allclose(generated.model.normalizer_mean.numpy().reshape(-1),
                               np.asarray(original.normalizer.mean).reshape(-1), rtol=1e-6)
    np.testing.assert_allclose(generated.model.normalizer_variance.numpy().reshape(-1),
                               np.asarray(original.normalizer.variance).reshape(-1), rtol=1e-5)


def test_fit_on_a_mapped_dataset_of_feature_columns_takes_the_mapped_columns():
    """(it was a stub): fit() takes the mapped elements' columns by name and their labels, made
    once in order (FeatureDataset.materialized); a map giving two parts gives no sample weights."""
    source = PROGRAM + ("mapped = train_ds.map(lambda x, y: (x, 1 - y))\nhistory = model.fit(mapped, epochs=1)\n"
                        "made = mapped.materialized()\n")
    result = translate(source, "feature_map.py")
    assert not result.stubs, [d.message for d in result.stubs]
    assert "mapped.materialized().labels" in result.text and "sample_weight" not in result.text.split("class ")[-1]
    generated = verify.load_generated(result.text)
    np.testing.assert_array_equal(np.asarray(generated.made.labels), [0, 1, 1, 0, 1])
    np.testing.assert_array_equal(np.asarray(generated.made.column("age", (1,))).reshape(-1),
                                  [63.0, 37.0, 41.0, 56.0, 57.0])
    assert generated.made.sample_weights is None
