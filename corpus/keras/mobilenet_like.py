"""MobileNet-flavoured classifier for 32x32 RGB images.

Depthwise-separable blocks (DepthwiseConv2D + 1x1 conv), ReLU6 via
ReLU(max_value=6.0), stride-2 'same' downsampling and a width multiplier.
"""
import numpy as np
import keras
from keras import layers
from keras.layers import Conv2D as C, Dense

NUM_CLASSES = 5
ALPHA = 0.5  # width multiplier

# (pointwise filters, stride) for each depthwise-separable block
BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2)]


def depthwise_separable_block(x, filters, strides=1):
    x = layers.DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU(max_value=6.0)(x)
    # pointwise projection
    x = C(filters, 1, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU(max_value=6.0)(x)
    return x


def build_model(input_shape=(32, 32, 3), num_classes=NUM_CLASSES, alpha=ALPHA):
    inputs = keras.Input(shape=input_shape)

    # full conv stem, stride 2: 32x32 -> 16x16
    x = C(int(32 * alpha), 3, strides=2, padding="same", use_bias=False)(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU(max_value=6.0)(x)

    for filters, stride in BLOCKS:
        x = depthwise_separable_block(x, int(filters * alpha), strides=stride)

    # one fused separable conv, then a grouped 1x1 conv for channel mixing
    x = layers.SeparableConv2D(int(256 * alpha), 3, padding="same", activation="relu6")(x)
    x = C(int(256 * alpha), 1, groups=4, activation="relu6")(x)

    # classifier head: pooled features kept as 1x1 maps, like Keras' MobileNet
    x = layers.GlobalAveragePooling2D(keepdims=True)(x)
    x = C(int(128 * alpha), (1, 1), padding="same", activation="relu6")(x)
    x = layers.Flatten()(x)
    x = layers.Dropout(1e-3)(x)
    outputs = Dense(num_classes, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="mobilenet_like")


def main():
    rng = np.random.RandomState(0)
    x = rng.rand(320, 32, 32, 3).astype("float32")
    y = rng.randint(0, NUM_CLASSES, size=320)
    x[:, :8, :8, :] += y[:, None, None, None] * 0.2  # class-dependent corner

    model = build_model()
    model.compile(
        optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(),
        metrics=["accuracy"],
    )
    model.fit(x[:256], y[:256], batch_size=32, epochs=2, verbose=2)
    results = model.evaluate(x[256:], y[256:], verbose=0, return_dict=True)
    print("eval:", {k: round(float(v), 4) for k, v in results.items()})

    probs = model.predict(x[:4], verbose=0)
    print("probabilities sum to", probs.sum(axis=1))


if __name__ == "__main__":
    main()
