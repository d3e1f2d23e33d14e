"""A kept function annotated with Keras types (keras.io eeg_signal_classification:
``def plot_history_metrics(history: keras.callbacks.History)``) made the PyTorch output fail
with NameError when the ``def`` ran (the output imports no Keras), and no stub said so. The
annotations that name Keras objects are dropped with a comment; the function is kept."""

import ast
import os
import subprocess
import sys

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

HEAD = '''
import keras
import numpy as np
from keras import layers


def build_model():
    inputs = keras.Input(shape=(4,))
    outputs = layers.Dense(2)(inputs)
    return keras.Model(inputs, outputs)

'''

HISTORY = HEAD + '''
def describe(history: keras.callbacks.History, scale: float = 1.0) -> keras.callbacks.History:
    print(sorted(history.history), scale)
    return history


model = build_model()
model.compile(optimizer="sgd", loss="mse")
x = np.zeros((8, 4), dtype="float32")
y = np.zeros((8, 2), dtype="float32")
history = model.fit(x, y, epochs=1, batch_size=4, verbose=0)
describe(history)
'''

PLAIN = HEAD + '''
def count(model: keras.Model, *rest: keras.layers.Layer, **named: "keras.Model") -> int:
    return 1 + len(rest) + len(named)


model = build_model()
print(count(model))
'''


def _function(text: str, name: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)


def test_history_annotations_are_dropped_and_the_output_runs(tmp_path):
    result = translate(HISTORY, "train.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    fn = _function(result.text, "describe")
    assert fn.returns is None and fn.args.args[0].annotation is None
    assert ast.unparse(fn.args.args[1].annotation) == "float"  # (not Keras: kept)
    assert "# Keras annotations dropped: history: keras.callbacks.History, -> keras.callbacks.History" in result.text
    out = tmp_path / "train_torch.py"
    out.write_text(result.text)
    proc = program_runner.run([sys.executable, str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("['loss'] 1.0")


def test_annotations_of_a_plain_function_are_dropped_where_they_name_keras():
    result = translate(PLAIN, "count.py")
    fn = _function(result.text, "count")
    assert fn.args.args[0].annotation is None and fn.args.vararg.annotation is None
    assert ast.unparse(fn.returns) == "int"
    # a string annotation is not evaluated when the def runs: nothing to drop
    assert ast.unparse(fn.args.kwarg.annotation) == "'keras.Model'"
    namespace: dict = {}
    exec(compile(ast.Module([fn], []), "count_torch.py", "exec"), namespace)  # (NameError before)
    assert namespace["count"](object()) == 1
