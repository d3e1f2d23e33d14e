# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""Keras' character-level sequence-to-sequence model: the decoder starts from the
encoder's states (``initial_state=[h, c]``)."""

import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:15).

    Input ``encoder_inputs``: (N, N, 7) float32.
    Input ``decoder_inputs``: (N, N, 5) float32.
    Returns: (N, N, 5).
    """

    def __init__(self, num_encoder_tokens=7, num_decoder_tokens=5, latent_dim=16):
        super().__init__()
        self.latent_dim = latent_dim
        self.lstm1 = nn.LSTM(num_encoder_tokens, latent_dim, batch_first=True)
        # Keras has one bias: torch's second (bias_hh) stays zero
        self.lstm1.bias_hh_l0.requires_grad_(False)
        self.lstm2 = nn.LSTM(num_decoder_tokens, latent_dim, batch_first=True)
        # Keras has one bias: torch's second (bias_hh) stays zero
        self.lstm2.bias_hh_l0.requires_grad_(False)
        self.fc1 = nn.Linear(latent_dim, num_decoder_tokens)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.lstm1.weight_ih_l0)
        nn.init.orthogonal_(self.lstm1.weight_hh_l0)
        nn.init.zeros_(self.lstm1.bias_ih_l0)
        nn.init.zeros_(self.lstm1.bias_hh_l0)
        nn.init.ones_(
            self.lstm1.bias_ih_l0[self.latent_dim : self.latent_dim * 2]
        )  # Keras unit_forget_bias
        nn.init.xavier_uniform_(self.lstm2.weight_ih_l0)
        nn.init.orthogonal_(self.lstm2.weight_hh_l0)
        nn.init.zeros_(self.lstm2.bias_ih_l0)
        nn.init.zeros_(self.lstm2.bias_hh_l0)
        nn.init.ones_(
            self.lstm2.bias_ih_l0[self.latent_dim : self.latent_dim * 2]
        )  # Keras unit_forget_bias
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, encoder_inputs, decoder_inputs):
        __seq, (state_h, state_c) = self.lstm1(encoder_inputs)
        state_h = state_h[0]
        state_c = state_c[0]
        _ = __seq[:, -1]
        decoder_outputs, (_, _) = self.lstm2(
            decoder_inputs, (state_h.unsqueeze(0), state_c.unsqueeze(0))
        )
        decoder_outputs = F.softmax(self.fc1(decoder_outputs), dim=-1)
        return decoder_outputs


def build_model(num_encoder_tokens=7, num_decoder_tokens=5, latent_dim=16):
    return Net(num_encoder_tokens, num_decoder_tokens, latent_dim)
