"""Bag-of-embeddings sentiment classifier on raw strings (keras.io's text classification from
scratch, reduced).

A TextVectorization adapted to the training texts turns them into padded token ids and a
StringLookup (no OOV index) turns the string labels into class ids, both in a tf.data ``.map``
over the batches; the vocabularies' sizes (known only when the program runs) set the
Embedding's and the output's widths; an inverted StringLookup turns predictions back into
label strings.
"""
import numpy as np
import keras
import tensorflow as tf
from keras import layers

SEQUENCE_LENGTH = 12
WORDS = {
    "pos": ["great", "good", "fun", "loved", "wonderful", "best"],
    "neg": ["bad", "boring", "awful", "hated", "worst", "dull"],
}
FILLER = ["the", "film", "was", "a", "plot", "and", "acting", "really", "it", "movie"]


def make_texts(n=96, seed=0):
    rng = np.random.RandomState(seed)
    texts, labels = [], []
    for i in range(n):
        label = "pos" if i % 2 else "neg"
        words = list(rng.choice(FILLER, rng.randint(3, 9))) + list(rng.choice(WORDS[label], 2))
        rng.shuffle(words)
        texts.append(" ".join(words).capitalize() + rng.choice([".", "!", "?!"]))
        labels.append(label)
    return np.array(texts), np.array(labels)


texts, labels = make_texts()
vectorize_layer = layers.TextVectorization(max_tokens=40, output_mode="int", output_sequence_length=SEQUENCE_LENGTH)
vectorize_layer.adapt(texts[:80])
label_lookup = layers.StringLookup(num_oov_indices=0)
label_lookup.adapt(labels[:80])


def build_model():
    inputs = keras.Input(shape=(SEQUENCE_LENGTH,), dtype="int64")
    x = layers.Embedding(vectorize_layer.vocabulary_size(), 16)(inputs)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dense(16, activation="relu")(x)
    outputs = layers.Dense(label_lookup.vocabulary_size(), activation="softmax")(x)
    return keras.Model(inputs, outputs, name="text_lookup_classifier")


def vectorize_text(text, label):
    return vectorize_layer(text), label_lookup(label)


def main():
    print("vocabulary:", vectorize_layer.get_vocabulary()[:8], "classes:", label_lookup.get_vocabulary())
    train_ds = tf.data.Dataset.from_tensor_slices((texts[:80], labels[:80])).batch(16).map(vectorize_text)
    val_ds = tf.data.Dataset.from_tensor_slices((texts[80:], labels[80:])).batch(16).map(vectorize_text)
    model = build_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(train_ds, epochs=3, validation_data=val_ds)
    probabilities = model.predict(vectorize_layer(texts[80:84]))
    index_to_label = layers.StringLookup(vocabulary=label_lookup.get_vocabulary(), invert=True, num_oov_indices=0)
    print("predicted:", np.asarray(index_to_label(np.argmax(probabilities, axis=1))).tolist())


if __name__ == "__main__":
    main()
