"""PointNet segmentation (keras.io): a max over all points (MaxPool1D whose pool size is the
number of points, read from the data), tiled back to every point and concatenated with the
per-point features."""
import numpy as np
import keras
from keras import layers

x_train = np.random.rand(8, 32, 3).astype("float32")
num_points = x_train.shape[1]


def build_model(num_points, num_classes=4):
    inputs = keras.Input(shape=(None, 3))
    features = layers.Conv1D(16, kernel_size=1, activation="relu")(inputs)
    global_features = layers.MaxPool1D(pool_size=num_points)(features)
    global_features = keras.ops.tile(global_features, [1, num_points, 1])
    x = layers.Concatenate()([features, global_features])
    outputs = layers.Conv1D(num_classes, kernel_size=1, activation="softmax")(x)
    return keras.Model(inputs, outputs)


model = build_model(num_points)
