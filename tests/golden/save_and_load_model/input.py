from keras.models import Sequential, load_model
from keras.layers import Dense, Dropout
import numpy as np

X = np.random.random((100, 16))
Y = np.random.randint(2, size=(100, 1))
x_val, y_val = X[:20], Y[:20]

model = Sequential()
model.add(Dense(32, activation='relu', input_dim=16))
model.add(Dropout(0.5))
model.add(Dense(1, activation='sigmoid'))
model.compile(loss='binary_crossentropy', optimizer='rmsprop', metrics=['accuracy'])
model.fit(X, Y, epochs=2, batch_size=32, validation_data=(x_val, y_val))
model.save("model.h5")
model2 = load_model("model.h5")
print(model2.predict(X[:3]))
