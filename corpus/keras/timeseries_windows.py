"""LSTM forecaster on windows of a multivariate series (keras.io's weather forecasting, reduced).

The windows come from ``keras.utils.timeseries_dataset_from_array`` (one window of
``sequence_length`` steps every ``sampling_rate`` rows, its target the row ``past + future``
ahead); the first batch's shapes are printed, as the keras.io example does.
"""
import numpy as np
import keras

PAST = 24
STEP = 2
FUTURE = 4
BATCH = 16


def make_series(n=400, seed=0):
    rng = np.random.RandomState(seed)
    t = np.arange(n)
    series = np.stack([np.sin(t / 10.0), np.cos(t / 7.0), 0.1 * rng.randn(n)], axis=1)
    return ((series - series.mean(0)) / series.std(0)).astype("float64")


def build_model(steps=PAST // STEP, features=3):
    inputs = keras.Input(shape=(steps, features))
    x = keras.layers.LSTM(16)(inputs)
    outputs = keras.layers.Dense(1)(x)
    return keras.Model(inputs, outputs, name="lstm_forecaster")


def main():
    series = make_series()
    split = 300
    x_train, y_train = series[:split], series[PAST + FUTURE:split + PAST + FUTURE, 1:2]
    x_val, y_val = series[split:-(PAST + FUTURE)], series[split + PAST + FUTURE:, 1:2]
    dataset_train = keras.utils.timeseries_dataset_from_array(
        x_train, y_train, sequence_length=PAST // STEP, sampling_rate=STEP, batch_size=BATCH
    )
    dataset_val = keras.preprocessing.timeseries_dataset_from_array(
        x_val, y_val, sequence_length=PAST // STEP, sampling_rate=STEP, batch_size=BATCH
    )
    for batch in dataset_train.take(1):
        inputs, targets = batch
    print("Input shape:", inputs.numpy().shape)
    print("Target shape:", targets.numpy().shape)
    model = build_model()
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.001), loss="mse")
    history = model.fit(dataset_train, epochs=2, validation_data=dataset_val)
    print("val_loss", history.history["val_loss"][-1])


if __name__ == "__main__":
    main()
