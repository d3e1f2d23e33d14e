"""Text layers on the data: a TextVectorization and a StringLookup adapted to the training
strings, applied in a tf.data .map; the vocabulary's size sizes the Embedding."""
import numpy as np
import keras
import tensorflow as tf
from keras import layers

texts = np.array(["a good film", "a bad film", "good fun", "awful and bad", "great plot", "dull plot"])
labels = np.array(["pos", "neg", "pos", "neg", "pos", "neg"])
vectorizer = layers.TextVectorization(max_tokens=20, output_sequence_length=4)
vectorizer.adapt(texts)
label_ids = layers.StringLookup(num_oov_indices=0)
label_ids.adapt(labels)


def build_model():
    inputs = keras.Input(shape=(4,), dtype="int64")
    x = layers.Embedding(vectorizer.vocabulary_size(), 8)(inputs)
    x = layers.GlobalAveragePooling1D()(x)
    return keras.Model(inputs, layers.Dense(2, activation="softmax")(x))


dataset = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(3).map(
    lambda x, y: (vectorizer(x), label_ids(y)))
model = build_model()
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(dataset, epochs=2)
