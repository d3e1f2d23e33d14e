import keras
from keras import layers


def build_model(seq_len=8, d_model=16, heads=4):
    tokens = keras.Input(shape=(seq_len, d_model), name="tokens")
    context = keras.Input(shape=(5, 16), name="context")
    # self-attention: heads split the model width -> nn.MultiheadAttention
    x = layers.MultiHeadAttention(num_heads=heads, key_dim=d_model // heads, name="self_attn")(
        tokens, tokens, use_causal_mask=True
    )
    x = layers.LayerNormalization(epsilon=1e-6)(tokens + x)
    # cross-attention with its own head size and value size
    y = layers.MultiHeadAttention(num_heads=2, key_dim=6, value_dim=5, name="cross_attn")(x, context)
    x = layers.LayerNormalization(epsilon=1e-6)(x + y)
    scores = layers.Attention(use_scale=True)([x, context, context])
    return keras.Model([tokens, context], layers.Concatenate()([x, scores]))
