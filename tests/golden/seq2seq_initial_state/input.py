"""Keras' character-level sequence-to-sequence model: the decoder starts from the
encoder's states (``initial_state=[h, c]``)."""
import keras
from keras import layers


def build_model(num_encoder_tokens=7, num_decoder_tokens=5, latent_dim=16):
    encoder_inputs = keras.Input(shape=(None, num_encoder_tokens))
    _, state_h, state_c = layers.LSTM(latent_dim, return_state=True)(encoder_inputs)
    decoder_inputs = keras.Input(shape=(None, num_decoder_tokens))
    decoder_outputs = layers.LSTM(latent_dim, return_sequences=True)(
        decoder_inputs, initial_state=[state_h, state_c]
    )
    decoder_outputs = layers.Dense(num_decoder_tokens, activation="softmax")(decoder_outputs)
    return keras.Model([encoder_inputs, decoder_inputs], decoder_outputs)
