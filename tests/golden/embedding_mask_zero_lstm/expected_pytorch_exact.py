# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:11).

    Input ``ids``: (N, 12) int32.
    Returns: (N, 1).
    """

    def __init__(self, vocab=100):
        super().__init__()
        # token 0 is padding: the layers below skip it
        self.embedding1 = nn.Embedding(vocab, 16)
        self.lstm1 = nn.LSTM(16, 8, batch_first=True)
        # Keras has one bias: torch's second (bias_hh) stays zero
        self.lstm1.bias_hh_l0.requires_grad_(False)
        self.fc1 = nn.Linear(8, 1)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.uniform_(self.embedding1.weight, -0.05, 0.05)
        nn.init.xavier_uniform_(self.lstm1.weight_ih_l0)
        nn.init.orthogonal_(self.lstm1.weight_hh_l0)
        nn.init.zeros_(self.lstm1.bias_ih_l0)
        nn.init.zeros_(self.lstm1.bias_hh_l0)
        nn.init.ones_(self.lstm1.bias_ih_l0[8:16])  # Keras unit_forget_bias
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, ids):
        x = self.embedding1(ids)
        x_keep = ids != 0  # Keras' mask: padded steps are skipped
        x_state = (x.new_zeros(1, x.shape[0], 8), x.new_zeros(1, x.shape[0], 8))
        x_steps = []
        for x_t in range(x.shape[1]):
            _, x_new = self.lstm1(x[:, x_t : x_t + 1], x_state)
            x_state = tuple(
                torch.where(x_keep[:, x_t].view(1, -1, 1), n, s)
                for n, s in zip(x_new, x_state)
            )
            x_steps.append(x_state[0][0])
        x = torch.stack(x_steps, dim=1)
        pooled_keep = (ids != 0).unsqueeze(2)  # Keras' mask: padded steps left out
        pooled = x.masked_fill(~pooled_keep, 0.0).sum(dim=1) / pooled_keep.sum(dim=1)
        pooled = torch.sigmoid(self.fc1(pooled))
        return pooled


def build_model(vocab=100, maxlen=12):
    return Net(vocab)
