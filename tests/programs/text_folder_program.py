"""keras.io text classification from scratch, reduced: a folder of text files per class (the
data folder is $TRANSPILED_DATA_HOME/reviews), vectorized in a tf.data .map (tests/test_text_layers_program.py)."""
import os
import keras
import tensorflow as tf
from keras import layers

folder = os.path.join(os.environ.get("TRANSPILED_DATA_HOME", "data"), "reviews")
raw_train_ds = keras.utils.text_dataset_from_directory(folder, batch_size=4, validation_split=0.25,
                                                       subset="training", seed=1337)
raw_val_ds = keras.utils.text_dataset_from_directory(folder, batch_size=4, validation_split=0.25,
                                                     subset="validation", seed=1337)
print("classes:", raw_train_ds.class_names)
vectorize_layer = layers.TextVectorization(max_tokens=50, output_sequence_length=8)
text_ds = raw_train_ds.map(lambda x, y: x)
vectorize_layer.adapt(text_ds)


def vectorize_text(text, label):
    text = tf.expand_dims(text, -1)
    return vectorize_layer(text), label


train_ds = raw_train_ds.map(vectorize_text)
val_ds = raw_val_ds.map(vectorize_text)


def build_model():
    inputs = keras.Input(shape=(8,), dtype="int64")
    x = layers.Embedding(50, 8)(inputs)
    x = layers.GlobalAveragePooling1D()(x)
    outputs = layers.Dense(1, activation="sigmoid")(x)
    return keras.Model(inputs, outputs)


model = build_model()
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
model.fit(train_ds, validation_data=val_ds, epochs=2)
print("vocabulary:", vectorize_layer.get_vocabulary()[:6])
