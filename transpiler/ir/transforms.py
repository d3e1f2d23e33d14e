"""How a canonical (Keras-like) param becomes a PyTorch tensor: one enum, a fact of the IR.

Emitters choose the transform for each param from the op spec (printers record it, the
weights mapping applies it with ``transpiler.weights.transforms``); nothing is guessed from
tensor names. Every member is exactly invertible, for the reverse direction.
"""

from __future__ import annotations

from enum import Enum


class Transform(Enum):
    """How a canonical param becomes a torch tensor."""

    #: same layout in both (biases, BN statistics, embeddings, LayerNorm gamma/beta)
    IDENTITY = "identity"
    #: Dense kernel (in, out) → Linear weight (out, in); RNN kernels (in, G) → (G, in)
    TRANSPOSE = "transpose"
    #: Conv kernel (*spatial, in, out) → ConvNd weight (out, in, *spatial)
    CONV_KERNEL = "conv_kernel"
    #: ConvTranspose kernel (*spatial, out, in) → ConvTransposeNd weight (in, out, *spatial)
    CONV_TRANSPOSE_KERNEL = "conv_transpose_kernel"
    #: Depthwise kernel (kh, kw, in, mult) → grouped Conv2d weight (in*mult, 1, kh, kw)
    DEPTHWISE_KERNEL = "depthwise_kernel"
    #: GRU kernel (in, 3u) in gate order z, r, h → weight_ih (3u, in) in order r, z, n
    GRU_KERNEL = "gru_kernel"
    #: GRU bias (2, 3u) z, r, h → row ``index`` reordered r, z, n
    GRU_BIAS_INPUT = "gru_bias_input"
    GRU_BIAS_RECURRENT = "gru_bias_recurrent"
    #: a torch tensor with no Keras counterpart (LSTM/RNN bias_hh): zeros of the bias's shape
    ZEROS = "zeros"
    #: PReLU alpha (*spatial, C) → (C, *spatial)
    CHANNELS_FIRST = "channels_first"
    #: PReLU alpha shared over every axis but one, e.g. (1, 1, C) → nn.PReLU weight (C,);
    #: a MultiHeadAttention bias (heads, size) → Linear bias (heads * size,)
    FLATTEN = "flatten"
    #: MultiHeadAttention query/key/value kernel (features, heads, size) → Linear weight
    #: (heads * size, features): head h owns rows h*size … (h+1)*size - 1, as torch splits them
    HEADS_KERNEL = "heads_kernel"
    #: MultiHeadAttention output kernel (heads, size, out) → Linear weight (out, heads * size)
    HEADS_OUTPUT_KERNEL = "heads_output_kernel"
