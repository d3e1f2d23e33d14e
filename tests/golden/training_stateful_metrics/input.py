"""AUC/Precision/Recall metric objects (AUC logged under its own name), and a list of
callbacks bound to a name before fit()."""
import numpy as np
import keras
from keras import layers


def build_model():
    model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy",
                  metrics=[keras.metrics.AUC(name="roc"), keras.metrics.Precision(), keras.metrics.Recall()])
    return model


x = np.random.rand(64, 4).astype("float32")
y = (x[:, 0] > 0.5).astype("float32")
model = build_model()
es = keras.callbacks.EarlyStopping(monitor="val_roc", mode="max", patience=2)
callbacks = [es, keras.callbacks.ReduceLROnPlateau(patience=1)]
history = model.fit(x, y, epochs=3, validation_split=0.25, callbacks=callbacks, verbose=2)
