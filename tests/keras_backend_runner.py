"""Run a generated Keras program under the backend ``KERAS_BACKEND`` names, with what differs
between backends for reasons other than the program neutralised, and record its fit losses.

    KERAS_BACKEND=jax python keras_backend_runner.py PROGRAM.py OUT.json

Backends draw different random numbers from the same seed, so the initial weights come from
numpy instead (the backend's ``uniform``/``normal``/``truncated_normal``, drawn in the order
the program builds its layers, when called eagerly), dropout is off and ``fit`` does not
shuffle; the program computes in float64 (the backends' float32 kernels differ in
rounding: an LSTM's losses drift apart by 3e-4 relative in 40 steps). ``OUT.json``
receives every training batch's loss as ``fit`` logs it. Used by ``tests/test_keras_backends.py``.
"""

from __future__ import annotations

import json
import os
import runpy
import sys


def main(program: str, out: str) -> None:
    os.environ["JAX_ENABLE_X64"] = "1"  # (jax computes float64 in float32 unless told)
    import numpy as np

    import keras
    from keras.src import backend
    from keras.src.backend import random as backend_random

    keras.config.set_floatx("float64")  # (float32 kernels of the two backends round apart)
    rng = np.random.default_rng(0)

    def dtype_of(dtype):
        return backend.standardize_dtype(dtype or backend.floatx())

    def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
        return rng.uniform(minval, maxval, size=tuple(shape)).astype(dtype_of(dtype))

    def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
        return rng.normal(mean, stddev, size=tuple(shape)).astype(dtype_of(dtype))

    def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
        values = rng.normal(0.0, 1.0, size=tuple(shape))
        while (bad := np.abs(values) > 2.0).any():
            values[bad] = rng.normal(0.0, 1.0, size=int(bad.sum()))
        return (mean + stddev * values).astype(dtype_of(dtype))

    for name, fn in (("uniform", uniform), ("normal", normal), ("truncated_normal", truncated_normal)):
        setattr(backend_random, name, fn)

    keras.layers.Dropout.call = lambda self, inputs, training=None: inputs
    losses: list[float] = []

    class Record(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            losses.append(float(logs["loss"]))

    fit = keras.Model.fit

    def recording_fit(self, *args, **kwargs):
        kwargs["shuffle"] = False
        kwargs["callbacks"] = list(kwargs.get("callbacks") or []) + [Record()]
        return fit(self, *args, **kwargs)

    keras.Model.fit = recording_fit
    try:
        runpy.run_path(program, run_name="__main__")
    finally:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"backend": keras.backend.backend(), "losses": losses}, fh)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
