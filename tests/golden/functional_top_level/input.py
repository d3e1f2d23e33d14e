import numpy as np
import keras

inputs = keras.Input(shape=(8,), name="features")
x = keras.layers.Dense(16, activation="relu")(inputs)
outputs = keras.layers.Dense(1, activation="sigmoid")(x)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=keras.losses.BinaryCrossentropy(),
              metrics=[keras.metrics.BinaryAccuracy()])
X = np.random.rand(100, 8).astype("float32")
Y = (X.sum(axis=1) > 4).astype("float32")
model.fit(X, Y, epochs=2, verbose=2)
print(model.evaluate(X, Y))
