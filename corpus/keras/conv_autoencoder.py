"""Convolutional autoencoder on synthetic 28x28 "stroke" images.

Encoder: strided Conv2D + LeakyReLU (with the legacy alpha= argument) ->
Dense bottleneck. Decoder: Dense -> Reshape -> Conv2DTranspose (stride 2,
'same') -> bilinear UpSampling2D -> Conv2D. A pair of Permute layers swaps
height and width around the output convolution, which is harmless.
"""
import numpy as np
from tensorflow import keras
from tensorflow.keras.layers import LeakyReLU

IMG_SHAPE = (28, 28, 1)
LATENT_DIM = 16


def build_model(latent_dim=LATENT_DIM, filters=(16, 32)):
    inputs = keras.Input(shape=IMG_SHAPE)

    # ---- encoder: 28 -> 14 -> 7 ----
    x = keras.layers.Conv2D(filters[0], 3, strides=2, padding="same")(inputs)
    x = LeakyReLU(alpha=0.2)(x)  # Keras 2 spelling; Keras 3 calls it negative_slope
    x = keras.layers.Conv2D(filters[1], 3, strides=2, padding="same")(x)
    x = LeakyReLU(alpha=0.2)(x)
    x = keras.layers.Flatten()(x)
    latent = keras.layers.Dense(latent_dim, name="latent")(x)

    # ---- decoder: 7 -> 14 -> 28 ----
    x = keras.layers.Dense(7 * 7 * filters[1], activation="relu")(latent)
    x = keras.layers.Reshape((7, 7, filters[1]))(x)
    x = keras.layers.Conv2DTranspose(filters[1], 3, strides=2, padding="same")(x)
    x = LeakyReLU(alpha=0.2)(x)
    x = keras.layers.UpSampling2D(size=(2, 2), interpolation="bilinear")(x)
    x = keras.layers.Conv2D(filters[0], 3, padding="same", activation="relu")(x)

    # transpose H and W, convolve, transpose back
    x = keras.layers.Permute((2, 1, 3))(x)
    x = keras.layers.Conv2D(1, 3, padding="same", activation="sigmoid")(x)
    outputs = keras.layers.Permute((2, 1, 3))(x)
    return keras.Model(inputs, outputs, name="conv_autoencoder")


def make_images(n=320, seed=0):
    """Random horizontal and vertical bars on a dark background."""
    rng = np.random.RandomState(seed)
    imgs = np.zeros((n,) + IMG_SHAPE, dtype="float32")
    for i in range(n):
        for _ in range(rng.randint(1, 4)):
            pos, width = rng.randint(2, 24), rng.randint(1, 4)
            if rng.rand() < 0.5:
                imgs[i, pos : pos + width, :, 0] = 1.0
            else:
                imgs[i, :, pos : pos + width, 0] = 1.0
    return np.clip(imgs + 0.05 * rng.rand(*imgs.shape), 0.0, 1.0).astype("float32")


def main():
    images = make_images()
    train, test = images[:256], images[256:]

    autoencoder = build_model()
    autoencoder.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    # autoencoder: the input is its own target
    autoencoder.fit(train, train, epochs=2, batch_size=16, shuffle=True, verbose=2)

    test_mse = autoencoder.evaluate(test, test, verbose=0)
    print(f"reconstruction mse on held-out images: {test_mse:.5f}")

    recon = autoencoder.predict(test[:4], verbose=0)
    print("reconstruction shape:", recon.shape, "range:", float(recon.min()), float(recon.max()))
    autoencoder.save_weights("/tmp/conv_autoencoder.weights.h5")


if __name__ == "__main__":
    main()
