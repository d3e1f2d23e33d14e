"""1D-CNN classifier for synthetic multichannel time series.

Three signal families (sine, square wave, random walk) are told apart by a
small stack of dilated / strided / grouped Conv1D layers. Also exercises
ZeroPadding1D, Cropping1D, UpSampling1D, Conv1DTranspose, SpatialDropout1D
and the Maximum / Minimum / Average merge layers.
"""
import numpy as np
import keras
import keras.layers as kl

SEQ_LEN = 64
CHANNELS = 4
NUM_CLASSES = 3
DILATIONS = [1, 2, 4]


def build_model(seq_len=SEQ_LEN, channels=CHANNELS, filters=16, dilations=DILATIONS):
    inputs = keras.Input(shape=(seq_len, channels))

    # pad 2 steps on each side so a valid kernel of 5 keeps the length at 64
    x = kl.ZeroPadding1D(padding=2)(inputs)
    x = kl.Conv1D(filters, 5, activation="relu")(x)
    x = kl.SpatialDropout1D(0.1)(x)

    # residual stack of dilated convolutions, receptive field grows 2x per layer
    for rate in dilations:
        y = kl.Conv1D(filters, 3, padding="same", dilation_rate=rate, activation="relu")(x)
        x = kl.add([x, y])

    # 64 -> 32 with a strided conv, then 32 -> 16 by pooling
    x = kl.Conv1D(filters * 2, 3, strides=2, padding="same", activation="relu")(x)
    x = kl.AveragePooling1D(pool_size=2)(x)
    x = kl.Conv1D(filters * 2, 1, groups=4, use_bias=False)(x)  # grouped 1x1 mixing

    # trim one step from each end (16 -> 14), then bring resolution back up
    x = kl.Cropping1D(cropping=(1, 1))(x)
    up_a = kl.UpSampling1D(size=2)(x)                                       # 28
    up_b = kl.Conv1DTranspose(filters * 2, 4, strides=2, padding="same")(x)  # 28
    hi = kl.Maximum()([up_a, up_b])
    lo = kl.Minimum()([up_a, up_b])
    x = kl.Average()([hi, lo])

    x = kl.MaxPooling1D(pool_size=2, strides=2)(x)  # 14
    x = kl.GlobalAveragePooling1D()(x)
    outputs = kl.Dense(NUM_CLASSES, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="conv1d_timeseries")


def make_data(n=600, seed=0):
    rng = np.random.RandomState(seed)
    t = np.arange(SEQ_LEN, dtype="float32")
    x = np.zeros((n, SEQ_LEN, CHANNELS), dtype="float32")
    y = rng.randint(0, NUM_CLASSES, size=n)
    for i in range(n):
        freq = rng.uniform(0.05, 0.3)
        phase = rng.uniform(0, 2 * np.pi, size=CHANNELS)
        if y[i] == 0:
            sig = np.sin(freq * t[:, None] + phase)
        elif y[i] == 1:
            sig = np.sign(np.sin(freq * t[:, None] + phase))
        else:
            sig = np.cumsum(rng.randn(SEQ_LEN, CHANNELS), axis=0) / 4.0
        x[i] = sig + 0.1 * rng.randn(SEQ_LEN, CHANNELS)
    return x, y


def main():
    x, y = make_data()
    model = build_model()
    print(f"{model.name}: {model.count_params()} parameters")

    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x[:500], y[:500], epochs=2, batch_size=25, verbose=2)

    loss, acc = model.evaluate(x[500:], y[500:], verbose=0)
    print("test accuracy = {:.3f}, loss = {:.3f}".format(acc, loss))
    print("pred:", model.predict(x[500:508], verbose=0).argmax(axis=1), "true:", y[500:508])


if __name__ == "__main__":
    main()
