"""Data a program sets or computes when it runs, outside any model (issue 18, data pipelines):

- ``layer.build(shape)`` + ``layer.set_weights([matrix])`` on a layer before a model uses it
  (keras.io's pretrained word embeddings: a GloVe matrix in a frozen ``Embedding``): no stub;
  the torch module built from that layer starts from the arrays (in torch's layout), and
  ``trainable=False`` freezes its parameters;
- a loop over run-time data (``for d in os.listdir(...)``) read once by the reader does not
  leave its one pass's values behind: ``class_names.append(d)`` there, then
  ``Dense(len(class_names))``, is a run-time size, never ``Linear(_, 1)``;
- ``from_tensor_slices(samples)`` of a Python list of strings is one array of them.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import torch  # noqa: F401  (torch before TensorFlow in one process)

from transpiler.runtime.torch import preprocessing
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)


def _stubs(result):
    return [d.message for d in result.program.diagnostics if d.severity == "stub"]


# -- runtime ---------------------------------------------------------------------------------
def test_set_layer_weights_loads_modules_built_before_and_after_in_torch_layout():
    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 2)
            preprocessing.adapted_state(self, "fc", "test_dense_w")

    before = Holder()
    kernel = np.arange(6, dtype=np.float32).reshape(3, 2)  # Keras' (in, out)
    bias = np.array([0.5, -1.0], np.float32)
    preprocessing.set_layer_weights("test_dense_w", [kernel, bias], "dense")
    after = Holder()
    for module in (before, after):
        np.testing.assert_array_equal(module.fc.weight.detach().numpy(), kernel.T)
        np.testing.assert_array_equal(module.fc.bias.detach().numpy(), bias)
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(after.fc(torch.as_tensor(x)).detach().numpy(), x @ kernel + bias)


def test_set_layer_weights_of_the_wrong_shape_is_an_error():
    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(4, 3)
            preprocessing.adapted_state(self, "emb", "test_embedding_shape")

    held = Holder()  # noqa: F841  (a module alive when the weights are set)
    with pytest.raises(ValueError, match="shape"):
        preprocessing.set_layer_weights("test_embedding_shape", [np.zeros((5, 3))], "embedding")


def test_make_loader_takes_a_list_of_strings_as_one_array():
    from transpiler.runtime.torch import loop

    saved = loop.TEXT
    loop.TEXT = True
    try:
        batches = list(loop.make_loader(["a b", "c", "d e f"], batch_size=2))
    finally:
        loop.TEXT = saved
    assert [list(b) for b in batches] == [["a b", "c"], ["d e f"]]


# -- translation -------------------------------------------------------------------------------
PRETRAINED = """
import numpy as np
import keras
from keras import layers

num_tokens = 7
matrix = np.random.RandomState(0).normal(size=(num_tokens, 4)).astype("float32")
kernel = np.random.RandomState(1).normal(size=(12, 2)).astype("float32")

embedding = layers.Embedding(num_tokens, 4, trainable=False)
embedding.build((1,))
embedding.set_weights([matrix])
head = layers.Dense(2)
head.build((12,))
head.set_weights([kernel, np.array([0.25, -0.5], "float32")])

inputs = keras.Input(shape=(3,), dtype="int32")
x = layers.Flatten()(embedding(inputs))
outputs = head(x)
model = keras.Model(inputs, outputs)
ids = np.array([[0, 1, 2], [3, 4, 6]], dtype="int32")
print("OUT", np.asarray(model.predict(ids, verbose=0)).round(5).tolist())
"""


def test_layer_weights_set_before_the_model_translate_and_give_keras_numbers(tmp_path):
    result = translate(PRETRAINED, "pretrained.py")
    assert not _stubs(result), _stubs(result)
    text = result.text.replace('"', "'")
    assert "set_layer_weights('embedding', [matrix], 'embedding')" in text
    assert "requires_grad_(False)" in text  # (trainable=False)
    assert "embedding.build((1,))" not in text.replace("# embedding.build((1,))", "")
    out = tmp_path / "pretrained_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300,
                             cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-2000:]
    ours = np.array(eval(run.stdout.split("OUT", 1)[1].strip().splitlines()[0]))
    rng0, rng1 = np.random.RandomState(0), np.random.RandomState(1)
    matrix = rng0.normal(size=(7, 4)).astype("float32")
    kernel = rng1.normal(size=(12, 2)).astype("float32")
    ids = np.array([[0, 1, 2], [3, 4, 6]])
    expected = matrix[ids].reshape(2, 12) @ kernel + np.array([0.25, -0.5], "float32")
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4)


def test_frozen_embedding_is_not_trained():
    source = PRETRAINED + "model.compile(optimizer='sgd', loss='mse')\n" \
        "model.fit(ids, np.ones((2, 2), 'float32'), epochs=1, batch_size=2, verbose=0)\n"
    result = translate(source, "pretrained_fit.py")
    assert not _stubs(result), _stubs(result)
    line = next(ln for ln in result.text.splitlines() if "requires_grad_(False)" in ln)
    assert line.strip().startswith("self.") and "embedding" in line


def test_set_weights_of_a_layer_without_a_known_mapping_stays_a_stub():
    source = ("import numpy as np\nimport keras\nfrom keras import layers\n"
              "conv = layers.Conv1D(2, 3)\nconv.build((None, 5, 1))\n"
              "conv.set_weights([np.ones((3, 1, 2)), np.zeros(2)])\n"
              "inputs = keras.Input(shape=(5, 1))\nmodel = keras.Model(inputs, conv(inputs))\n")
    result = translate(source, "conv_weights.py")
    assert "set_layer_weights" not in result.text
    assert any("set_weights" in m for m in _stubs(result)), _stubs(result)


LOOP_CLASSES = """
import os
import numpy as np
import keras
from keras import layers

class_names = []
class_index = 0
for dirname in sorted(os.listdir("data")):
    class_names.append(dirname)
    class_index += 1

x_train = np.random.RandomState(0).rand(32, 8).astype("float32")
y_train = np.arange(32) % len(class_names)
inputs = keras.Input(shape=(8,))
outputs = layers.Dense(len(class_names), activation="softmax")(layers.Dense(16, activation="relu")(inputs))
model = keras.Model(inputs, outputs)
model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")
model.fit(x_train, y_train, epochs=1, batch_size=16, verbose=0)
print("OUT", tuple(model.predict(x_train[:2], verbose=0).shape), class_index)
"""


def test_a_list_filled_by_a_loop_over_run_time_data_is_a_run_time_size(tmp_path):
    result = translate(LOOP_CLASSES, "loop_classes.py")
    assert not _stubs(result), _stubs(result)
    assert "nn.Linear(16, 1)" not in result.text
    assert "len(class_names)" in result.text
    for name in ("a", "b", "c"):
        os.makedirs(tmp_path / "data" / name)
    out = tmp_path / "loop_classes_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300,
                             cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "OUT (2, 3) 3" in run.stdout


PLOT = """
import numpy as np
import keras
from keras import layers

inputs = keras.Input(shape=(4,))
model = keras.Model(inputs, layers.Dense(2)(inputs))
keras.utils.plot_model(model, show_shapes=True, rankdir="LR")
"""


def test_plot_model_statement_prints_the_model(tmp_path):
    result = translate(PLOT, "plot.py")
    assert not _stubs(result), _stubs(result)
    assert "print(model)" in result.text and "plot_model(" not in result.text.replace("# keras.utils.plot_model", "")
    out = tmp_path / "plot_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300,
                             cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Linear(in_features=4, out_features=2" in run.stdout


def test_plot_model_whose_result_is_used_is_a_stub():
    result = translate(PLOT.replace("keras.utils.plot_model(", "image = keras.utils.plot_model("), "plot_used.py")
    assert any("plot_model() whose result the program uses" in m for m in _stubs(result)), _stubs(result)


def test_frozen_batch_normalization_is_reported():
    source = ("import keras\nfrom keras import layers\ninputs = keras.Input(shape=(4,))\n"
              "model = keras.Model(inputs, layers.BatchNormalization(trainable=False)(layers.Dense(4)(inputs)))\n")
    result = translate(source, "frozen_bn.py")
    assert "requires_grad_(False)" in result.text
    warnings = [d.message for d in result.program.diagnostics if d.severity == "warning"]
    assert any("BatchNormalization(trainable=False)" in m for m in warnings), result.program.diagnostics
