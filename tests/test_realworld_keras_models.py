"""Model-building root causes found on the keras.io scripts of ``../shared/realworld/keras/``
(issue 18): each class of problem as a small program written here (the scripts are never
copied into the project), translated, checked for stubs, and its output run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)


def run(source: str):
    return translate(textwrap.dedent(source), "case.py")


def run_output(text: str, folder) -> subprocess.CompletedProcess:
    """Run a generated PyTorch program in ``folder``; its errors are shown when it fails."""
    (folder / "out.py").write_text(text)
    done = program_runner.run([sys.executable, "out.py"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def stub_messages(result) -> list[str]:
    return [f"{d.span.line if d.span else '?'}: {d.message}" for d in result.stubs]


# -- subscripts of lists and dicts by values known only at run time -------------------------
# (pointnet_segmentation, semantic_image_clustering, cutmix, involution: data and plotting
# code indexing a list by ``np.argmax(...)``, or a list a loop over files fills)
RUN_TIME_SUBSCRIPTS = """
import numpy as np
import keras
from keras import layers

class_names = ["a", "b", "c"]
probs = np.random.rand(4, 3)
print("name", class_names[np.argmax(probs[0])])
clouds = []
for i in range(np.random.randint(3, 5)):
    clouds.append(np.zeros(3))
print("shape", clouds[2].shape)
counts = {}
for c in range(2):
    counts[c] = [0] * 3
    for j in np.random.randint(0, 3, size=5):
        counts[c][j] += 1
n = len(clouds)
acc = round(counts[0][0] / n * 100, 2) if n > 0 else 0
print("counted", sum(counts[0]), sum(counts[1]))
x = np.random.rand(16, 8).astype("float32")
y = np.random.rand(16, 1).astype("float32")
model = keras.Sequential([keras.Input((8,)), layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(x, y, epochs=1, verbose=0)
"""


def test_subscripts_by_run_time_values_in_data_code_are_no_stubs_and_run(tmp_path):
    result = run(RUN_TIME_SUBSCRIPTS)
    assert stub_messages(result) == []
    out = run_output(result.text, tmp_path).stdout
    assert "shape (3,)" in out and "counted 5 5" in out


RUN_TIME_LIST_SIZE = """
import numpy as np
import keras
from keras import layers

sizes = []
for n in np.random.randint(4, 6, size=2):
    sizes.append(int(n))
x = np.random.rand(16, 8).astype("float32")
y = np.random.rand(16, 1).astype("float32")
model = keras.Sequential([keras.Input((8,)), layers.Dense(sizes[0]), layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(x, y, epochs=1, verbose=0)
"""


def test_a_layer_size_from_a_list_filled_at_run_time_is_its_expression_not_a_stale_number(tmp_path):
    result = run(RUN_TIME_LIST_SIZE)
    assert stub_messages(result) == []
    assert "(sizes[0])" in result.text  # the module is constructed with the run-time size
    run_output(result.text, tmp_path)


TENSOR_CHOSEN_AT_RUN_TIME = """
import numpy as np
import keras
from keras import layers

flag = np.random.rand() > 0.5
inp = keras.Input((8,))
x = layers.Dense(4)(inp) if flag else inp
model = keras.Model(inp, layers.Dense(1)(x))
"""


def test_a_tensor_chosen_by_a_run_time_condition_is_still_a_stub():
    result = run(TENSOR_CHOSEN_AT_RUN_TIME)
    assert any("8: the condition cannot be decided statically" in m for m in stub_messages(result)), \
        stub_messages(result)


# -- drop rates from np.linspace (cct's and deit's stochastic depth) ------------------------
def test_numpy_linspace_and_arange_of_static_numbers_give_numpys_items():
    import numpy as np

    from transpiler.frontend_ast.keras.support import _numpy_source
    from transpiler.frontend_ast.keras.values import ArrayVal

    for args, kwargs in [((0, 0.1, 8), {}), ((0.0, 1.0), {"num": 7}), ((1, 2, 5), {"endpoint": False}),
                         ((0.3, 0.3, 1), {}), ((2.0, -1.0, 0), {})]:
        made = _numpy_source("numpy.linspace", list(args), kwargs)
        assert isinstance(made, ArrayVal) and made.values == tuple(np.linspace(*args, **kwargs).tolist())
    for args in [(5,), (2, 9), (1, 10, 3), (5, 1, -2)]:
        assert _numpy_source("numpy.arange", list(args), {}).values == tuple(np.arange(*args).tolist())
    assert getattr(_numpy_source("numpy.arange", [0.0, 1.0, 0.1], {}), "values", None) is None  # (float steps)


STOCHASTIC_DEPTH_RATES = """
import numpy as np
import keras
from keras import layers


class Scale(layers.Layer):
    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def call(self, x):
        return x * (1 - self.rate)


def build_model():
    rates = [r for r in np.linspace(0, 0.2, 3)]
    inp = keras.Input((4,))
    x = inp
    for i in range(3):
        x = Scale(rates[i])(layers.Dense(4)(x))
    return keras.Model(inp, x)
"""


def test_layer_arguments_from_a_static_linspace_are_numbers_not_stubs():
    result = run(STOCHASTIC_DEPTH_RATES)
    assert stub_messages(result) == []
    assert "0.9" in result.text and "0.8" in result.text
