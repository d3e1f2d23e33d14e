"""Bidirectional sequence tagger (a toy POS/NER-style model).

Embedding -> Bidirectional(LSTM, merge_mode="concat") ->
Bidirectional(GRU, merge_mode="sum") -> LayerNormalization -> per-timestep
Dense softmax. Training code lives directly in the __main__ block.
"""
import numpy as np
from keras.layers import (
    GRU,
    LSTM,
    Bidirectional,
    Dense,
    Dropout,
    Embedding,
    Input,
    LayerNormalization,
)
from keras.models import Model

VOCAB_SIZE = 300
SEQ_LEN = 25
NUM_TAGS = 5


def build_model(vocab_size=VOCAB_SIZE, seq_len=SEQ_LEN, num_tags=NUM_TAGS, hidden=32):
    words = Input(shape=(seq_len,), dtype="int32")
    x = Embedding(vocab_size, 32)(words)
    x = Bidirectional(LSTM(hidden, return_sequences=True), merge_mode="concat")(x)
    # forward and backward GRU outputs are added instead of concatenated
    x = Bidirectional(GRU(hidden // 2, return_sequences=True), merge_mode="sum")(x)
    x = LayerNormalization(epsilon=1e-5)(x)
    x = Dropout(0.1)(x)
    # Dense on a 3D tensor acts on every timestep independently
    tags = Dense(num_tags, activation="softmax")(x)
    return Model(inputs=words, outputs=tags, name="bilstm_tagger")


if __name__ == "__main__":
    rng = np.random.RandomState(0)
    n = 400
    tokens = rng.randint(0, VOCAB_SIZE, size=(n, SEQ_LEN)).astype("int32")
    # tag depends on the current and previous token, so context matters
    prev = np.concatenate([np.zeros((n, 1), "int32"), tokens[:, :-1]], axis=1)
    tags = (tokens + prev) % NUM_TAGS

    model = build_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(tokens[:320], tags[:320], epochs=2, batch_size=32, verbose=2)

    loss, acc = model.evaluate(tokens[320:], tags[320:], verbose=0)
    print("token-level accuracy: %.3f (loss %.3f)" % (acc, loss))

    pred = model.predict(tokens[:2], verbose=0).argmax(axis=-1)
    print("pred tags:", pred[0][:10])
    print("gold tags:", tags[0][:10])
