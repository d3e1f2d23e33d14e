"""Normalization.adapt() without Keras: the runtime computes the statistics Keras computes
(runtime/torch/preprocessing.py, compared with Keras on the same data), and a script that
adapts a Normalization layer (alone, or as ``data_augmentation.layers[0]`` of a Sequential a
model uses) translates with no stub into a program whose model normalises as Keras' does."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import torch  # noqa: F401  (torch before TensorFlow in one process)

from transpiler.runtime.torch import preprocessing
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _default_dtypes():
    """float32 everywhere, as in a fresh process (another test in this worker may have left
    torch's default dtype or Keras' floatx at float64)."""
    import keras

    saved = torch.get_default_dtype(), keras.config.floatx(), keras.config.dtype_policy()
    torch.set_default_dtype(torch.float32)
    keras.config.set_floatx("float32")
    keras.config.set_dtype_policy("float32")
    yield
    torch.set_default_dtype(saved[0])
    keras.config.set_floatx(saved[1])
    keras.config.set_dtype_policy(saved[2])


def _keras_adapt(data, axis=-1, batches=None):
    keras = pytest.importorskip("keras")
    layer = keras.layers.Normalization(axis=axis)
    layer.adapt(data if batches is None else batches)
    return np.asarray(layer.adapt_mean), np.asarray(layer.adapt_variance)


CASES = [((40, 6), np.float32, -1), ((12, 5, 5, 3), np.float32, -1), ((12, 5, 5, 3), np.uint8, -1),
         ((10, 4, 3), np.float64, (1, 2)), ((10, 4), np.float32, None)]


@pytest.mark.parametrize("shape,dtype,axis", CASES, ids=lambda v: str(v))
def test_normalization_statistics_of_an_array_equal_keras(shape, dtype, axis):
    rng = np.random.RandomState(0)
    data = (rng.rand(*shape) * 255).astype(dtype)
    ours = preprocessing.normalization_statistics(data, () if axis is None else
                                                  (axis,) if isinstance(axis, int) else axis)
    theirs = _keras_adapt(data, axis)
    for a, b in zip(ours, theirs):
        assert a.dtype == np.float32 and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_normalization_statistics_of_batches_equal_keras():
    rng = np.random.RandomState(1)
    data = rng.normal(3.0, 2.0, (50, 4, 3)).astype(np.float32)
    batches = [data[i:i + 16] for i in range(0, 50, 16)]  # a last smaller batch, as a loader's
    ours = preprocessing.normalization_statistics(iter(batches), (-1,))
    theirs = _keras_adapt(data, -1, batches=batches)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    # pairs of (x, y) batches: the inputs are adapted on, as Keras' adapt() takes them
    pairs = [(torch.as_tensor(b), torch.zeros(len(b))) for b in batches]
    for a, b in zip(preprocessing.normalization_statistics(pairs, (-1,)), theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_adapt_sets_modules_built_before_and_after():
    class Holder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("norm_mean", torch.zeros((3,)))
            self.register_buffer("norm_variance", torch.ones((3,)))
            preprocessing.adapted_state(self, "norm", "test_layer_x")

    before = Holder()
    data = np.arange(30, dtype=np.float32).reshape(10, 3)
    preprocessing.adapt_normalization("test_layer_x", data)
    after = Holder()
    for module in (before, after):
        np.testing.assert_array_equal(module.norm_mean.numpy(), data.mean(0))
        np.testing.assert_array_equal(module.norm_variance.numpy(), data.var(0).astype(np.float32))
    untouched = torch.nn.Module()
    untouched.register_buffer("norm_mean", torch.zeros((3,)))
    assert untouched.norm_mean.sum() == 0


CORPUS_SCRIPT = os.path.join(ROOT, "corpus", "keras", "normalized_augmentation.py")


def test_adapted_sequential_layer_translates_and_normalises_as_keras():
    """``data_augmentation.layers[0].adapt(x_train)`` (keras.io's MLP-Mixer, EANet, Perceiver,
    ...): no stub; the generated program computes the statistics when it runs, both the module
    built before adapt() (the Sequential itself) and the model built after it hold them, and
    the model's predictions equal Keras' from the same conv/dense weights."""
    keras = pytest.importorskip("keras")
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import load_source_module

    from transpiler import verify

    source = open(CORPUS_SCRIPT, encoding="utf-8").read()
    result = translate(source, CORPUS_SCRIPT)
    assert not [d for d in result.program.diagnostics if d.severity == "stub"], result.program.diagnostics
    assert "adapt_normalization('normalization', x_train, axis=(-1,))" in result.text.replace('"', "'")
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    original = load_source_module(source)
    x, _y = original.make_data()
    original.prepare(x[:80])
    kmodel = original.build_model()
    generated.prepare(x[:80])
    tmodel = generated.build_model().eval()
    mean = np.asarray(original.data_augmentation.layers[0].adapt_mean)
    variance = np.asarray(original.data_augmentation.layers[0].adapt_variance)
    assert mean.shape == (3,) and float(mean.min()) > 50  # uint8 pixels: not the defaults
    for module, prefix in ((tmodel.data_augmentation, "normalization"), (generated.data_augmentation, "normalization1")):
        np.testing.assert_array_equal(getattr(module, f"{prefix}_mean").numpy(), mean)
        np.testing.assert_array_equal(getattr(module, f"{prefix}_variance").numpy(), variance)
    md = next(m for m in result.program.models if m.builder == "build_model")
    weights = {k: v for k, v in verify.map_keras_weights(md.graph, kmodel).items() if "normalization" not in k}
    missing, unexpected = tmodel.load_state_dict(weights, strict=False)
    assert not unexpected and all("normalization" in k for k in missing)
    with torch.no_grad():
        ours = tmodel(torch.as_tensor(np.transpose(x[80:], (0, 3, 1, 2)).astype(np.float32))).numpy()
    theirs = np.asarray(kmodel(x[80:].astype(np.float32), training=False))
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_adapted_program_runs_without_keras(tmp_path):
    """The generated program of the corpus script runs to its end as plain PyTorch."""
    result = translate(open(CORPUS_SCRIPT, encoding="utf-8").read(), CORPUS_SCRIPT)
    out = tmp_path / "normalized_augmentation_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "accuracy" in run.stdout


def test_adapt_of_another_layer_is_still_reported():
    """adapt() of a layer the runtime does not compute (TextVectorization, StringLookup) is not
    silently taken for a Normalization's."""
    source = ("import numpy as np\nimport keras\nfrom keras import layers\n"
              "x = np.ones((4, 3), dtype='float32')\n"
              "def build_model():\n"
              "    norm = layers.Normalization(mean=0.5, variance=2.0)\n"
              "    norm.adapt(x)\n"
              "    inputs = keras.Input(shape=(3,))\n"
              "    return keras.Model(inputs, layers.Dense(2)(norm(inputs)))\n"
              "model = build_model()\n")
    result = translate(source, "fixed_stats.py")
    assert "adapt_normalization" not in result.text
    assert "adapted_state" not in result.text


def test_adapt_inside_a_builder_function_is_a_stub_not_dropped():
    """The builder's body becomes the module class, so an adapt() in it would vanish and the
    statistics stay at 0 and 1 without a word: it is a reported stub."""
    source = ("import keras\nimport numpy as np\nfrom keras import layers\n\n\ndef build_model():\n"
              "    norm = layers.Normalization()\n    norm.adapt(np.ones((4, 3), dtype='float32'))\n"
              "    inp = keras.Input(shape=(3,))\n    return keras.Model(inp, layers.Dense(2)(norm(inp)))\n\n"
              "model = build_model()\n")
    result = translate(source, "case.py")
    stubs = [d.message for d in result.program.diagnostics if d.severity == "stub"]
    assert any("adapt() inside the builder function build_model()" in m for m in stubs), stubs


MODULE_LEVEL_NORMALIZER = """
import numpy as np
import keras
from keras import layers

x_train = np.random.RandomState(0).normal(4.0, 3.0, (64, 5)).astype("float32")

normalizer = layers.Normalization()
normalizer.adapt(x_train)


def build_model():
    inputs = keras.Input(shape=(5,))
    return keras.Model(inputs, layers.Dense(1)(normalizer(inputs)))


model = build_model()
"""


def test_module_level_normalizer_adapted_by_name_sets_the_builders_model():
    """``normalizer = layers.Normalization(); normalizer.adapt(x_train)`` then a builder that
    calls it: no stub, and the model built by the generated program holds Keras' statistics."""
    keras = pytest.importorskip("keras")
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import load_source_module

    from transpiler import verify

    result = translate(MODULE_LEVEL_NORMALIZER, "normalizer_by_name.py")
    assert not [d for d in result.program.diagnostics if d.severity == "stub"]
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    original = load_source_module(MODULE_LEVEL_NORMALIZER)
    np.testing.assert_array_equal(generated.model.normalizer_mean.numpy(), np.asarray(original.normalizer.adapt_mean))
    np.testing.assert_array_equal(generated.model.normalizer_variance.numpy(),
                                  np.asarray(original.normalizer.adapt_variance))


HELPER_ADAPTS_PER_CALL = """
import numpy as np
import keras
from keras import layers

rng = np.random.RandomState(0)
a_train = rng.normal(4.0, 3.0, (64, 1)).astype("float32")
b_train = rng.normal(-2.0, 0.5, (64, 1)).astype("float32")


def encode_numerical_feature(feature, data):
    normalizer = layers.Normalization()
    normalizer.adapt(data)
    return normalizer(feature)


a = keras.Input(shape=(1,), name="a")
b = keras.Input(shape=(1,), name="b")
x = layers.concatenate([encode_numerical_feature(a, a_train), encode_numerical_feature(b, b_train)])
model = keras.Model([a, b], layers.Dense(1)(x))
"""


def test_adapt_in_a_helper_called_on_model_tensors_runs_where_the_helper_is_called():
    """keras.io's structured_data_classification_from_scratch: a helper makes a Normalization,
    adapts it on the data and calls it on the model's input, once per column. The helper's calls
    become part of the torch module; its adapt() runs where the helper was called (the caller's
    argument in place of the parameter), before the model is built: each module holds the
    statistics Keras computes for its column (it was a stub; before that, silently 0 and 1)."""
    from transpiler import verify

    result = translate(HELPER_ADAPTS_PER_CALL, "helper_adapts.py")
    assert not [d for d in result.program.diagnostics if d.severity == "stub"], result.program.diagnostics
    flat = " ".join(result.text.split()).replace('"', "'")
    assert "adapt_normalization('normalization', a_train, axis=(-1,))" in flat
    assert "adapt_normalization('normalization_1', b_train, axis=(-1,))" in flat
    generated = verify.load_generated(result.text)
    for data, module in ((generated.a_train, generated.model.encode_numerical_feature1),
                         (generated.b_train, generated.model.encode_numerical_feature2)):
        mean, variance = _keras_adapt(data)
        np.testing.assert_allclose(module.normalizer_mean.numpy(), mean, rtol=1e-6)
        np.testing.assert_allclose(module.normalizer_variance.numpy(), variance, rtol=1e-6)


def test_adapt_in_a_helper_on_data_bound_in_a_branch_is_a_stub_not_silently_dropped():
    """Data the helper binds in a branch is no code the program can compute where the helper
    is called: the model is a reported stub naming the adapt() (never statistics left at 0 and 1)."""
    source = HELPER_ADAPTS_PER_CALL.replace("    normalizer.adapt(data)\n",
                                            "    if data.ndim == 2:\n        sample = data[:32]\n"
                                            "    normalizer.adapt(sample)\n")
    result = translate(source, "helper_adapts.py")
    stubs = [d.message for d in result.program.diagnostics if d.severity == "stub"]
    assert any("Normalization.adapt() inside a function called on the model's tensors" in m for m in stubs), stubs
    assert "adapted_state(" not in result.text and "class Net(" not in result.text
