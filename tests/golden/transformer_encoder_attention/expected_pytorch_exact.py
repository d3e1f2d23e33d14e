# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import math
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:17).

    Input ``tokens``: (N, 8, 16) float32.
    Input ``context``: (N, 5, 16) float32.
    Returns: (N, 8, 32).
    """

    def __init__(self, d_model=16, heads=4):
        super().__init__()
        self.d_model = d_model
        self.heads = heads
        # self-attention: heads split the model width -> nn.MultiheadAttention
        self.self_attn = nn.MultiheadAttention(d_model, heads, batch_first=True)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-06)
        # cross-attention with its own head size and value size
        self.cross_attn = nn.ModuleDict(
            dict(
                query=nn.Linear(d_model, 12),
                key=nn.Linear(16, 12),
                value=nn.Linear(16, 10),
                output=nn.Linear(10, d_model),
            )
        )
        self.norm2 = nn.LayerNorm(d_model, eps=1e-06)
        self.attention1 = nn.ParameterDict(dict(scale=nn.Parameter(torch.ones(()))))
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.uniform_(
            self.self_attn.in_proj_weight[0 : self.d_model],
            -math.sqrt(
                6.0 / (self.d_model * (self.heads + self.d_model // self.heads))
            ),
            math.sqrt(6.0 / (self.d_model * (self.heads + self.d_model // self.heads))),
        )
        nn.init.uniform_(
            self.self_attn.in_proj_weight[self.d_model : self.d_model * 2],
            -math.sqrt(
                6.0 / (self.d_model * (self.heads + self.d_model // self.heads))
            ),
            math.sqrt(6.0 / (self.d_model * (self.heads + self.d_model // self.heads))),
        )
        nn.init.uniform_(
            self.self_attn.in_proj_weight[self.d_model * 2 : self.d_model * 3],
            -math.sqrt(
                6.0 / (self.d_model * (self.heads + self.d_model // self.heads))
            ),
            math.sqrt(6.0 / (self.d_model * (self.heads + self.d_model // self.heads))),
        )
        nn.init.zeros_(self.self_attn.in_proj_bias)
        nn.init.uniform_(
            self.self_attn.out_proj.weight,
            -math.sqrt(
                6.0 / (self.heads * (self.d_model // self.heads + self.d_model))
            ),
            math.sqrt(6.0 / (self.heads * (self.d_model // self.heads + self.d_model))),
        )
        nn.init.zeros_(self.self_attn.out_proj.bias)
        nn.init.uniform_(
            self.cross_attn.query.weight,
            -math.sqrt(6.0 / (self.d_model * 8)),
            math.sqrt(6.0 / (self.d_model * 8)),
        )
        nn.init.zeros_(self.cross_attn.query.bias)
        nn.init.uniform_(
            self.cross_attn.key.weight, -math.sqrt(6.0 / 128), math.sqrt(6.0 / 128)
        )
        nn.init.zeros_(self.cross_attn.key.bias)
        nn.init.uniform_(
            self.cross_attn.value.weight, -math.sqrt(6.0 / 112), math.sqrt(6.0 / 112)
        )
        nn.init.zeros_(self.cross_attn.value.bias)
        nn.init.uniform_(
            self.cross_attn.output.weight,
            -math.sqrt(6.0 / ((5 + self.d_model) * 2)),
            math.sqrt(6.0 / ((5 + self.d_model) * 2)),
        )
        nn.init.zeros_(self.cross_attn.output.bias)

    def forward(self, tokens, context):
        x = self.self_attn(
            tokens,
            tokens,
            tokens,
            attn_mask=torch.ones(
                tokens.shape[1], tokens.shape[1], dtype=torch.bool, device=tokens.device
            ).triu(1),
            need_weights=False,
        )[0]
        x = tokens + x
        x = self.norm1(x)
        y_q = self.cross_attn.query(x).unflatten(-1, (2, 6)).transpose(1, 2)
        y_k = self.cross_attn.key(context).unflatten(-1, (2, 6)).transpose(1, 2)
        y_v = self.cross_attn.value(context).unflatten(-1, (2, 5)).transpose(1, 2)
        y = F.scaled_dot_product_attention(y_q, y_k, y_v)
        y = self.cross_attn.output(y.transpose(1, 2).flatten(2))
        x = x + y
        x = self.norm2(x)
        scores_logits = x @ context.transpose(-2, -1) * self.attention1.scale
        scores = scores_logits.softmax(dim=-1) @ context
        x = torch.cat([x, scores], dim=2)
        return x


def build_model(seq_len=8, d_model=16, heads=4):
    return Net(d_model, heads)
