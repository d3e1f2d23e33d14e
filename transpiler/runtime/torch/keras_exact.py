"""``--exact``: generated code that updates the weights exactly as Keras'
TensorFlow backend does, where that differs from the mathematically true update.

Two differences are reproduced (measured: tests/test_training_equivalence.py):

- **Embedding gradients per token occurrence.** TensorFlow hands an Embedding table's
  gradient to the optimizer as ``tf.IndexedSlices``: one slice per occurrence of a token
  in the batch, repeats not summed. Keras' optimizers apply elementwise functions to the
  slices before they are summed per row, so a token seen k times adds ``sum(g_i ** 2)``
  to a second moment where the true gradient gives ``(sum g_i) ** 2``. Affected, and
  reproduced: Adam/AdamW/Nadam (second moment), RMSprop (velocity), Adagrad
  (accumulator), Adadelta (accumulated gradient and accumulated update, whose slices are
  squared too) and Adamax (its infinity norm takes ``max(beta_2 * u, sum |g_i|)``).
  SGD (with or without momentum) is linear in the gradient: summing the slices first or
  last is the same update, so it needs nothing. The generated ``KerasEmbedding`` records
  the slices (a hook on the lookup's output), the generated ``Keras<Optimizer>`` class
  reads them; every other weight uses its ``.grad``.
- **float32 hyperparameters.** Keras ``tf.cast``s some Python-float hyperparameters to
  the variable's dtype, which rounds them through float32 first: Adam's, AdamW's and
  Adamax's betas in the bias corrections (the moments use the exact betas), Nadam's betas
  and its 0.96 in the per-step factors (its running product uses the exact ones), the
  weight decay rate, and Adagrad's initial accumulator value (a Constant initializer).
  Invisible in float32 training; reproduced so that float64 runs agree to rounding.

Not reproduced: gradient clipping of an embedding gradient (Keras clips the slices:
clipvalue per occurrence, clipnorm from their squares; the generated train_step clips
the summed gradient), and a table that also gets a dense gradient from elsewhere (a tied
output projection: TensorFlow then sums everything into one dense gradient, while the
recorded slices would still be used).

Copied into generated programs by ``TrainingPrinter.optimizer_expr`` (KerasAdam also as KerasAdamW).
"""

import math

import torch
from torch import nn


class KerasEmbedding(nn.Embedding):
    """nn.Embedding that also keeps its gradient the way Keras' TensorFlow backend hands it
    to the optimizer (transpile --exact): one slice per token occurrence
    (tf.IndexedSlices), repeats not summed. Keras' adaptive optimizers square each slice
    before the slices are summed per row, so a token seen k times in a batch adds
    sum(g_i ** 2) to its second moment instead of (sum g_i) ** 2. The Keras optimizer
    classes below switch the recording on (weight.keras_slices) and read it; .grad stays
    the true, summed gradient."""

    def forward(self, indices):
        out = super().forward(indices)
        slices = getattr(self.weight, "keras_slices", None)
        if slices is not None and out.requires_grad:

            def keep_slices(grad):
                slices.append((indices.reshape(-1), grad.reshape(-1, self.embedding_dim)))

            out.register_hook(keep_slices)
        return out


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

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-07, amsgrad=False, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, amsgrad=amsgrad, weight_decay=weight_decay))

    def update(self, p, group, state):
        if not state:
            state.update(step=0, m=torch.zeros_like(p), v=torch.zeros_like(p), v_hat=torch.zeros_like(p))
        beta_1, beta_2 = group["betas"]
        state["step"] += 1
        t = state["step"]
        alpha = group["lr"] * math.sqrt(1 - self.float32(beta_2) ** t) / (1 - self.float32(beta_1) ** t)
        m, v = state["m"], state["v"]
        m.add_((p.grad - m) * (1 - beta_1))
        v.add_((self.per_occurrence(p, torch.square) - v) * (1 - beta_2))
        if group["amsgrad"]:
            v = torch.maximum(state["v_hat"], v, out=state["v_hat"])
        p.sub_(m * alpha / (v.sqrt() + group["eps"]))


class KerasAdamax(KerasOptimizer):
    """Keras' Adamax update: for embedding tables the infinity norm takes the per-occurrence
    absolute values summed per row; the bias correction uses the float32-rounded beta_1."""

    def __init__(self, params, lr=0.002, betas=(0.9, 0.999), eps=1e-07, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def update(self, p, group, state):
        if not state:
            state.update(step=0, m=torch.zeros_like(p), u=torch.zeros_like(p))
        beta_1, beta_2 = group["betas"]
        state["step"] += 1
        m, u = state["m"], state["u"]
        m.add_((p.grad - m) * (1 - beta_1))
        torch.maximum(u * beta_2, self.per_occurrence(p, torch.abs), out=u)
        p.sub_(group["lr"] * m / ((1 - self.float32(beta_1) ** state["step"]) * (u + group["eps"])))


class KerasNadam(KerasOptimizer):
    """Keras' Nadam update: the second moment from per-occurrence squared slices for
    embedding tables. Keras computes each step's momentum factors from float32-rounded
    betas and 0.96, and their running product from the exact values."""

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-07, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def update(self, p, group, state):
        if not state:
            state.update(step=0, u_product=1.0, m=torch.zeros_like(p), v=torch.zeros_like(p))
        beta_1, beta_2, decay = (self.float32(b) for b in (*group["betas"], 0.96))
        state["step"] += 1
        t = state["step"]
        state["u_product"] = state["u_product"] * group["betas"][0] * (1.0 - 0.5 * 0.96**t)
        u_t = beta_1 * (1.0 - 0.5 * decay**t)
        u_t_1 = beta_1 * (1.0 - 0.5 * decay ** (t + 1))
        u_product_t = state["u_product"]
        u_product_t_1 = u_product_t * u_t_1
        m, v = state["m"], state["v"]
        m.add_((p.grad - m) * (1 - beta_1))
        v.add_((self.per_occurrence(p, torch.square) - v) * (1 - beta_2))
        m_hat = u_t_1 * m / (1 - u_product_t_1) + (1 - u_t) * p.grad / (1 - u_product_t)
        v_hat = v / (1 - beta_2**t)
        p.sub_(m_hat * group["lr"] / (v_hat.sqrt() + group["eps"]))


class KerasAdagrad(KerasOptimizer):
    """Keras' Adagrad update: the accumulator (starting at the float32-rounded initial
    value) adds per-occurrence squared slices for embedding tables; the step divides by
    sqrt(accumulator + epsilon)."""

    def __init__(self, params, lr=0.001, eps=1e-07, initial_accumulator_value=0.1, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, eps=eps, initial_accumulator_value=initial_accumulator_value,
                                      weight_decay=weight_decay))

    def update(self, p, group, state):
        if not state:  # Keras' Constant initializer tf.casts the value: float32-rounded
            state["accumulator"] = torch.full_like(p, self.float32(group["initial_accumulator_value"]))
        accumulator = state["accumulator"].add_(self.per_occurrence(p, torch.square))
        p.sub_(group["lr"] * p.grad / (accumulator + group["eps"]).sqrt())


class KerasAdadelta(KerasOptimizer):
    """Keras' Adadelta update. For embedding tables both running averages take
    per-occurrence squares: the gradient's, and the update's (each occurrence's update is
    its gradient slice times the row's rms ratio, so its squares sum to ratio**2 * sum g_i**2)."""

    def __init__(self, params, lr=0.001, rho=0.95, eps=1e-07, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay))

    def update(self, p, group, state):
        if not state:
            state.update(accumulated_grad=torch.zeros_like(p), accumulated_delta=torch.zeros_like(p))
        rho, eps = group["rho"], group["eps"]
        squares = self.per_occurrence(p, torch.square)
        accumulated_grad = state["accumulated_grad"].mul_(rho).add_((1 - rho) * squares)
        accumulated_delta = state["accumulated_delta"]
        ratio = (accumulated_delta + eps).sqrt() / (accumulated_grad + eps).sqrt()
        delta = -ratio * p.grad
        accumulated_delta.mul_(rho).add_((1 - rho) * ratio.square() * squares)
        p.add_(group["lr"] * delta)


class KerasRMSprop(KerasOptimizer):
    """Keras' RMSprop update: the gradient is divided by sqrt(v + epsilon); for embedding
    tables v takes the per-occurrence squared slices."""

    def __init__(self, params, lr=0.001, rho=0.9, eps=1e-07, momentum=0.0, centered=False, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, momentum=momentum, centered=centered,
                                      weight_decay=weight_decay))

    def update(self, p, group, state):
        if not state:
            state.update(velocity=torch.zeros_like(p), average_grad=torch.zeros_like(p), momentum=torch.zeros_like(p))
        rho = group["rho"]
        velocity = state["velocity"].mul_(rho).add_(self.per_occurrence(p, torch.square), alpha=1 - rho)
        if group["centered"]:
            average_grad = state["average_grad"].mul_(rho).add_(p.grad, alpha=1 - rho)
            denominator = velocity - average_grad.square() + group["eps"]
        else:
            denominator = velocity + group["eps"]
        increment = group["lr"] * p.grad / denominator.sqrt()
        if group["momentum"] > 0:
            increment = state["momentum"].mul_(group["momentum"]).add_(increment)
        p.sub_(increment)
