"""Walking model.layers: print each layer's name, output shape and parameter count,
freeze them, report which are trainable, unfreeze the last two (a slice), reach one by
index. The last loop reads the weights, which has no
translation here: it stays a marked stub."""
import keras
from keras import layers


def build_model(vocab_size=100, max_len=12):
    return keras.Sequential([
        keras.Input(shape=(max_len,)),
        layers.Embedding(vocab_size, 8),
        layers.LSTM(16),
        layers.Dense(1, activation="sigmoid"),
    ])


if __name__ == "__main__":
    model = build_model()
    for layer in model.layers:
        print(f"{layer.name:12s} {layer.output.shape} {layer.count_params()}")
    # freeze everything (fine-tuning would unfreeze the head)
    for layer in model.layers:
        layer.trainable = False
    for layer in model.layers:
        print(layer.name, layer.trainable)
    # fine-tuning: unfreeze the last two layers
    for layer in model.layers[-2:]:
        layer.trainable = True
    model.layers[-1].trainable = True
    print("head:", model.layers[-1].name, model.layers[-1].output.shape, model.layers[-1].count_params())
    embedding = model.layers[0]
    for layer in model.layers:
        print(layer.name, [w.shape for w in layer.get_weights()])
