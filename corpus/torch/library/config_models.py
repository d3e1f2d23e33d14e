"""Modules sized by a configuration object rather than by their arguments: a dataclass
``TinyGPTConfig`` handed whole to every block (``MLPBlock(config)``, read as
``config.n_embd``), and an encoder reading an argparse-style namespace it keeps as
``self.config``. Nothing in this file builds them: whoever imports it makes the config
(``TinyGPTConfig(n_embd=32)``, ``parser.parse_args()``)."""

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TinyGPTConfig:
    vocab_size: int = 97
    n_embd: int = None  # (no default size: the caller's)
    expansion: int = 4
    resid_pdrop: float = 0.1


class MLPBlock(nn.Module):
    """Pre-norm residual MLP over token features."""

    def __init__(self, config: TinyGPTConfig):
        super().__init__()
        self.ln = nn.LayerNorm(config.n_embd)
        self.fc = nn.Linear(config.n_embd, config.expansion * config.n_embd)
        self.proj = nn.Linear(config.expansion * config.n_embd, config.n_embd)
        self.drop = nn.Dropout(config.resid_pdrop)

    def forward(self, x):
        return x + self.drop(self.proj(F.gelu(self.fc(self.ln(x)))))


class TinyLM(nn.Module):
    """Token ids -> embedding -> two config-sized blocks -> logits over the vocabulary."""

    def __init__(self, config: TinyGPTConfig):
        super().__init__()
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.block1 = MLPBlock(config)
        self.block2 = MLPBlock(config)
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx):
        x = self.tok_emb(idx)
        x = self.block2(self.block1(x))
        return self.head(self.ln_f(x))


class NamespaceEncoder(nn.Module):
    """Sizes from an argparse namespace (``config.d_in``, ``config.d_hidden``, ``config.n_out``)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.inp = nn.Linear(config.d_in, config.d_hidden)
        self.out = nn.Linear(config.d_hidden, config.n_out)

    def forward(self, x):
        return self.out(torch.tanh(self.inp(x)))
