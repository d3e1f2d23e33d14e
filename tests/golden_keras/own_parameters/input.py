"""Weights of a module's own: nn.Parameter, a buffer, F.linear over its parameters, and
AdamW parameter groups that keep weight decay off the biases."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (6,)


class ScaledLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        self.gain = nn.Parameter(torch.ones(out_features))
        # the inputs' mean, saved with the weights
        self.register_buffer("offset", torch.zeros(in_features))
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.weight)
        nn.init.zeros_(self.bias)

    def forward(self, x):
        return F.linear(x - self.offset, self.weight, self.bias) * self.gain


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = ScaledLinear(6, 8)
        self.head = nn.Linear(8, 3)
        self.temperature = nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
        return self.head(torch.relu(self.block(x))) / self.temperature


def build_model():
    return Net()


def main():
    torch.manual_seed(0)
    x = torch.randn(64, 6)
    y = torch.randint(0, 3, (64,))
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = build_model()
    model.block.offset.copy_(x.mean(dim=0))
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if name.endswith("bias") else decay).append(param)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}], lr=1e-2
    )
    criterion = nn.CrossEntropyLoss()
    for epoch in range(3):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch + 1}: loss {loss.item():.4f} temperature {model.temperature.item():.3f}")


if __name__ == "__main__":
    main()
