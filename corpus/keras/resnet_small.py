"""A small ResNet-style image classifier for 32x32 RGB inputs.

Built with the functional API from helper functions that take and return
tensors. Each stage after the first downsamples with a stride-2 'same'
convolution and a 1x1 projection shortcut.
"""
import numpy as np
import keras
from keras import layers

NUM_CLASSES = 10
WIDTHS = [8, 16, 32]
BLOCKS_PER_STAGE = 2
INPUT_SHAPE = (32, 32, 3)


def conv_bn(x, filters, kernel_size=3, strides=1):
    """Conv -> BatchNorm, no bias since BN adds its own offset."""
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    return x


def residual_block(x, filters, downsample=False):
    stride = 2 if downsample else 1
    shortcut = x

    y = conv_bn(x, filters, 3, stride)
    y = layers.Activation("relu")(y)
    y = conv_bn(y, filters, 3, 1)

    if downsample:
        # 1x1 projection so the shortcut matches the new shape
        shortcut = layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
        shortcut = layers.BatchNormalization()(shortcut)

    out = layers.Add()([shortcut, y])
    return layers.ReLU()(out)


def build_model(input_shape=INPUT_SHAPE, num_classes=NUM_CLASSES, widths=WIDTHS, blocks=BLOCKS_PER_STAGE):
    inputs = keras.Input(shape=input_shape)
    x = layers.Rescaling(1.0 / 255)(inputs)

    # stem
    x = conv_bn(x, widths[0])
    x = layers.ReLU()(x)

    for i, w in enumerate(widths):
        for b in range(blocks):
            # the first stage keeps resolution; later stages halve it in their first block
            x = residual_block(x, w, downsample=(i > 0 and b == 0))

    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(0.2)(x)
    outputs = layers.Dense(num_classes, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="resnet_small")


def main():
    rng = np.random.RandomState(0)
    n = 384
    labels = rng.randint(0, NUM_CLASSES, size=n)
    images = rng.randint(0, 256, size=(n,) + INPUT_SHAPE).astype("float32")
    # tint each class so there is something to learn
    channel = labels % 3
    images[np.arange(n), :, :, channel] += 40.0 * (labels % 4)[:, None, None]
    images = np.clip(images, 0.0, 255.0)
    one_hot = np.eye(NUM_CLASSES, dtype="float32")[labels]

    model = build_model()
    print("parameters:", model.count_params())
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
        loss="categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(images[:320], one_hot[:320], batch_size=32, epochs=2, verbose=2)

    loss, acc = model.evaluate(images[320:], one_hot[320:], batch_size=64, verbose=0)
    print(f"eval loss {loss:.3f}, accuracy {acc:.3f}")

    preds = model.predict(images[:4], verbose=0)
    print("top classes:", np.argmax(preds, axis=1))
    model.save_weights("/tmp/resnet_small.weights.h5")


if __name__ == "__main__":
    main()
