"""A ModelCheckpoint whose file name is held in a variable saves where the program later loads
it from (keras.io cct): the generated fit() saved to the name renamed for torch
(``ckpt.weights.h5`` → ``ckpt.pt``) while ``model.load_weights(checkpoint_filepath)`` read the
variable's name, so the program failed when run, with no stub. A name written as a literal is
renamed the same way at every use."""

from __future__ import annotations

import os
import subprocess
import sys

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

SCRIPT = '''import numpy as np
import keras
from keras import layers

x_train = np.random.rand(64, 8).astype("float32")
y_train = (x_train.sum(axis=1) > 4).astype("float32")


def build():
    return keras.Sequential([keras.Input(shape=(8,)), layers.Dense(4, activation="relu"),
                             layers.Dense(1, activation="sigmoid")])


def run_experiment(model):
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    checkpoint_filepath = "ckpt_best.weights.h5"
    checkpoint_callback = keras.callbacks.ModelCheckpoint(
        checkpoint_filepath, monitor="val_accuracy", save_best_only=True, save_weights_only=True
    )
    model.fit(x_train, y_train, epochs=2, batch_size=16, validation_split=0.25, callbacks=[checkpoint_callback])
    model.load_weights(checkpoint_filepath)
    model.fit(x_train, y_train, epochs=1, callbacks=[keras.callbacks.ModelCheckpoint("every.weights.h5")])
    model.load_weights("every.weights.h5")
    print("done")


run_experiment(build())
'''


def test_checkpoint_saved_where_the_program_loads_it(tmp_path):
    result = translate(SCRIPT, "ckpt.py", "pytorch")
    assert not result.stubs, [str(s) for s in result.stubs]
    out = tmp_path / "ckpt_torch.py"
    out.write_text(result.text)
    proc = program_runner.run([sys.executable, str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "done" in proc.stdout
    assert sorted(os.listdir(tmp_path)) == ["ckpt_best.weights.h5", "ckpt_torch.py", "every.pt"]
