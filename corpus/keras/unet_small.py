"""Tiny U-Net for binary segmentation of synthetic 32x32 images.

The encoder halves resolution with MaxPooling2D; the decoder restores it with
Conv2DTranspose on one level and UpSampling2D + conv on the other, and skip
connections are joined with Concatenate.
"""
import numpy as np
import keras
from keras.layers import (
    Input,
    Conv2D,
    MaxPooling2D,
    UpSampling2D,
    Conv2DTranspose,
    Concatenate,
    BatchNormalization,
    SpatialDropout2D,
)

IMG_SIZE = 32
BASE_FILTERS = 8


def conv_block(x, filters):
    """Two 3x3 convs, the usual U-Net building block."""
    x = Conv2D(filters, 3, padding="same", activation="relu")(x)
    x = BatchNormalization()(x)
    x = Conv2D(filters, 3, padding="same", activation="relu")(x)
    return x


def build_model(input_shape=(IMG_SIZE, IMG_SIZE, 1), base_filters=BASE_FILTERS):
    inputs = Input(shape=input_shape)

    # --- encoder ---
    e1 = conv_block(inputs, base_filters)           # 32x32
    p1 = MaxPooling2D(pool_size=(2, 2))(e1)          # 16x16
    e2 = conv_block(p1, base_filters * 2)           # 16x16
    p2 = MaxPooling2D(pool_size=(2, 2))(e2)          # 8x8

    # --- bottleneck ---
    b = conv_block(p2, base_filters * 4)
    b = SpatialDropout2D(0.1)(b)

    # --- decoder ---
    u2 = Conv2DTranspose(base_filters * 2, kernel_size=2, strides=2, padding="same")(b)
    u2 = Concatenate()([u2, e2])                     # skip connection
    d2 = conv_block(u2, base_filters * 2)

    u1 = UpSampling2D(size=(2, 2))(d2)
    u1 = Conv2D(base_filters, 1, activation="relu")(u1)
    u1 = Concatenate(axis=-1)([u1, e1])              # skip connection
    d1 = conv_block(u1, base_filters)

    # per-pixel foreground probability
    outputs = Conv2D(1, (1, 1), activation="sigmoid")(d1)
    return keras.Model(inputs=inputs, outputs=outputs, name="unet_small")


def make_data(n=256, seed=0):
    """Noisy images containing one bright rectangle; the mask marks it."""
    rng = np.random.RandomState(seed)
    images = 0.3 * rng.rand(n, IMG_SIZE, IMG_SIZE, 1).astype("float32")
    masks = np.zeros((n, IMG_SIZE, IMG_SIZE, 1), dtype="float32")
    for i in range(n):
        h, w = rng.randint(6, 16, size=2)
        r, c = rng.randint(0, IMG_SIZE - h), rng.randint(0, IMG_SIZE - w)
        images[i, r : r + h, c : c + w] += 0.6
        masks[i, r : r + h, c : c + w] = 1.0
    return images, masks


def main():
    images, masks = make_data()
    model = build_model()
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    model.fit(images[:224], masks[:224], epochs=2, batch_size=16, verbose=2)

    loss, acc = model.evaluate(images[224:], masks[224:], verbose=0)
    print("val loss %.4f  pixel acc %.4f" % (loss, acc))

    pred = model.predict(images[:3], verbose=0)
    print("predicted foreground fraction:", (pred > 0.5).mean(axis=(1, 2, 3)))
    print("true foreground fraction:     ", masks[:3].mean(axis=(1, 2, 3)))


if __name__ == "__main__":
    main()
