import keras
from keras import layers, ops
import numpy as np

def get_model(input_dim=20, n_classes=3):
    model = keras.Sequential()
    model.add(layers.Dense(64, input_dim=input_dim, activation="relu"))
    model.add(layers.Dropout(0.2))
    model.add(layers.Dense(n_classes, activation="softmax"))
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=0.001), loss="sparse_categorical_crossentropy", metrics=["acc"])
    return model

X = np.random.rand(200, 20)
y = np.random.randint(3, size=200)
model = get_model()
es = keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)
history = model.fit(X, y, epochs=3, batch_size=16, validation_split=0.2, callbacks=[es], verbose=0)
print(history.history.keys())
print(model.predict(X[:2]))
model.save("my_model.keras")
