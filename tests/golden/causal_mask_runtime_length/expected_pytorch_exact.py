# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import math
import torch
from torch import nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    """Transpiled from the Keras class ``CausalSelfAttention`` (input.py)."""

    def __init__(self, dim, heads):
        super().__init__()
        self.dim = dim
        self.heads = heads
        self.attn = nn.ModuleDict(
            dict(
                query=nn.Linear(8, heads * dim),
                key=nn.Linear(8, heads * dim),
                value=nn.Linear(8, heads * dim),
                output=nn.Linear(heads * dim, 8),
            )
        )
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.uniform_(
            self.attn.query.weight,
            -math.sqrt(6.0 / ((self.heads + self.dim) * 8)),
            math.sqrt(6.0 / ((self.heads + self.dim) * 8)),
        )
        nn.init.zeros_(self.attn.query.bias)
        nn.init.uniform_(
            self.attn.key.weight,
            -math.sqrt(6.0 / ((self.heads + self.dim) * 8)),
            math.sqrt(6.0 / ((self.heads + self.dim) * 8)),
        )
        nn.init.zeros_(self.attn.key.bias)
        nn.init.uniform_(
            self.attn.value.weight,
            -math.sqrt(6.0 / ((self.heads + self.dim) * 8)),
            math.sqrt(6.0 / ((self.heads + self.dim) * 8)),
        )
        nn.init.zeros_(self.attn.value.bias)
        nn.init.uniform_(
            self.attn.output.weight,
            -math.sqrt(6.0 / (self.heads * (self.dim + 8))),
            math.sqrt(6.0 / (self.heads * (self.dim + 8))),
        )
        nn.init.zeros_(self.attn.output.bias)

    def forward(self, inputs):
        i = torch.arange(inputs.shape[1], device=inputs.device).unsqueeze(-1)
        j = torch.arange(inputs.shape[1], device=inputs.device)
        mask = (i >= j).int().unsqueeze(0)
        mask = mask.expand(inputs.shape[0], -1, -1)
        x_q = self.attn.query(inputs).unflatten(-1, (2, 8)).transpose(1, 2)
        x_k = self.attn.key(inputs).unflatten(-1, (2, 8)).transpose(1, 2)
        x_v = self.attn.value(inputs).unflatten(-1, (2, 8)).transpose(1, 2)
        x_bias = torch.where(
            mask.bool().unsqueeze(1), 0.0, torch.finfo(torch.float32).min
        )
        x = F.scaled_dot_product_attention(x_q, x_k, x_v, attn_mask=x_bias)
        x = self.attn.output(x.transpose(1, 2).flatten(2))
        return x


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:28).

    Input ``inputs``: (N, N, 8) float32.
    Returns: (N, N, 4).
    """

    def __init__(self):
        super().__init__()
        self.causal_self_attention = CausalSelfAttention(8, 2)
        self.fc1 = nn.Linear(8, 4)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, inputs):
        x = self.causal_self_attention(inputs)
        x = self.fc1(x)
        return x


def build_model():
    return Net()
