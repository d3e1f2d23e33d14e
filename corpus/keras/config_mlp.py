"""Config-driven MLP that tours many activations, ending in a SimpleRNN.

Layer widths, dropout and the main activation come from a config dict.
After the configurable trunk, a run of small Dense layers tries a different
activation string each, followed by PReLU / ELU / LeakyReLU layers,
RepeatVector + SimpleRNN and an explicit Softmax layer.
"""
import numpy as np
import keras
from keras import layers

config = {
    "hidden": [64, 32],
    "dropout": 0.1,
    "activation": "gelu",
    "input_dim": 20,
    "num_classes": 3,
    "repeat": 4,
}

# one small Dense per activation string
TOUR = ("elu", "selu", "swish", "softplus", "softsign", "tanh", "hard_sigmoid", "relu6")


def build_model(cfg=config):
    inputs = keras.Input(shape=(cfg["input_dim"],), name="features")
    # raw features are roughly in [-10, 10]; bring them to [-1, 1]
    x = layers.Rescaling(scale=0.1, offset=0.0)(inputs)
    x = layers.Identity()(x)

    for units in cfg["hidden"]:
        x = layers.Dense(units, activation=cfg["activation"])(x)
        x = layers.Dropout(cfg["dropout"])(x)

    width = cfg["hidden"][-1]
    for act in TOUR:
        x = layers.Dense(width, activation=act)(x)

    x = layers.Dense(width, activation="silu")(x)
    x = layers.Dense(width)(x)
    x = layers.PReLU()(x)
    x = layers.Dense(width, activation="linear")(x)
    x = layers.ELU(alpha=1.0)(x)
    x = layers.Dense(width, activation="leaky_relu")(x)
    x = layers.LeakyReLU(negative_slope=0.1)(x)
    x = layers.Activation("sigmoid")(x)
    x = layers.BatchNormalization()(x)

    # treat the feature vector as a short sequence and summarise it with an RNN
    x = layers.RepeatVector(cfg["repeat"])(x)
    x = layers.SimpleRNN(16, activation="tanh")(x)

    logits = layers.Dense(cfg["num_classes"])(x)
    probs = layers.Softmax(axis=-1)(logits)
    return keras.Model(inputs, probs, name="config_mlp")


def main():
    rng = np.random.RandomState(0)
    x = (10.0 * rng.uniform(-1, 1, size=(600, config["input_dim"]))).astype("float32")
    proj = rng.randn(config["input_dim"], config["num_classes"])
    y = (x @ proj).argmax(axis=1)

    model = build_model()
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=3e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(x[:500], y[:500], epochs=2, batch_size=20, verbose=2)

    loss, acc = model.evaluate(x[500:], y[500:], verbose=0)
    print(f"config={config['hidden']} act={config['activation']} -> acc {acc:.3f}, loss {loss:.3f}")
    print("sample probabilities:\n", model.predict(x[:3], verbose=0).round(3))


if __name__ == "__main__":
    main()
