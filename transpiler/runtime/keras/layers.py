"""torch's default initialisation and layers Keras lacks, for generated Keras programs
(PyTorch -> Keras); the model printer copies the ones a model uses.
"""

import math

import keras
from keras import layers


def torch_kernel_init():
    """PyTorch's default weight init (kaiming_uniform, a=sqrt(5)): U(±1/sqrt(fan_in))."""
    return keras.initializers.VarianceScaling(1 / 3, "fan_in", "uniform")


def torch_uniform_init(fan_in):
    """PyTorch's default bias (and recurrent weight) init: U(±1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return keras.initializers.RandomUniform(-bound, bound)


def set_items(array, index, values):
    """A copy of ``array`` with ``array[index] = values`` (PyTorch's item assignment into a
    constant its module computed, ``pe[:, 0::2] = torch.sin(...)``, as an expression)."""
    out = array.copy()
    out[index] = values
    return out


class ModelWeight(layers.Layer):
    """A weight of the model's own (a PyTorch nn.Parameter, or a buffer: not trainable).

    Called on any tensor of the model (only to place it in the functional graph), it
    returns the weight."""

    def __init__(self, shape, initializer="zeros", trainable=True, **kwargs):
        super().__init__(**kwargs)
        self.value = self.add_weight(
            shape=shape, initializer=initializer, trainable=trainable, name="value"
        )

    def call(self, inputs):
        return keras.ops.convert_to_tensor(self.value)


class PaddingEmbedding(layers.Embedding):
    """torch's nn.Embedding(padding_idx=...): the padding row starts at zero and gets no
    gradient (training leaves it as it is)."""

    def __init__(self, input_dim, output_dim, padding_idx=0, **kwargs):
        super().__init__(input_dim, output_dim, **kwargs)
        self.padding_idx = padding_idx

    def build(self, input_shape=None):
        super().build(input_shape)
        rows = keras.ops.expand_dims(keras.ops.arange(self.input_dim) == self.padding_idx, -1)
        # (the variable's value, not the variable: jax's where takes arrays only)
        self.embeddings.assign(keras.ops.where(rows, 0.0, keras.ops.convert_to_tensor(self.embeddings)))

    def call(self, inputs):
        outputs = super().call(inputs)
        padding = keras.ops.expand_dims(keras.ops.equal(inputs, self.padding_idx), -1)
        return keras.ops.where(padding, keras.ops.stop_gradient(outputs), outputs)

    def get_config(self):
        return {**super().get_config(), "padding_idx": self.padding_idx}


class TrainingSelect(layers.Layer):
    """Its first input while training, its second at inference: PyTorch's
    ``a if self.training else b`` (both inputs are computed in either mode; Keras
    passes ``training`` to the layer, True in fit, False in predict)."""

    def call(self, inputs, training=None):
        train, infer = inputs
        return train if training else infer


class NormalNoise(layers.Layer):
    """Normal noise of shape (batch of its input, *shape), drawn at every call (in
    training and inference alike) from the layer's own seed generator."""

    def __init__(self, shape, mean=0.0, stddev=1.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.noise_shape = tuple(shape)
        self.mean = mean
        self.stddev = stddev
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, inputs):
        return keras.random.normal(
            (keras.ops.shape(inputs)[0], *self.noise_shape),
            mean=self.mean,
            stddev=self.stddev,
            dtype=self.compute_dtype,
            seed=self.seed_generator,
        )


class PixelShuffle(layers.Layer):
    """torch's nn.PixelShuffle on a channels-last image: C*r*r channels become C channels of
    r x r blocks, output channel c at block position (i, j) being input channel c*r*r + i*r + j
    (torch's order; depth_to_space orders the channels the other way). Any image size."""

    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        r = self.factor
        shape = keras.ops.shape(inputs)
        h, w, c = shape[1], shape[2], inputs.shape[-1] // (r * r)
        x = keras.ops.reshape(inputs, (-1, h, w, c, r, r))
        x = keras.ops.transpose(x, (0, 1, 4, 2, 5, 3))
        return keras.ops.reshape(x, (-1, h * r, w * r, c))

    def compute_output_shape(self, input_shape):
        n, h, w, c = input_shape
        r = self.factor
        return (n, None if h is None else h * r, None if w is None else w * r, c // (r * r))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class TorchMaskAttention(layers.MultiHeadAttention):
    """Keras' MultiHeadAttention with PyTorch's masks (nn.MultiheadAttention's ``attn_mask``
    and ``key_padding_mask``): a boolean mask marks what may NOT be attended (True = -inf
    on the score), a float mask is added to the scores (``generate_square_subsequent_mask``'s
    0 / -inf, or any numbers); ``attn_mask`` is (L, S) or (N * heads, L, S),
    ``key_padding_mask`` (N, S). The scores are torch's: softmax(q k^T / sqrt(d) + mask), a
    fully masked row NaN as in torch."""

    def call(self, query, value, key=None, attn_mask=None, key_padding_mask=None, training=None):
        self._torch_bias = None
        for mask, padding in ((attn_mask, False), (key_padding_mask, True)):
            if mask is None:
                continue
            if keras.backend.standardize_dtype(mask.dtype) == "bool":
                mask = keras.ops.where(mask, float("-inf"), 0.0)
            mask = keras.ops.cast(mask, self.compute_dtype)
            if padding:  # (N, S) -> (N, 1, 1, S)
                mask = keras.ops.expand_dims(keras.ops.expand_dims(mask, 1), 1)
            elif len(mask.shape) == 3:  # (N * heads, L, S) -> (N, heads, L, S)
                mask = keras.ops.reshape(mask, (-1, self._num_heads, *mask.shape[1:]))
            self._torch_bias = mask if self._torch_bias is None else self._torch_bias + mask
        try:
            return super().call(query, value, key=key, training=training)
        finally:
            self._torch_bias = None

    def compute_output_spec(self, query, value, key=None, attn_mask=None, key_padding_mask=None, training=None):
        return super().compute_output_spec(query, value, key=key, training=training)

    def _compute_attention(self, query, key, value, attention_mask=None, training=None,
                           return_attention_scores=False, use_causal_mask=False):
        query = keras.ops.multiply(query, keras.ops.cast(self._inverse_sqrt_key_dim, query.dtype))
        scores = keras.ops.einsum(self._dot_product_equation, key, query)  # (N, heads, L, S)
        if self._torch_bias is not None:
            scores = scores + self._torch_bias
        scores = keras.ops.softmax(scores, axis=-1)
        dropped = self._dropout_layer(scores, training=training) if self._dropout > 0.0 else scores
        return keras.ops.einsum(self._combine_equation, dropped, value), scores
