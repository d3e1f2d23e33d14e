# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
"""Next-frame prediction on sequences of feature maps: ConvLSTM2D layers (torch has no such
module: the runtime's ConvLSTM2D on (N, C, T, H, W), the layout of Conv3d's input)."""

import math
import math
import torch
from torch import nn
import torch.nn.functional as F


def _same_pads(size, kernel, stride, dilation):
    """TensorFlow's 'same' padding of one axis: (before, after), the odd one after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


class ConvLSTM2D(nn.Module):
    """Keras' ConvLSTM2D: an LSTM whose gates are 2-D convolutions, over a sequence of feature
    maps held channels-first like nn.Conv3d's input, x (N, C, T, H, W) (time where Conv3d has
    depth). Returns (N, filters, T, H', W') with ``return_sequences``, else the last step's
    (N, filters, H', W'). Parameters: ``weight_ih`` (4 filters, C, kh, kw) for the input
    convolution (``stride``, ``padding`` 'valid' or 'same' as TensorFlow pads, ``dilation``),
    ``weight_hh`` (4 filters, filters, kh, kw) for the recurrent one (stride 1, 'same'),
    ``bias`` (4 filters); gates in Keras' order i, f, c, o. ``go_backwards`` runs over the
    reversed sequence and returns the outputs in that order, as Keras does."""

    def __init__(
        self,
        in_channels,
        filters,
        kernel_size,
        stride=1,
        padding="valid",
        dilation=1,
        bias=True,
        activation=torch.tanh,
        return_sequences=False,
        go_backwards=False,
    ):
        super().__init__()
        pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
        self.filters, self.kernel_size = filters, pair(kernel_size)
        self.stride, self.dilation, self.padding = pair(stride), pair(dilation), padding
        self.activation, self.return_sequences, self.go_backwards = (
            activation,
            return_sequences,
            go_backwards,
        )
        self.weight_ih = nn.Parameter(
            torch.empty(4 * filters, in_channels, *self.kernel_size)
        )
        self.weight_hh = nn.Parameter(
            torch.empty(4 * filters, filters, *self.kernel_size)
        )
        self.bias = nn.Parameter(torch.zeros(4 * filters)) if bias else None
        nn.init.xavier_uniform_(self.weight_ih)
        nn.init.orthogonal_(self.weight_hh)

    def _pad(self, x, stride, dilation):
        (kh, kw), (h, w) = self.kernel_size, x.shape[-2:]
        top, bottom = _same_pads(h, kh, stride[0], dilation[0])
        left, right = _same_pads(w, kw, stride[1], dilation[1])
        return nn.functional.pad(x, (left, right, top, bottom))

    def forward(self, x):
        n, c, t, h, w = x.shape
        steps = x.transpose(1, 2).reshape(n * t, c, h, w)
        if self.padding == "same":
            steps = self._pad(steps, self.stride, self.dilation)
        gates_x = nn.functional.conv2d(
            steps, self.weight_ih, self.bias, self.stride, 0, self.dilation
        )
        gates_x = gates_x.reshape(n, t, *gates_x.shape[1:])
        state_h = x.new_zeros(n, self.filters, *gates_x.shape[-2:])
        state_c = state_h
        outputs = []
        for i in (reversed(range(t)) if self.go_backwards else range(t)):
            recurrent = nn.functional.conv2d(
                self._pad(state_h, (1, 1), (1, 1)), self.weight_hh
            )
            gi, gf, gc, go = (gates_x[:, i] + recurrent).chunk(4, dim=1)
            state_c = torch.sigmoid(gf) * state_c + torch.sigmoid(gi) * self.activation(
                gc
            )
            state_h = torch.sigmoid(go) * self.activation(state_c)
            outputs.append(state_h)
        if self.return_sequences:
            return torch.stack(outputs, dim=2)
        return state_h


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:14).

    Input ``inputs``: (N, 1, 5, 8, 8) float32, channels-first.
    Returns: (N, 1, 5, 8, 8).

    ``return_logits=True`` skips the final softmax/sigmoid: the training loss
    works on logits, which is numerically sound (Keras clips probabilities instead).
    """

    def __init__(self):
        super().__init__()
        self.conv_lstm2d1 = ConvLSTM2D(
            1, 8, 3, padding="same", activation=torch.relu, return_sequences=True
        )
        self.bn1 = nn.BatchNorm3d(8, eps=0.001, momentum=0.01)
        self.conv_lstm2d2 = ConvLSTM2D(8, 8, 1, padding="same", return_sequences=True)
        self.conv1 = nn.Conv3d(8, 1, kernel_size=3, padding=1)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.conv_lstm2d1.weight_ih)
        nn.init.orthogonal_(self.conv_lstm2d1.weight_hh)
        nn.init.zeros_(self.conv_lstm2d1.bias)
        nn.init.ones_(self.conv_lstm2d1.bias[8:16])  # Keras unit_forget_bias
        nn.init.xavier_uniform_(self.conv_lstm2d2.weight_ih)
        nn.init.orthogonal_(self.conv_lstm2d2.weight_hh)
        nn.init.zeros_(self.conv_lstm2d2.bias)
        nn.init.ones_(self.conv_lstm2d2.bias[8:16])  # Keras unit_forget_bias
        nn.init.xavier_uniform_(self.conv1.weight)
        nn.init.zeros_(self.conv1.bias)

    def forward(self, inputs, return_logits=False):
        x = self.conv_lstm2d1(inputs)
        x = self.bn1(x)
        x = self.conv_lstm2d2(x)
        logits = self.conv1(x)
        if return_logits:
            return logits
        return torch.sigmoid(logits)


def build_model():
    return Net()


class KerasOptimizer(torch.optim.Optimizer):
    """Base of the Keras optimizers below, which update exactly as Keras' TensorFlow
    backend does (transpile --exact):
    - an Embedding table's gradient reaches a Keras optimizer one slice per token
      occurrence; squares (Adamax: absolute values) of the gradient are taken per slice,
      then summed per row (KerasEmbedding records the slices);
    - Keras tf.casts some Python-float hyperparameters, which rounds them to float32
      (Adam's betas in the bias corrections, the weight decay rate).
    A subclass writes its rule in update(p, group, state)."""

    def __init__(self, params, defaults):
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                p.keras_slices = []  # KerasEmbedding appends its gradient slices here

    @staticmethod
    def float32(value):
        """A Python float as Keras' tf.cast gives it: rounded to float32."""
        return torch.tensor(value, dtype=torch.float32).item()

    def per_occurrence(self, p, fn):
        """fn (torch.square or torch.abs) of p's gradient as Keras computes it: of each
        occurrence's slice, summed per row, for an embedding table; else fn(p.grad)."""
        if not p.keras_slices:
            return fn(p.grad)
        out = torch.zeros_like(p)
        for indices, values in p.keras_slices:
            out.index_add_(0, indices, fn(values))
        return out

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                # Keras' weight decay: decoupled, before the update
                if group["weight_decay"]:
                    p.sub_(p * self.float32(group["weight_decay"]) * group["lr"])
                self.update(p, group, self.state[p])
        return loss

    def zero_grad(self, set_to_none=True):
        super().zero_grad(set_to_none)
        for group in self.param_groups:
            for p in group["params"]:
                p.keras_slices.clear()  # they are part of the gradient


class KerasAdam(KerasOptimizer):
    """Keras' Adam update: the second moment from per-occurrence squared slices for
    embedding tables; bias corrections from the float32-rounded betas."""

    def __init__(
        self,
        params,
        lr=0.001,
        betas=(0.9, 0.999),
        eps=1e-07,
        amsgrad=False,
        weight_decay=0.0,
    ):
        super().__init__(
            params,
            dict(
                lr=lr, betas=betas, eps=eps, amsgrad=amsgrad, weight_decay=weight_decay
            ),
        )

    def update(self, p, group, state):
        if not state:
            state.update(
                step=0,
                m=torch.zeros_like(p),
                v=torch.zeros_like(p),
                v_hat=torch.zeros_like(p),
            )
        beta_1, beta_2 = group["betas"]
        state["step"] += 1
        t = state["step"]
        alpha = (
            group["lr"]
            * math.sqrt(1 - self.float32(beta_2) ** t)
            / (1 - self.float32(beta_1) ** t)
        )
        m, v = state["m"], state["v"]
        m.add_((p.grad - m) * (1 - beta_1))
        v.add_((self.per_occurrence(p, torch.square) - v) * (1 - beta_2))
        if group["amsgrad"]:
            v = torch.maximum(state["v_hat"], v, out=state["v_hat"])
        p.sub_(m * alpha / (v.sqrt() + group["eps"]))


def binary_crossentropy(logits, target):
    """Keras' binary_crossentropy per sample (mean over the last axis), from logits."""
    target = target.to(logits.dtype).view_as(logits)
    return F.binary_cross_entropy_with_logits(logits, target, reduction="none").mean(
        dim=-1
    )
