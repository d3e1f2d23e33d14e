import keras
from keras import layers


def main():
    model = keras.Sequential()
    model.add(keras.Input(shape=(6,)))
    model.add(layers.Dense(4, activation="relu"))
    model.add(layers.Dense(2))
    model.summary()


if __name__ == "__main__":
    main()
