import keras
from keras import layers, ops


class CausalSelfAttention(layers.Layer):
    def __init__(self, dim, heads, **kwargs):
        super().__init__(**kwargs)
        self.attn = layers.MultiHeadAttention(num_heads=heads, key_dim=dim)

    def get_causal_attention_mask(self, inputs):
        input_shape = ops.shape(inputs)
        batch_size, sequence_length = input_shape[0], input_shape[1]
        i = ops.arange(sequence_length)[:, None]
        j = ops.arange(sequence_length)
        mask = ops.cast(i >= j, dtype="int32")
        mask = ops.reshape(mask, (1, input_shape[1], input_shape[1]))
        return ops.tile(mask, [batch_size, 1, 1])

    def call(self, inputs):
        mask = self.get_causal_attention_mask(inputs)
        return self.attn(query=inputs, value=inputs, key=inputs, attention_mask=mask)


def build_model():
    inputs = keras.Input(shape=(None, 8))
    x = CausalSelfAttention(8, 2)(inputs)
    x = layers.Dense(4)(x)
    return keras.Model(inputs, x)
