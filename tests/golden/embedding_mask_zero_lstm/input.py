import keras
from keras import layers


def build_model(vocab=100, maxlen=12):
    ids = keras.Input(shape=(maxlen,), dtype="int32", name="ids")
    # token 0 is padding: the layers below skip it
    x = layers.Embedding(vocab, 16, mask_zero=True)(ids)
    x = layers.LSTM(8, return_sequences=True)(x)
    pooled = layers.GlobalAveragePooling1D()(x)
    return keras.Model(ids, layers.Dense(1, activation="sigmoid")(pooled))
