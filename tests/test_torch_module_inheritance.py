"""Module classes inheriting from module classes: ``super().__init__(...)`` runs the base's
constructor (its layers are the subclass's), ``super().forward(x)`` the base's forward, also
through ``super(Cls, self)``; ``class M(nn.Transformer)`` gets torch's own encoder/decoder from
``super().__init__(d_model=...)`` (word_language_model's TransformerModel). Before, every
``super().__init__(...)`` was a no-op: the base's layers were missing (``module method
.encoder() is not supported``, or an attribute error), and ``super().forward`` was refused.
Numeric: the Keras model equals torch on the same weights."""

from __future__ import annotations

import torch  # noqa: F401  (torch before Keras in one process)

from torch_keras_harness import check_torch_source

BASE_LAYERS = '''import torch
import torch.nn as nn

INPUT_SHAPE = (6,)


class Base(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(6, width)
        self.act = nn.Tanh()

    def forward(self, x):
        return self.act(self.fc1(x))


class Deeper(Base):
    def __init__(self):
        super(Deeper, self).__init__(8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = super().forward(x)
        return self.fc2(h) + super(Deeper, self).forward(x).sum(1, keepdim=True)


def build_model():
    return Deeper()
'''


def test_super_init_builds_the_base_layers_and_super_forward_runs_the_base_forward():
    err, n_t, n_k, tr = check_torch_source(BASE_LAYERS, batch=4)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert n_t == n_k == 6 * 8 + 8 + 8 * 3 + 3
    assert err <= 1e-5, err


TRANSFORMER_SUBCLASS = '''import math
import torch
import torch.nn as nn

INPUT_SHAPE = (5,)
INPUT_DTYPE = "int64"


class TransformerModel(nn.Transformer):
    def __init__(self, ntoken=40, ninp=16, nhead=2, nhid=24, nlayers=2, dropout=0.5):
        super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                               num_encoder_layers=nlayers)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, src):
        src = self.input_emb(src) * math.sqrt(self.ninp)
        output = self.encoder(src)
        return self.decoder(output)


def build_model():
    return TransformerModel()
'''


def test_subclass_of_nn_transformer_gets_torchs_encoder_from_super_init():
    err, n_t, n_k, tr = check_torch_source(TRANSFORMER_SUBCLASS, batch=3)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert n_t == n_k
    assert err <= 1e-4, err


BOTTLE = '''import torch
import torch.nn as nn

INPUT_SHAPE = (5, 6)


class Bottle(nn.Module):

    def forward(self, input):
        if len(input.size()) <= 2:
            return super(Bottle, self).forward(input)
        size = input.size()[:2]
        out = super(Bottle, self).forward(input.view(size[0]*size[1], -1))
        return out.view(size[0], size[1], -1)


class Linear(Bottle, nn.Linear):
    pass


class Scaled(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 2.0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = Linear(6, 4)
        self.out = nn.Sequential(Linear(4, 4), nn.ReLU(), Scaled(4, 2))

    def forward(self, x):
        h = torch.relu(self.proj(x))
        return self.out(h.sum(1))


def build_model():
    return Net()
'''


def test_subclass_of_a_torch_layer_with_a_batch_merging_mixin_equals_torch():
    """snli's ``class Linear(Bottle, nn.Linear)``: torch's Linear made of the subclass's
    arguments (keys ``proj.weight``), the mixin's forward run (a (N, T, F) input viewed as
    (N*T, F) around the layer), a subclass's own forward (``Scaled``) too."""
    err, n_t, n_k, tr = check_torch_source(BOTTLE, batch=3)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert n_t == n_k == 6 * 4 + 4 + 4 * 4 + 4 + 4 * 2 + 2
    assert err <= 1e-5, err
    assert "Rescaling(2.0" in tr.text  # (Scaled's own forward ran)


def test_merged_batch_view_used_otherwise_is_a_marked_stub():
    from transpiler.translate import translate

    src = BOTTLE.replace("out = super(Bottle, self).forward(input.view(size[0]*size[1], -1))",
                         "out = input.view(size[0]*size[1], -1).sum(1)")
    tr = translate(src, "model.py", "keras")
    assert any("merging the batch axis" in d.message for d in tr.stubs), [str(d) for d in tr.stubs]


LIBRARY_MIXIN = '''import torch
import torch.nn as nn


class Bottle(nn.Module):

    def forward(self, input):
        if len(input.size()) <= 2:
            return super(Bottle, self).forward(input)
        size = input.size()[:2]
        out = super(Bottle, self).forward(input.view(size[0]*size[1], -1))
        return out.view(size[0], size[1], -1)


class Linear(Bottle, nn.Linear):
    pass


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Sequential(Linear(6, 4), nn.ReLU(), Linear(4, 2))

    def forward(self, x):
        return self.out(x)
'''


def test_mixin_class_is_no_model_of_its_own_and_the_library_output_runs():
    """A library file (snli's model.py): ``Bottle`` alone cannot run in torch either (its
    ``super().forward`` is nn.Module's, which does not exist): a warning, no stub of its own
    (it was "Bottle: no input shape ... holds no layer of its own"); ``Head`` is translated
    with the mixin's forward inside, and the output imports and runs."""
    import numpy as np

    from torch_keras_harness import load_source
    from transpiler.translate import translate

    tr = translate(LIBRARY_MIXIN, "model.py", "keras")
    assert not [d for d in tr.stubs if "Bottle:" in d.message or "Head" in d.message], [str(d) for d in tr.stubs]
    assert any("Bottle is a mixin" in d.message for d in tr.diagnostics), [str(d) for d in tr.diagnostics]
    mod = load_source(tr.text, "keras_library_under_test")
    y = mod.Head()(np.ones((3, 6), "float32"))
    assert tuple(y.shape) == (3, 2)
