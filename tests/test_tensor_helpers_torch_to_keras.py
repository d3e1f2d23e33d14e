"""torch → Keras: a library module's functions over tensors (nothing in the file calls them)
become keras.ops code (frontend_ast/torch/tensor_params.py).

A parameter the body uses as a torch tensor (``y.view()``, ``x.bmm()``, ``x.new_tensor()``)
is read as a tensor; each translated function is run on the same inputs as the torch
original — numpy arrays and backend tensors — and compared (≤ 1e-5), and a gradient through
one equals torch's autograd. The inference is said in a note, and a parameter used only in
ways a module shares (``m.to(d)``) is not taken for a tensor.
"""

from __future__ import annotations

import importlib.util
import sys
import types

import torch  # noqa: F401  (torch before Keras in one process)
import numpy as np
import pytest

from transpiler.translate import translate

LIBRARY = '''\
import torch


def gram(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    return features.bmm(features_t) / (ch * h * w)


def normalize(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def to_image(data):
    img = data.clone().clamp(0, 255).numpy()
    return img.transpose(1, 2, 0).astype("uint8")


def top1(pred, target):
    return pred.t().eq(target.view(1, -1).expand_as(pred.t())).float()


def masked(scores, mask):
    return scores.masked_fill(mask, -1e9).softmax(-1) + scores.new_zeros(scores.size()).type_as(scores)


def like(x, y):
    return x.view_as(y).permute(0, 2, 1).contiguous() * 2.0
'''


def _load(text: str, tmp_path, name: str) -> types.ModuleType:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tensor_helpers")
    tr = translate(LIBRARY, "helpers.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    return _load(LIBRARY, tmp, "torch_helpers_src"), _load(tr.text, tmp, "keras_helpers_out"), tr


def _np(x):
    import keras

    return np.asarray(keras.ops.convert_to_numpy(x))


def test_tensor_parameters_are_said_in_a_note(both):
    text = both[2].text
    assert "# transpiler: gram: nothing in this file calls it" in text
    assert "y (y.size(), y.view())" in text
    assert "torch also changed the caller's tensor" in text  # (div_)
    assert "keras.ops.matmul(" in text and "keras.ops.swapaxes(" in text


@pytest.mark.parametrize("as_tensor", [False, True], ids=["numpy", "backend-tensor"])
def test_tensor_helpers_equal_torch(both, as_tensor):
    import keras

    src, out, _ = both
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 255, (2, 3, 5, 4)).astype("float32")
    wrap = keras.ops.convert_to_tensor if as_tensor else (lambda a: a)
    np.testing.assert_allclose(_np(out.gram(wrap(images))), src.gram(torch.from_numpy(images)).numpy(), rtol=1e-5)
    np.testing.assert_allclose(_np(out.normalize(wrap(images.copy()))),
                               src.normalize(torch.from_numpy(images.copy())).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out.to_image(wrap(images[0])), src.to_image(torch.from_numpy(images[0])))
    pred = rng.integers(0, 4, (5, 2))
    target = rng.integers(0, 4, (5,))
    np.testing.assert_array_equal(_np(out.top1(wrap(pred), wrap(target))),
                                  src.top1(torch.from_numpy(pred), torch.from_numpy(target)).numpy())
    scores = rng.normal(size=(2, 3, 4)).astype("float32")
    mask = rng.uniform(size=(2, 3, 4)) > 0.5
    np.testing.assert_allclose(_np(out.masked(wrap(scores), wrap(mask))),
                               src.masked(torch.from_numpy(scores), torch.from_numpy(mask)).numpy(), rtol=1e-5)
    flat = rng.normal(size=(2, 12)).astype("float32")
    np.testing.assert_allclose(_np(out.like(wrap(flat), wrap(scores))),
                               src.like(torch.from_numpy(flat), torch.from_numpy(scores)).numpy(), rtol=1e-6)


def test_gradient_through_a_tensor_helper_equals_torch(both):
    import tensorflow as tf

    src, out, _ = both
    images = np.random.default_rng(1).normal(size=(2, 3, 4, 4)).astype("float32")
    x = torch.from_numpy(images).requires_grad_(True)
    src.gram(x).square().sum().backward()
    v = tf.Variable(images)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(out.gram(v)))
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), x.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_parameter_used_only_as_a_module_is_not_taken_for_a_tensor():
    source = "import torch\n\n\ndef place(m, device):\n    m.to(device)\n    return m.view(2)\n"
    tr = translate(source, "place.py", "keras")
    # .to() is no evidence (a module has it); .view() is: the parameter is a tensor, read as one
    assert not tr.stubs and "keras.ops.reshape(m, 2)" in tr.text
    only_to = translate("import torch\n\n\ndef place(m, device):\n    return m.to(device)\n", "p.py", "keras")
    assert "nothing in this file calls it" not in only_to.text


#: array data of a script (numpy in the Keras program): the tensor methods numpy spells otherwise
ARRAY_SCRIPT = '''\
import numpy as np
import torch

rng = np.random.default_rng(0)
scores = torch.from_numpy(rng.normal(size=(2, 3, 4)).astype("float32"))
mask = torch.from_numpy(rng.uniform(size=(2, 3, 4)) > 0.5)
labels = torch.from_numpy(rng.integers(0, 4, size=(5,)))
pred = torch.from_numpy(rng.integers(0, 4, size=(2, 5)))
flat = torch.from_numpy(rng.normal(size=(2, 12)).astype("float32"))

expanded = pred.eq(labels.view(1, -1).expand_as(pred)).float()
viewed = flat.view_as(scores)
typed = labels.type_as(scores)
filled = scores.masked_fill(mask, float("-inf")).masked_fill(mask == 0, 0.5)
int_filled = labels.masked_fill(labels > 1, 2.7)
made = torch.cat([labels, torch.ones(1).type_as(labels).fill_(7)], dim=0)
product = scores.bmm(scores.transpose(1, 2))
transposed = flat.t()
new = scores.new_zeros((2, 2)) + scores.new_tensor([1.5, 2.5])
summed = scores.clone()
summed.add_(1.0)
'''
NAMES = ("expanded", "viewed", "typed", "filled", "int_filled", "made", "product", "transposed", "new", "summed")


def test_tensor_methods_on_array_data_equal_torch(tmp_path):
    tr = translate(ARRAY_SCRIPT, "arrays.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    assert "import torch" not in tr.text
    src = _load(ARRAY_SCRIPT, tmp_path, "arrays_src")
    out = _load(tr.text, tmp_path, "arrays_out")
    for name in NAMES:
        want = getattr(src, name).numpy()
        got = np.asarray(getattr(out, name))
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)


def test_in_place_method_used_as_the_value_of_a_held_array_is_a_stub():
    source = "import torch\n\nx = torch.zeros(3)\ny = torch.cat([x.fill_(2.0), x])\n"
    tr = translate(source, "inplace.py", "keras")
    assert any("used as a value of an array a variable holds" in str(s) for s in tr.stubs), tr.stubs
