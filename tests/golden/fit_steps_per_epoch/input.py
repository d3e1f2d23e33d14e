import numpy as np
import tensorflow as tf

x = np.random.rand(64, 5).astype("float32")
y = np.random.rand(64, 1).astype("float32")
x_val, y_val = x[:16], y[:16]
train_ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(64).batch(8).repeat()
model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(5,)), tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(train_ds, epochs=3, steps_per_epoch=5, validation_data=(x_val, y_val), validation_steps=1,
          validation_freq=[1, 3])
