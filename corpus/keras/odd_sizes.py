"""Convolutions and pooling on odd spatial sizes.

Stride-2 'same' convolution and 'same' pooling on odd inputs pad
asymmetrically (the extra row/column goes at the bottom/right), which is
exactly the case that is easy to get wrong when porting. Shapes along the
way: 27 -> 14 -> 15 -> 13 -> 7 -> 7 -> 4 -> 3.
"""
import numpy as np
import tensorflow as tf

NUM_CLASSES = 4
INPUT_SHAPE = (27, 27, 3)


def build_model(input_shape=INPUT_SHAPE, num_classes=NUM_CLASSES, filters=8):
    inputs = tf.keras.Input(shape=input_shape)

    # 27x27 -> 14x14 (stride 2, 'same' rounds up)
    x = tf.keras.layers.Conv2D(filters, 3, strides=2, padding="same", activation="relu")(inputs)
    # asymmetric zero padding: one row on top, one column on the right -> 15x15
    x = tf.keras.layers.ZeroPadding2D(padding=((1, 0), (0, 1)))(x)
    # 15x15 -> 13x13
    x = tf.keras.layers.Conv2D(filters * 2, (3, 3), padding="valid", activation="relu")(x)

    # two pooling branches on the 13x13 map, both 'same' with stride 2 -> 7x7
    a = tf.keras.layers.MaxPooling2D(pool_size=3, strides=2, padding="same")(x)
    b = tf.keras.layers.AveragePooling2D(pool_size=(3, 3), strides=(2, 2), padding="same")(x)
    x = tf.keras.layers.Concatenate()([a, b])

    # even kernel with 'same' padding also pads unevenly: 7x7 -> 7x7
    x = tf.keras.layers.Conv2D(filters * 2, (2, 2), padding="same", activation="relu")(x)
    # 7x7 -> 4x4
    x = tf.keras.layers.AveragePooling2D(pool_size=2, padding="same")(x)
    # 4x4 -> 3x3
    x = tf.keras.layers.Cropping2D(cropping=((1, 0), (0, 1)))(x)

    x = tf.keras.layers.Flatten()(x)
    x = tf.keras.layers.Dense(32, activation="relu")(x)
    outputs = tf.keras.layers.Dense(num_classes, activation="softmax")(x)
    return tf.keras.Model(inputs=inputs, outputs=outputs, name="odd_sizes")


def main():
    rng = np.random.RandomState(0)
    n = 400
    x = rng.randn(n, *INPUT_SHAPE).astype("float32")
    # label = quadrant with the largest mean intensity
    quads = np.stack(
        [
            x[:, :13, :13].mean(axis=(1, 2, 3)),
            x[:, :13, 13:].mean(axis=(1, 2, 3)),
            x[:, 13:, :13].mean(axis=(1, 2, 3)),
            x[:, 13:, 13:].mean(axis=(1, 2, 3)),
        ],
        axis=1,
    )
    y = quads.argmax(axis=1)

    model = build_model()
    for layer in model.layers:
        print(f"{layer.name:28s} {layer.output.shape}")

    model.compile(
        optimizer=tf.keras.optimizers.Adam(2e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(x[:320], y[:320], epochs=2, batch_size=16, verbose=2)
    loss, acc = model.evaluate(x[320:], y[320:], verbose=0)
    print(f"loss={loss:.4f} acc={acc:.4f}")
    print("predictions:", model.predict(x[:5], verbose=0).argmax(-1))


if __name__ == "__main__":
    main()
