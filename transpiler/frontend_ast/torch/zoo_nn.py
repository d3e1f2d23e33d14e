"""torch.nn's transformer modules (``nn.Transformer``, ``nn.TransformerEncoder(Layer)``,
``nn.TransformerDecoder(Layer)``) as modules the reader reads like the script's own classes
(the torchvision zoo's scheme, ``zoo.py``).

The definitions are torch's (``torch/nn/modules/transformer.py``) in the form the reader
reads: the same submodules under the same attribute names in the same order (``self_attn``,
``linear1``, ``dropout``, ``linear2``, ``norm1``, ``norm2``, ``dropout1``, ``dropout2``; a
decoder layer's ``multihead_attn``, ``norm3``, ``dropout3``; ``layers.<i>`` and ``norm`` of
the stacks), so the state_dict keys map onto the Keras layers, and the same forward (post-norm
or ``norm_first``, relu or gelu, torch's masks handed to each attention). Time-major unless
``batch_first`` (the attention reads the layout, graph_build ``_time_major``). A stack's
layers are fresh modules of the given layer's arguments (torch deep-copies it: the same
structure; initial weights are drawn per layer either way). ``is_causal`` is torch's hint
about a mask that is given, not a mask: it changes nothing here. Not read: ``custom_encoder``
/ ``custom_decoder``, an activation other than "relu"/"gelu" (a stub naming it).

Imports no deep-learning framework.
"""

from __future__ import annotations


from transpiler.frontend_ast.interp import PASS
from transpiler.frontend_ast.torch.functions import torch_function

#: the names the definitions reach torch by (bound in the reader's globals on first use)
_ALIASES = {"_zoo_nn": "torch.nn", "_zoo_F": "torch.nn.functional"}

_SOURCE = '''
class _ZooTransformerEncoderLayer(_zoo_nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        self._zoo_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                          norm_first, bias)
        self.self_attn = _zoo_nn.MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                    batch_first=batch_first)
        self.linear1 = _zoo_nn.Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = _zoo_nn.Dropout(dropout)
        self.linear2 = _zoo_nn.Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = norm_first
        self.norm1 = _zoo_nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = _zoo_nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = _zoo_nn.Dropout(dropout)
        self.dropout2 = _zoo_nn.Dropout(dropout)
        if activation == "gelu":
            self._zoo_gelu = True
        elif activation == "relu":
            self._zoo_gelu = False
        else:
            self._zoo_gelu = _zoo_nn.Transformer_activation_other_than_relu_or_gelu(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        h = self.linear1(x)
        if self._zoo_gelu:
            h = _zoo_F.gelu(h)
        else:
            h = _zoo_F.relu(h)
        x = self.linear2(self.dropout(h))
        return self.dropout2(x)


class _ZooTransformerDecoderLayer(_zoo_nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        self._zoo_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                          norm_first, bias)
        self.self_attn = _zoo_nn.MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                    batch_first=batch_first)
        self.multihead_attn = _zoo_nn.MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                         batch_first=batch_first)
        self.linear1 = _zoo_nn.Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = _zoo_nn.Dropout(dropout)
        self.linear2 = _zoo_nn.Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = norm_first
        self.norm1 = _zoo_nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = _zoo_nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = _zoo_nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = _zoo_nn.Dropout(dropout)
        self.dropout2 = _zoo_nn.Dropout(dropout)
        self.dropout3 = _zoo_nn.Dropout(dropout)
        if activation == "gelu":
            self._zoo_gelu = True
        elif activation == "relu":
            self._zoo_gelu = False
        else:
            self._zoo_gelu = _zoo_nn.Transformer_activation_other_than_relu_or_gelu(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        h = self.linear1(x)
        if self._zoo_gelu:
            h = _zoo_F.gelu(h)
        else:
            h = _zoo_F.relu(h)
        x = self.linear2(self.dropout(h))
        return self.dropout3(x)


class _ZooTransformerEncoder(_zoo_nn.Module):
    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _zoo_nn.ModuleList([_ZooTransformerEncoderLayer(*encoder_layer._zoo_args)
                                          for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class _ZooTransformerDecoder(_zoo_nn.Module):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _zoo_nn.ModuleList([_ZooTransformerDecoderLayer(*decoder_layer._zoo_args)
                                          for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class _ZooTransformer(_zoo_nn.Module):
    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        encoder_layer = _ZooTransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias)
        encoder_norm = _zoo_nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.encoder = _ZooTransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        decoder_layer = _ZooTransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias)
        decoder_norm = _zoo_nn.LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.decoder = _ZooTransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)
'''

#: torch.nn class → its definition above
CLASSES = {f"torch.nn.{name}": f"_Zoo{name}" for name in (
    "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer")}

def _classes(fe) -> dict:
    """torch.nn's transformer definitions as the reader's classes (the stacks name the layer
    classes from their own code: each is bound by its name too)."""
    from transpiler.frontend_ast.torch.zoo import source_classes

    return source_classes(fe, _SOURCE, _ALIASES, "zoo_nn_classes", expose=True)


def zoo_class(fe, path: str):
    """The reader's class of ``torch.nn.<name>`` (a base of the program's own class)."""
    return _classes(fe)[CLASSES[path]]


@torch_function(*sorted(CLASSES))
def _construct(fe, path, args, kwargs, node, span):
    """``nn.TransformerEncoderLayer(...)`` and the rest: the definition as a user module."""
    from transpiler.frontend_ast.torch.modules import Unsupported

    for key in ("custom_encoder", "custom_decoder"):
        if kwargs.get(key) is not None:
            raise Unsupported(f"nn.Transformer({key}=...) is not translated yet")
    return fe._instantiate(_classes(fe)[CLASSES[path]], list(args), dict(kwargs), node) if path in CLASSES else PASS
