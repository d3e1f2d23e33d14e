"""Patient classifier on a CSV read with pandas (keras.io's structured data classification
from scratch, reduced).

The CSV is read with ``pd.read_csv``, split with ``sample(frac=..., random_state=...)`` and
``drop``; each DataFrame becomes ``tf.data.Dataset.from_tensor_slices((dict(df), labels))``
with the target ``pop``-ed off, batched. The model has one named ``keras.Input`` per column;
an IntegerLookup and a StringLookup with fixed vocabularies one-hot encode the categorical
columns inside the model (unknown values go to the OOV index). Predictions are made on a
dataset of the feature columns alone. The CSV is the program's input (tests write a stand-in).
"""
import numpy as np
import pandas as pd
import keras
import tensorflow as tf
from keras import layers

CSV_PATH = "patients.csv"
CP_VOCABULARY = [0, 1, 2, 3]
THAL_VOCABULARY = ["fixed", "normal", "reversible"]


def dataframe_to_dataset(dataframe, batch_size=16):
    dataframe = dataframe.copy()
    labels = dataframe.pop("target")
    ds = tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))
    return ds.batch(batch_size)


def build_model():
    age = keras.Input(shape=(1,), name="age")  # (in decades)
    chol = keras.Input(shape=(1,), name="chol")
    cp = keras.Input(shape=(1,), name="cp", dtype="int64")
    thal = keras.Input(shape=(1,), name="thal", dtype="string")
    cp_encoded = layers.IntegerLookup(vocabulary=CP_VOCABULARY, output_mode="one_hot")(cp)
    thal_encoded = layers.StringLookup(vocabulary=THAL_VOCABULARY, output_mode="one_hot")(thal)
    x = layers.concatenate([age, chol, cp_encoded, thal_encoded])
    x = layers.Dense(16, activation="relu")(x)
    outputs = layers.Dense(1, activation="sigmoid")(x)
    return keras.Model([age, chol, cp, thal], outputs, name="csv_feature_classifier")


def main():
    dataframe = pd.read_csv(CSV_PATH)
    dataframe["chol"] = dataframe["chol"] / 100.0  # (mg/dl in hundreds)
    val_dataframe = dataframe.sample(frac=0.2, random_state=1337)
    train_dataframe = dataframe.drop(val_dataframe.index)
    print(f"{len(train_dataframe)} training rows, {len(val_dataframe)} validation rows")
    train_ds = dataframe_to_dataset(train_dataframe)
    val_ds = dataframe_to_dataset(val_dataframe)
    model = build_model()
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(train_ds, epochs=2, validation_data=val_ds)
    sample = val_dataframe.drop(columns=["target"]).head(4)
    sample_ds = tf.data.Dataset.from_tensor_slices(dict(sample)).batch(4)
    probabilities = model.predict(sample_ds)
    print("probabilities:", np.round(probabilities[:, 0], 3).tolist())


if __name__ == "__main__":
    main()
