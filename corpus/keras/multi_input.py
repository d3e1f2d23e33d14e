"""Two-input, two-output functional model.

An image branch (16x16x3) and a tabular branch (8 features) are fused with
tensor arithmetic and layers.concatenate, then split into a classification
head (softmax) and a regression head. Losses are given per output name.
"""
import numpy as np
import keras
from keras import layers

NUM_CLASSES = 3
IMAGE_SHAPE = (16, 16, 3)
NUM_TABULAR = 8
EMBED = 32


def build_model(embed=EMBED, num_classes=NUM_CLASSES):
    image = keras.Input(shape=IMAGE_SHAPE, name="image")
    tabular = keras.Input(shape=(NUM_TABULAR,), name="tabular")

    # image branch -> embed-dim vector
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(image)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(embed, 3, padding="same", activation="relu")(x)
    x_avg = layers.GlobalAveragePooling2D()(x)
    x_max = layers.GlobalMaxPooling2D()(x)
    x = layers.average([x_avg, x_max])

    # tabular branch -> embed-dim vector
    t = layers.Dense(embed, activation="relu")(tabular)
    t = layers.Dense(embed)(t)

    # fuse the two views in a few different ways
    summed = x + t
    diff = layers.subtract([x, t])
    gated = layers.multiply([x, layers.Activation("sigmoid")(t)])
    h = layers.concatenate([summed, diff, gated], axis=-1)
    h = layers.Dense(64, activation="relu")(h)
    h = layers.Dropout(0.2)(h)

    class_out = layers.Dense(num_classes, activation="softmax", name="label")(h)
    value_out = layers.Dense(1, name="value")(h)
    return keras.Model(inputs=[image, tabular], outputs=[class_out, value_out], name="multi_input")


def make_data(n=480, seed=0):
    rng = np.random.RandomState(seed)
    images = rng.rand(n, *IMAGE_SHAPE).astype("float32")
    tab = rng.randn(n, NUM_TABULAR).astype("float32")
    # class from which color channel is brightest, value from the tabular part
    labels = images.mean(axis=(1, 2)).argmax(axis=-1)
    values = (tab[:, :4].sum(axis=1) + images[:, :, :, 0].mean(axis=(1, 2)))[:, None]
    return images, tab, labels, values.astype("float32")


def main():
    images, tab, labels, values = make_data()
    tr, te = slice(0, 400), slice(400, None)

    model = build_model()
    model.compile(
        optimizer="adam",
        loss={"label": "sparse_categorical_crossentropy", "value": "mse"},
        loss_weights={"label": 1.0, "value": 0.5},
        metrics={"label": ["accuracy"], "value": ["mae"]},
    )
    model.fit(
        [images[tr], tab[tr]],
        {"label": labels[tr], "value": values[tr]},
        epochs=2,
        batch_size=32,
        verbose=2,
    )

    results = model.evaluate(
        [images[te], tab[te]], {"label": labels[te], "value": values[te]}, verbose=0, return_dict=True
    )
    for name, val in sorted(results.items()):
        print(f"{name}: {val:.4f}")

    probs, preds = model.predict([images[:3], tab[:3]], verbose=0)
    print("classes:", probs.argmax(axis=1), "values:", preds[:, 0].round(3))


if __name__ == "__main__":
    main()
