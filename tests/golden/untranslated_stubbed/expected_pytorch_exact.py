# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import math
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:7).

    Input ``x``: (N, 4) float32.
    Returns: (N, 1).
    """

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 1)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, x):
        x = self.fc1(x)
        return x


def build_model():
    return Net()


def _as_model_input(value):
    """An array Keras' model call converts: floating arrays as float32 (the model's dtype),
    other numbers as they are; tensors, lists of them and dicts kept (each converted).
    """
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, dict):
        return {key: _as_model_input(v) for key, v in value.items()}
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, (np.ndarray, torch.Tensor)) for v in value)
    ):
        return type(value)(_as_model_input(v) for v in value)
    array = np.asarray(value)
    tensor = torch.from_numpy(np.ascontiguousarray(array))
    return tensor.to(torch.get_default_dtype()) if array.dtype.kind == "f" else tensor


def call_model(model, *inputs, training=False, grad=False, **kwargs):
    """Keras' ``model(x)`` on arrays outside a training step: the arrays as tensors, the model
    in the mode Keras runs its layers in there (inference unless ``training``: a model of
    image augmentations, whose layers train by default, or ``training=True`` in the source),
    without gradients unless ``grad``; the outputs are tensors (as Keras returns), the
    model's mode restored after."""
    was_training = model.training
    model.train(training)
    try:
        with torch.set_grad_enabled(grad):
            return model(*(_as_model_input(x) for x in inputs), **kwargs)
    finally:
        model.train(was_training)


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


def mean_squared_error(output, target):
    """Keras' mean_squared_error per sample (mean over the last axis)."""
    return (output - target.to(output.dtype).view_as(output)).pow(2).mean(dim=-1)


if __name__ == "__main__":
    x = np.random.rand(64, 4).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = build_model()
    optimizer = KerasAdam(model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07)
    loss_fn = mean_squared_error
    # a Keras API with no torch translation yet: must become a marked stub
    # TODO(transpiler): not translated yet (input.py:16)
    # loss = model.compute_loss(x, y, model(x))
    raise NotImplementedError(
        "transpiler: 'loss = model.compute_loss(x, y, model(x))' (input.py:16) is not translated yet"
    )
    print(loss)
