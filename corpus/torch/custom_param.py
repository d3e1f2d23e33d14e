"""Tabular classifier built from hand-written layers with their own nn.Parameters.

Exercises: a custom linear layer (self.weight = nn.Parameter(torch.empty(...)),
optional bias registered as None, reset_parameters() with nn.init.kaiming_uniform_ /
uniform_ as nn.Linear does, forward via F.linear), a learnable per-feature
scale and shift, a learnable temperature stored as a log scalar and used as
logits / exp(log_t), a register_buffer'd feature mean, optimizer parameter groups,
and CrossEntropyLoss.
"""
import math
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

NUM_FEATURES = 20
NUM_CLASSES = 5
INPUT_SHAPE = (NUM_FEATURES,)
EPOCHS = 6


class MyLinear(nn.Module):
    """Same maths as nn.Linear, written out by hand."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features)
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class FeatureScale(nn.Module):
    """Learnable affine transform applied feature-wise: x * scale + shift."""

    def __init__(self, num_features):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(num_features))
        self.shift = nn.Parameter(torch.zeros(num_features))
        # not trained, but saved in the state_dict with the weights
        self.register_buffer("center", torch.zeros(num_features))

    def forward(self, x):
        return (x - self.center) * self.scale + self.shift


class TemperedClassifier(nn.Module):
    def __init__(self, num_features=NUM_FEATURES, hidden=48, num_classes=NUM_CLASSES):
        super().__init__()
        self.scale = FeatureScale(num_features)
        self.hidden = MyLinear(num_features, hidden)
        self.out = MyLinear(hidden, num_classes, bias=False)
        self.log_temperature = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        h = torch.tanh(self.hidden(self.scale(x)))
        logits = self.out(h)
        return logits / self.log_temperature.exp()


def build_model(num_features=NUM_FEATURES, hidden=48, num_classes=NUM_CLASSES):
    return TemperedClassifier(num_features, hidden, num_classes)


def make_data(n=1000, seed=0):
    rng = np.random.RandomState(seed)
    # features on very different scales, so the learnable scale has work to do
    x = rng.randn(n, NUM_FEATURES) * rng.uniform(0.1, 10.0, size=NUM_FEATURES) + 3.0
    w = rng.randn(NUM_FEATURES, NUM_CLASSES)
    y = (((x - 3.0) / x.std(axis=0)) @ w + 0.5 * rng.randn(n, NUM_CLASSES)).argmax(axis=1)
    return torch.from_numpy(x.astype("float32")), torch.from_numpy(y.astype("int64"))


def main():
    torch.manual_seed(0)
    x, y = make_data()
    x_train, y_train, x_test, y_test = x[:800], y[:800], x[800:], y[800:]
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=50, shuffle=True)

    model = build_model()
    model.scale.center.copy_(x_train.mean(dim=0))
    with torch.no_grad():
        model.scale.scale.copy_(1.0 / x_train.std(dim=0))

    # the temperature gets its own, smaller learning rate
    others = [p for n, p in model.named_parameters() if n != "log_temperature"]
    optimizer = torch.optim.Adam(
        [{"params": others}, {"params": [model.log_temperature], "lr": 1e-3}],
        lr=1e-2,
    )
    criterion = nn.CrossEntropyLoss()

    for epoch in range(EPOCHS):
        model.train()
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(xb)
        model.eval()
        with torch.no_grad():
            acc = (model(x_test).argmax(1) == y_test).float().mean().item()
        print(
            f"epoch {epoch + 1}: loss {total / len(x_train):.4f} test acc {acc:.3f}"
            f" temperature {model.log_temperature.exp().item():.3f}"
        )

    print(model)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "custom_param.pt")
        torch.save(model.state_dict(), path)
        state = torch.load(path)
    print("state_dict keys:", list(state))
    restored = build_model()
    restored.load_state_dict(state)
    restored.eval()
    with torch.no_grad():
        assert torch.equal(restored(x_test), model(x_test))


if __name__ == "__main__":
    main()
