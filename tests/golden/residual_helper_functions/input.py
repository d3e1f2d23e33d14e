import keras
from keras import layers


def conv_bn_relu(x, filters):
    x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    return layers.ReLU()(x)


def residual_block(x, filters):
    shortcut = x
    y = conv_bn_relu(x, filters)
    y = layers.Conv2D(filters, 3, padding="same")(y)
    return layers.Add()([shortcut, y])


def build_model(filters=16):
    inputs = keras.Input(shape=(16, 16, 3))
    x = conv_bn_relu(inputs, filters)
    x = residual_block(x, filters)
    x = residual_block(x, filters)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(5)(x)
    return keras.Model(inputs, outputs)
