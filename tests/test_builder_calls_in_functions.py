"""A Keras builder with arguments called inside ``main()`` (or ``train()``, or deeper), and
any model made under ``main()``. The frontend recorded every calling statement on the
nodes a model was built from, so the statements a model was made *under* (``main()``,
``teacher = build_classifier(16, "teacher")`` in main's body) counted as statements that
only built it: the PyTorch output dropped them (main's call became ``pass``, the
assignments vanished), kept one class for the function, and said nothing: a NameError or
a silent no-op. Now those statements stay, each call site in a function constructs its own
class, and the generated program runs with Keras' numbers."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import torch  # noqa: F401 (torch before tensorflow)
import numpy as np

from harness import load_source_module, randomize_keras_weights
from transpiler import verify
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

BUILDER = '''import numpy as np
import keras
from keras import layers


def build_classifier(width, name):
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(width, activation="relu")(inputs)
    outputs = layers.Dense(3)(x)
    return keras.Model(inputs, outputs, name=name)
'''

IN_MAIN = BUILDER + '''

def main():
    teacher = build_classifier(16, "teacher")
    student = build_classifier(4, "student")
    teacher.compile(optimizer="adam", loss="mse")
    student.compile(optimizer="adam", loss="mse")
    x = np.random.rand(32, 8).astype("float32")
    y = np.random.rand(32, 3).astype("float32")
    teacher.fit(x, y, epochs=1, batch_size=8, verbose=0)
    print("predicted", student.predict(x, verbose=0).shape)
    print("sizes", teacher.count_params(), student.count_params())
    return teacher, student


if __name__ == "__main__":
    main()
'''

IN_TRAIN = BUILDER + '''

def train(x, y):
    teacher = build_classifier(16, "teacher")
    teacher.compile(optimizer="adam", loss="mse")
    teacher.fit(x, y, epochs=1, batch_size=8, verbose=0)
    student = build_classifier(4, "student")
    return teacher, student


def main():
    x = np.random.rand(32, 8).astype("float32")
    y = np.random.rand(32, 3).astype("float32")
    teacher, student = train(x, y)
    print("sizes", teacher.count_params(), student.count_params())


if __name__ == "__main__":
    main()
'''

INLINE_IN_MAIN = '''import numpy as np
import keras
from keras import layers


def main():
    inputs = keras.Input(shape=(8,))
    x = layers.Dense(4, activation="relu")(inputs)
    model = keras.Model(inputs, layers.Dense(3)(x))
    model.compile(optimizer="adam", loss="mse")
    print("predicted", model.predict(np.zeros((2, 8), "float32"), verbose=0).shape)


if __name__ == "__main__":
    main()
'''

# Dense(8 -> w) + Dense(w -> 3), kernels and biases
TEACHER_PARAMS = 8 * 16 + 16 + 16 * 3 + 3
STUDENT_PARAMS = 8 * 4 + 4 + 4 * 3 + 3


def _run(text: str) -> str:
    """Run a generated program as a script; its stdout (fails the test when it fails)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        proc = program_runner.run([sys.executable, path], capture_output=True, text=True, timeout=240, cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _main_guard(text: str) -> str:
    return text.split('if __name__ == "__main__":', 1)[1]


def test_builder_calls_in_main_keep_main_and_construct_each_model():
    result = translate(IN_MAIN, "case.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "main()" in _main_guard(result.text) and "pass" not in _main_guard(result.text)
    main = result.text.split("def main():", 1)[1]
    assert "teacher = Teacher()" in main and "student = Student()" in main
    out = _run(result.text)
    assert f"sizes {TEACHER_PARAMS} {STUDENT_PARAMS}" in out, out
    assert "predicted (32, 3)" in out, out


def test_builder_calls_in_a_function_main_calls_run():
    result = translate(IN_TRAIN, "case.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "main()" in _main_guard(result.text)
    assert "teacher, student = train(x, y)" in result.text.split("def main():", 1)[1]
    train = result.text.split("def train(", 1)[1].split("\ndef ", 1)[0]
    assert "teacher = Teacher()" in train and "student = Student()" in train
    assert f"sizes {TEACHER_PARAMS} {STUDENT_PARAMS}" in _run(result.text)


def test_model_made_inline_in_main_keeps_main_call():
    result = translate(INLINE_IN_MAIN, "case.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "main()" in _main_guard(result.text)
    assert "predicted (2, 3)" in _run(result.text)


def test_several_models_at_one_call_statement_are_a_marked_stub():
    script = BUILDER + '''

def main():
    models = []
    for width in (4, 16):
        models.append(build_classifier(width, "m"))
    print(len(models))


if __name__ == "__main__":
    main()
'''
    result = translate(script, "case.py")
    messages = [d.message for d in result.stubs]
    assert any("models.append(build_classifier(width" in m for m in messages), messages
    assert "main()" in _main_guard(result.text)


RETURNS_MODELS = BUILDER + '''

def main():
    teacher = build_classifier(16, "teacher")
    student = build_classifier(4, "student")
    return teacher, student


if __name__ == "__main__":
    main()
'''


def test_models_built_in_main_compute_keras_numbers():
    result = translate(RETURNS_MODELS, "case.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    import keras

    keras.backend.clear_session()
    kmodels = load_source_module(RETURNS_MODELS, "in_main_keras").main()
    tmodels = verify.load_generated(result.text, "in_main_torch").main()
    x = np.random.default_rng(0).standard_normal((4, 8)).astype("float32")
    for name, kmodel, tmodel in zip(("Teacher", "Student"), kmodels, tmodels):
        md = next(m for m in result.program.models if m.class_name == name)
        assert type(tmodel).__name__ == name
        randomize_keras_weights(kmodel)
        tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
        tmodel.eval()
        with torch.no_grad():
            got = tmodel(torch.as_tensor(x)).numpy()
        assert float(np.max(np.abs(got - keras.ops.convert_to_numpy(kmodel(x))))) <= 1e-5, name


NESTED_DEF = '''import keras
from keras import layers


def main():
    def build(width):
        inputs = keras.Input(shape=(8,))
        x = layers.Dense(width, activation="relu")(inputs)
        return keras.Model(inputs, layers.Dense(3)(x))

    small = build(4)
    large = build(16)
    print("sizes", small.count_params(), large.count_params())


if __name__ == "__main__":
    main()
'''


def test_builder_defined_inside_main_constructs_each_model():
    result = translate(NESTED_DEF, "case.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "def build" not in result.text  # nothing calls it any more
    assert "main()" in _main_guard(result.text)
    assert f"sizes {STUDENT_PARAMS} {TEACHER_PARAMS}" in _run(result.text)


def test_nested_builder_still_called_is_a_marked_stub():
    result = translate(NESTED_DEF.replace("    large = build(16)\n", "    large = build(16)\n    more = [build(8)]\n"),
                       "case.py")
    assert any("build() builds another model at each call" in d.message for d in result.stubs), \
        [str(d) for d in result.stubs]
    assert "raise NotImplementedError" in result.text.split("def build(", 1)[1].split("\n\n", 1)[0]
