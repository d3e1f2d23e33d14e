import numpy as np
import tensorflow as tf

x = np.random.rand(64, 5).astype("float32")
y = np.random.rand(64, 1).astype("float32")
train_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(5,)), tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(train_ds, epochs=2)
