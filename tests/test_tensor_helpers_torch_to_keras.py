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
tiled = labels.repeat(2, 3)
grad_free = scores.requires_grad or scores.is_cuda
'''
NAMES = ("expanded", "viewed", "typed", "filled", "int_filled", "made", "product", "transposed", "new", "summed",
         "tiled")


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
    assert out.grad_free is False and src.grad_free is False


RANGE_SCRIPT = '''\
import torch

scaled = torch.arange(12, dtype=torch.float32)
scaled *= 0.5
stepped = torch.arange(0.0, 1.0, 0.25)
counted = torch.arange(end=4)
shifted = torch.arange(-1.5, 1)
spaced = torch.linspace(0, 1, steps=5)
'''


def test_ranges_keep_torchs_dtype_and_keywords(tmp_path):
    """torch.arange / linspace as NumPy's with torch's dtype (a float32 arange scaled in place
    failed on NumPy's int64; NumPy makes float64 where torch makes float32) and torch's keywords."""
    tr = translate(RANGE_SCRIPT, "ranges.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    src, out = _load(RANGE_SCRIPT, tmp_path, "ranges_src"), _load(tr.text, tmp_path, "ranges_out")
    for name in ("scaled", "stepped", "counted", "shifted", "spaced"):
        want, got = getattr(src, name).numpy(), np.asarray(getattr(out, name))
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_in_place_method_used_as_the_value_of_a_held_array_is_a_stub():
    source = "import torch\n\nx = torch.zeros(3)\ny = torch.cat([x.fill_(2.0), x])\n"
    tr = translate(source, "inplace.py", "keras")
    assert any("used as a value of an array a variable holds" in str(s) for s in tr.stubs), tr.stubs


#: a text pipeline as language_translation's: token ids made into tensors by a closure handed on
#: as a value, batched by a collate_fn that pads them (time-major), from a list and an iterable
COLLATE_SCRIPT = '''\
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

PAD = 1


def get_data(pairs, stream, batch):
    def _compose(*transforms):
        def func(x):
            for transform in transforms:
                x = transform(x)
            return x
        return func

    def _tensor_transform(token_ids):
        return torch.cat((torch.tensor([2]), torch.tensor(token_ids), torch.tensor([3])))

    src_transform = _compose(lambda ids: [i + 4 for i in ids], _tensor_transform)

    def _collate_fn(batch):
        src_batch, tgt_batch = [], []
        for src_sample, tgt_sample in batch:
            src_batch.append(src_transform(src_sample))
            tgt_batch.append(torch.tensor(tgt_sample, dtype=torch.float32))
        src_batch = pad_sequence(src_batch, padding_value=PAD)
        tgt_batch = pad_sequence(tgt_batch, batch_first=True)
        return src_batch, tgt_batch

    listed = DataLoader(pairs, batch_size=batch, collate_fn=_collate_fn)
    streamed = DataLoader(stream, batch_size=batch, collate_fn=_collate_fn)
    return listed, streamed


def create_mask(src, pad_idx):
    return (src == pad_idx).transpose(0, 1)
'''


def test_collate_fn_loaders_and_padding_equal_torch(tmp_path):
    tr = translate(COLLATE_SCRIPT, "text_data.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    assert "CollateLoader(" in tr.text and "import torch" not in tr.text
    src = _load(COLLATE_SCRIPT, tmp_path, "collate_src")
    out = _load(tr.text, tmp_path, "collate_out")
    pairs = [([5, 6, 7], [0.5]), ([8], [1.5, 2.5, 3.5]), ([9, 10], [4.0, 5.0]), ([11, 12, 13, 14], [6.0]),
             ([15], [7.0, 8.0])]
    class Stream(torch.utils.data.IterableDataset):  # (torchtext's datasets are iterable ones)
        def __iter__(self):
            return iter(pairs)

    for want_loader, got_loader in zip(src.get_data(pairs, Stream(), 2), out.get_data(pairs, iter(pairs), 2)):
        want, got = list(want_loader), list(got_loader)
        assert len(want) == len(got) == 3
        for (ws, wt), (gs, gt) in zip(want, got):
            for w, g in ((ws, gs), (wt, gt)):
                g = np.asarray(g)
                assert g.dtype == w.numpy().dtype and g.shape == tuple(w.shape)
                np.testing.assert_array_equal(g, w.numpy())
            np.testing.assert_array_equal(_np(out.create_mask(gs, 1)), src.create_mask(ws, 1).numpy())


def test_two_axis_transpose_of_an_unknown_value_is_a_stub():
    """torch's ``x.transpose(0, 1)`` swaps two axes; numpy's permutes all of them (of a 2-D
    array, ``transpose(0, 1)`` is the array itself): on a value nothing shows to be a tensor
    the statement is a marked stub, not numpy code that gives other numbers."""
    source = "import torch\n\n\ndef f(rows, k):\n    return rows[k].transpose(0, 1)\n"
    tr = translate(source, "f.py", "keras")
    assert any("torch swaps two axes" in str(s) for s in tr.stubs), tr.stubs


CORPUS = '''\
import torch


class Corpus(object):
    def __init__(self, lines):
        self.word2idx = {}
        self.ids = self.tokenize(lines)

    def tokenize(self, lines):
        idss = []
        for line in lines:
            ids = [self.word2idx.setdefault(w, len(self.word2idx)) for w in line.split() + ["<eos>"]]
            idss.append(torch.tensor(ids).type(torch.int64))
        return torch.cat(idss)
'''


def test_a_plain_class_making_tensors_of_data_equals_torch(tmp_path):
    tr = translate(CORPUS, "corpus.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    lines = ["a b c", "b c d e", "a"]
    want = _load(CORPUS, tmp_path, "corpus_src").Corpus(lines).ids.numpy()
    got = _load(tr.text, tmp_path, "corpus_out").Corpus(lines).ids
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


GRAPH = '''\
import numpy as np
import torch


def load_graph(content, edges, V):
    features = torch.FloatTensor(content[:, 1:-1].astype(np.int32))
    scale = 1 / torch.sum(features, dim=1)
    scale[scale == float("inf")] = 0
    scale = torch.diag(scale).to_sparse()
    features = scale @ features
    labels = torch.LongTensor(content[:, -1].astype(np.int64))
    E = edges.shape[0]
    adj = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64)
    adj = torch.eye(V) + adj
    return features, labels, adj
'''


def test_typed_and_sparse_tensors_of_data_equal_torch(tmp_path):
    """torch.FloatTensor / LongTensor of arrays, a sparse diagonal and a sparse COO adjacency
    (gat's load_cora, with a duplicate edge and a node without features): dense numpy arrays
    in the Keras program, a note says so, the numbers equal torch's to_dense()."""
    tr = translate(GRAPH, "graph.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    assert tr.text.count("a sparse tensor is a dense numpy array here") == 2
    rng = np.random.default_rng(0)
    content = np.concatenate([np.arange(5)[:, None], rng.integers(0, 2, (5, 4)), rng.integers(0, 3, (5, 1))], 1)
    content[2, 1:-1] = 0
    edges = np.array([[0, 1], [1, 2], [0, 1], [4, 3]], dtype=np.int32)
    want = _load(GRAPH, tmp_path, "graph_src").load_graph(content, edges, 5)
    got = _load(tr.text, tmp_path, "graph_out").load_graph(content, edges, 5)
    for w, g in zip(want, got):
        w = w.to_dense().numpy() if w.is_sparse else w.numpy()
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)
    assert got[1].dtype == np.int64 and got[0].dtype == np.float32


def test_a_channels_last_feature_map_handed_to_another_files_function_is_permuted_back():
    """A library function over tensors reads torch's channels-first layout (above); the Keras
    model returns its feature maps channels-last, so handing one to a function of another file
    (``helpers.gram(out)``) permutes it back to torch's layout at the call, not a call that would
    index the wrong axes (run against torch: tests/test_layout_boundaries_torch_to_keras.py)."""
    source = '''\
import torch
import torch.nn as nn
import helpers


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 3, 8, 8)
for epoch in range(2):
    optimizer.zero_grad()
    loss = helpers.gram(model(x)).mean()
    loss.backward()
    optimizer.step()
'''
    tr = translate(source, "train.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    flat = "".join(tr.text.split())
    assert "helpers.gram(keras.ops.transpose(" in flat and "(0,3,1,2))" in flat, tr.text


#: Keras' loss object as the Keras → torch printer writes it: a local ``def loss_fn(target,
#: output)`` over the per-sample loss helper, whose body holds tensor methods numpy lacks
LOSS_OBJECT_SCRIPT = '''\
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc(x)


def sparse_categorical_crossentropy(logits, target):
    loss = F.cross_entropy(logits.flatten(0, -2), target.flatten().long(), reduction="none")
    return loss.view(logits.shape[:-1])


def main():
    x = np.random.RandomState(0).randn(64, 6).astype("float32")
    y = np.random.RandomState(1).randint(0, 3, size=64)
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    def loss_fn(target, output):
        return sparse_categorical_crossentropy(output, target).mean()

    loader = DataLoader(TensorDataset(torch.as_tensor(x), torch.as_tensor(y)), batch_size=16, shuffle=True)
    for epoch in range(2):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(yb, model(xb))
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
'''


def test_a_local_function_read_as_a_loss_object_is_not_read_again_as_an_uncalled_function():
    """``loss_fn`` is Keras' loss object (compile's loss): the functions nothing called inside
    main (tensor_params.read_nested) are only those the scope still holds as functions, so the
    per-sample helper's ``target.flatten().long()`` is not read with guessed parameters (two
    stubs in the round trips of a GradientTape loop before)."""
    tr = translate(LOSS_OBJECT_SCRIPT, "loss_object.py", "keras")
    assert not tr.stubs, [str(s) for s in tr.stubs]
    assert "keras.losses.SparseCategoricalCrossentropy(from_logits=True)" in tr.text
    assert "def sparse_categorical_crossentropy" not in tr.text and "import torch" not in tr.text
