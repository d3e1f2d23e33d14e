"""Time-major sequence models (torch's default ``batch_first=False`` of nn.LSTM / nn.GRU /
nn.RNN / nn.MultiheadAttention: (L, N, F)): the Keras layers read (N, L, F), so the
translation swaps the time and batch axes around the layer (graph_build ``_time_major``) and
keeps the program's time-major interface; two time-major layers in a row meet in a pair of
transposes the layout pass folds away. Before: a stub "nn.LSTM(batch_first=False):
time-major input is not supported". Numeric: equal to torch on the same weights (the first
axis of the inputs is the time axis in both)."""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (torch before Keras in one process)

from torch_keras_harness import check_torch_source

RNN = '''import torch
import torch.nn as nn

INPUT_SHAPE = (4,)
INPUT_DTYPE = "int64"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 6)
        self.rnn = nn.LAYER(6, 8, num_layers=2BIDI)
        self.out = nn.Linear(WIDTH, 3)

    def forward(self, x):
        e = self.embed(x)
        outputs, hidden = self.rnn(e)
        return self.out(outputs)


def build_model():
    return Net()
'''


@pytest.mark.parametrize("layer,bidi", [("LSTM", False), ("GRU", False), ("RNN", False), ("LSTM", True),
                                        ("GRU", True)])
def test_time_major_recurrent_layers_equal_torch(layer, bidi):
    src = RNN.replace("LAYER", layer).replace("BIDI", ", bidirectional=True" if bidi else "") \
        .replace("WIDTH", "16" if bidi else "8")
    err, n_t, n_k, tr = check_torch_source(src, batch=5)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5, err
    assert "keras.ops.transpose(" in tr.text


FINAL_STATE = '''import torch
import torch.nn as nn

INPUT_SHAPE = (4, 6)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(input_size=6, hidden_size=8)
        self.next = nn.GRU(8, 5)

    def forward(self, inputs):
        batch_size = inputs.size()[1]
        h0 = c0 = inputs.new_zeros((1, batch_size, 8))
        outputs, (ht, ct) = self.rnn(inputs, (h0, c0))
        seq, h = self.next(outputs)
        return torch.cat([ht[-1], h[-1]], 1)


def build_model():
    return Encoder()
'''


def test_time_major_final_states_and_stacked_layers_equal_torch():
    """The states h_n are (layers, N, H) in both conventions; two time-major layers in a row
    meet in a transpose pair the layout pass folds (one transpose into the first layer only)."""
    err, n_t, n_k, tr = check_torch_source(FINAL_STATE, batch=7)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5, err
    assert tr.text.count("keras.ops.transpose(") == 1, tr.text


ATTENTION = '''import torch
import torch.nn as nn

INPUT_SHAPE = (3, 8)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2)
        self.cross = nn.MultiheadAttention(8, 4, kdim=8, vdim=8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        a, _ = self.attn(x, x, x, need_weights=False)
        x = self.norm(x + a)
        mem = x * 2.0
        c, _ = self.cross(x, mem, mem, need_weights=False)
        return x + c


def build_model():
    return Block()
'''


def test_time_major_multihead_attention_equals_torch():
    err, n_t, n_k, tr = check_torch_source(ATTENTION, batch=5)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5, err


BUFFER_MASK = '''import torch
import torch.nn as nn

INPUT_SHAPE = (5, 8)


class Masked(nn.Module):
    """minGPT-ddp's MultiheadAttentionLayer: a float attn_mask (tril of ones, added to the
    scores: not a causal mask in torch) sliced from a buffer."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.tril(torch.ones(5, 5)).view(1, 1, 5, 5))
        self.attn = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)

    def forward(self, x):
        _, seq_size, _ = x.size()
        return self.attn(x, x, x, attn_mask=self.mask[0, 0, :seq_size, :seq_size])[0]


def build_model():
    return Masked()
'''

INPUT_MASKS = '''import torch
import torch.nn as nn

INPUT_SHAPE = [(6, 8), (6, 6), (6,)]


class Masked(nn.Module):
    """Additive float masks given to the model: a 3-D attn_mask ((N * heads, L, S), one
    head) and a float key_padding_mask (N, S), both added to the scores."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 1, batch_first=True)

    def forward(self, x, mask, padding):
        return self.attn(x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=False)[0]


def build_model():
    return Masked()
'''


def test_float_attn_mask_from_a_buffer_is_added_to_the_scores_as_torch_does():
    """Before: a stub "indexing the batch axis" (a buffer's first axis is no batch axis),
    then "nn.MultiheadAttention(attn_mask=...) is not translated yet"."""
    err, n_t, n_k, tr = check_torch_source(BUFFER_MASK, batch=3)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5, err
    assert "TorchMaskAttention(" in tr.text and "attn_mask=" in tr.text


def test_three_d_attn_mask_and_key_padding_mask_inputs_equal_torch():
    err, n_t, n_k, tr = check_torch_source(INPUT_MASKS, batch=4)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5, err
    assert "key_padding_mask=" in tr.text


BOOL_MASKS = '''import torch
import torch.nn as nn

INPUT_SHAPE = (6, 8)


class Masked(nn.Module):
    """A float causal buffer (generate_square_subsequent_mask's: 0 / -inf) and a boolean
    padding mask computed from the input (True = may not attend: -inf on the score)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("causal", torch.triu(torch.full((6, 6), float("-inf")), diagonal=1))
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        padding = x[:, :, 0] > 1.0
        return self.attn(x, x, x, attn_mask=self.causal, key_padding_mask=padding)[0]


def build_model():
    return Masked()
'''

CAUSAL_TIME_MAJOR = BOOL_MASKS.replace(", batch_first=True", "").replace(", key_padding_mask=padding", "")
#: (the padding alone: a causal row whose only key is padding is NaN in torch, and here too)
PADDING = BOOL_MASKS.replace("attn_mask=self.causal, ", "")


@pytest.mark.parametrize("src", [PADDING, CAUSAL_TIME_MAJOR], ids=["padding", "time_major"])
def test_causal_and_boolean_masks_are_minus_infinity_on_the_scores_as_torch_does(src):
    err, n_t, n_k, tr = check_torch_source(src, batch=6 if src is CAUSAL_TIME_MAJOR else 4)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5, err


SIZED_MASK = '''import torch
import torch.nn as nn


class MultiheadAttentionLayer(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))
        self.attn = torch.nn.MultiheadAttention(embed_dim=n_embd, num_heads=n_head, batch_first=True)

    def forward(self, x):
        _, seq_size, _ = x.size()
        y = self.attn(x, x, x, attn_mask=self.mask[0, 0, :seq_size, :seq_size])[0]
        return self.c_proj(y)
'''


def test_a_mask_sliced_to_a_length_known_at_run_time_translates():
    """minGPT-ddp's layer sized by its constructor: the buffer sliced on two axes by the
    input's length (slice_like twice, then the whole axes of unknown size kept as they are).
    Before: "its forward needs a size this file does not fix (... NoneType ...)"."""
    from transpiler.translate import translate

    tr = translate(SIZED_MASK, "layer.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "TorchMaskAttention(" in tr.text and "attn_mask=" in tr.text


ENCODER = '''import torch
import torch.nn as nn

INPUT_SHAPE = (4, 8)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1ACT)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.register_buffer("mask", torch.triu(torch.full((5, 5), float("-inf")), diagonal=1))

    def forward(self, x):
        return self.encoder(x, mask=self.mask)


def build_model():
    return Net()
'''


@pytest.mark.parametrize("act", ["", ", activation='gelu', norm_first=True"], ids=["post_norm", "gelu_pre_norm"])
def test_transformer_encoder_time_major_with_a_causal_mask_equals_torch(act):
    """nn.TransformerEncoder(Layer) (zoo_nn.py: torch's definitions read as user classes):
    time-major (L=5, N=4), a square subsequent mask; the weights by torch's keys."""
    err, n_t, n_k, tr = check_torch_source(ENCODER.replace("ACT", act), batch=5)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5, err
    assert n_t == n_k, (n_t, n_k)


TRANSFORMER = '''import torch
import torch.nn as nn

INPUT_SHAPE = [(3, 8), (3, 8)]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                                          dim_feedforward=16, dropout=0.0)

    def forward(self, src, tgt):
        return self.transformer(src, tgt)


def build_model():
    return Net()
'''


def test_transformer_encoder_decoder_equals_torch():
    err, n_t, n_k, tr = check_torch_source(TRANSFORMER, batch=6)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert err <= 1e-5, err
    assert n_t == n_k, (n_t, n_k)


MASK_PARAMETERS = '''import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30, 8)
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
        self.encoder = nn.TransformerEncoder(layer, 2)

    def forward(self, src, src_mask, src_padding_mask):
        return self.encoder(self.embed(src), src_mask, src_padding_mask)
'''


def test_mask_parameters_handed_to_an_attention_are_boolean_mask_inputs():
    """A forward's parameters that reach an attention only as its masks (through
    nn.TransformerEncoder's loop over its layers) are (L, S) / (N, S) masks, boolean (torch's
    convention; a 0 / -inf float mask is the same mask); before: read as (N, L, E)
    sequences: "nn.MultiheadAttention(key_padding_mask=...) of shape (None, None, 107)"."""
    from transpiler.translate import translate

    tr = translate(MASK_PARAMETERS, "model.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "src_mask (N, C) bool and src_padding_mask (N, C) bool" in tr.text, tr.text
    assert "attn_mask=src_mask" in tr.text and "key_padding_mask=src_padding_mask" in tr.text


CONFIG_BLOCK = '''import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.register_buffer("mask", torch.tril(torch.ones(config.block_size, config.block_size))
                             .view(1, 1, config.block_size, config.block_size))
        self.attn = nn.MultiheadAttention(embed_dim=config.n_embd, num_heads=config.n_head,
                                          dropout=config.attn_pdrop, batch_first=True)

    def forward(self, x):
        _, seq_size, _ = x.size()
        return self.attn(x, x, x, attn_mask=self.mask[0, 0, :seq_size, :seq_size])[0]


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.attn = Attention(config)
        self.mlp = nn.Sequential(nn.Linear(config.n_embd, 4 * config.n_embd), nn.GELU(),
                                 nn.Linear(4 * config.n_embd, config.n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(x)
'''


def test_config_sized_attention_block_of_unknown_length_translates():
    """minGPT-ddp's MultiheadAttentionLayer and Block sized by a config: the attention's
    dropout is the config's rate by name (before: 'the translation needs their numbers
    (config.attn_pdrop (float()))'), and a Linear reads the last axis of a sequence whose
    length is unknown (before: 'the input's feature axis has no size ((None, None, E))',
    its axis 1 taken for channels)."""
    from transpiler.translate import translate

    tr = translate(CONFIG_BLOCK, "model.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "dropout=config.attn_pdrop" in tr.text
