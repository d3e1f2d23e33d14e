"""Builders whose ``name=None`` parameter only names layers and models (keras.io cyclegan:
``get_discriminator(..., name=None)`` with ``layers.Input(..., name=name + "_img_input")``,
called as ``get_discriminator(name="discriminator_X")`` and ``name="discriminator_Y"``).
Read with their defaults they failed ("unsupported operand type(s) for +: 'NoneType' and
'str'") and every line became a stub; they are now read with their first call's arguments,
and calls differing only in such names build the same torch module (no "called here with
other arguments" stub, no guard). A module-level ``keras.initializers`` object used as a
builder's default (``kernel_initializer=kernel_init``) is bound before the builders are read
(its layers reproduce it) and becomes a torch initializer function of the same name (the
generated builder's default still names it: before, a stub comment and a NameError when run).

The generated program runs and its outputs equal Keras' (constant initializers)."""

import os
import re
import sys

import pytest

from transpiler.translate import translate
import program_runner  # (a warm fork: tests/program_runner.py)

PROGRAM = '''
import numpy as np
import keras
from keras import layers

kernel_init = keras.initializers.Constant(0.05)
dense_init = keras.initializers.Constant(-0.03)
spare_init = keras.initializers.RandomNormal(mean=0.0, stddev=0.02)  # (no layer uses it)


def get_discriminator(filters=4, kernel_initializer=kernel_init, name=None):
    img_input = layers.Input(shape=(8, 8, 3), name=name + "_img_input")
    x = layers.Conv2D(filters, 3, strides=2, padding="same", kernel_initializer=kernel_initializer,
                      name=name + "_conv")(img_input)
    x = layers.LeakyReLU(0.2)(x)
    x = layers.Flatten()(x)
    x = layers.Dense(1, kernel_initializer=dense_init)(x)
    return keras.models.Model(inputs=img_input, outputs=x, name=name)


disc_X = get_discriminator(name="discriminator_X")
disc_Y = get_discriminator(name="discriminator_Y")
images = np.linspace(-1.0, 1.0, 2 * 8 * 8 * 3).reshape(2, 8, 8, 3).astype("float32")
print("PARAMS", disc_X.count_params(), disc_Y.count_params())
print("OUT", [float(v) for v in np.ravel(disc_Y.predict(images, verbose=0))])
'''


def _run(path, backend=None):
    env = dict(os.environ, KERAS_BACKEND=backend) if backend else dict(os.environ)
    out = program_runner.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, env=env,
                             preload=("torch", "tensorflow"))
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def _numbers(text, tag):
    line = next(ln for ln in text.splitlines() if ln.startswith(tag))
    return [float(v) for v in re.findall(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?", line[len(tag):])]


@pytest.fixture(scope="module")
def translated():
    return translate(PROGRAM, "gan.py")


def test_builder_named_by_its_callers_translates_once(translated):
    assert not translated.stubs, [str(d) for d in translated.stubs]
    assert "is translated for" not in translated.text  # (names: not guarded)
    assert translated.text.count("(nn.Module):") == 1


def test_module_level_initializers_become_torch_initializer_functions(translated):
    text = translated.text
    assert "def kernel_init(tensor):" in text and "nn.init.constant_(tensor, 0.05)" in text
    assert "def spare_init(tensor):" in text and "nn.init.normal_(tensor, 0.0, 0.02)" in text
    namespace = {}
    exec(compile(text[:text.index("\nclass ")], "gan_torch.py", "exec"), namespace)
    import torch

    drawn = namespace["spare_init"](torch.empty(20000))
    assert abs(float(drawn.std()) - 0.02) < 1e-3 and abs(float(drawn.mean())) < 1e-3


def test_builder_named_by_its_callers_runs_like_keras(translated, tmp_path):
    path = tmp_path / "gan_torch.py"
    path.write_text(translated.text)
    keras_path = tmp_path / "gan.py"
    keras_path.write_text(PROGRAM)
    got, want = _run(path), _run(keras_path, "tensorflow")
    assert _numbers(got, "PARAMS") == _numbers(want, "PARAMS")
    assert _numbers(got, "OUT") == pytest.approx(_numbers(want, "OUT"), rel=1e-5)
