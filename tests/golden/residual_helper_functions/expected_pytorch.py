# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    """Transpiled from the Keras model built by ``build_model()`` (input.py:25).

    Input ``inputs``: (N, 3, 16, 16) float32, channels-first.
    Returns: (N, 5).
    """

    def __init__(self):
        super().__init__()
        self.conv_bn_relu1_conv1 = nn.Conv2d(
            3, 16, kernel_size=3, padding=1, bias=False
        )
        self.conv_bn_relu1_bn1 = nn.BatchNorm2d(16, eps=0.001, momentum=0.01)
        self.residual_block1_conv1 = nn.Conv2d(
            16, 16, kernel_size=3, padding=1, bias=False
        )
        self.residual_block1_bn1 = nn.BatchNorm2d(16, eps=0.001, momentum=0.01)
        self.residual_block1_conv2 = nn.Conv2d(16, 16, kernel_size=3, padding=1)
        self.residual_block2_conv1 = nn.Conv2d(
            16, 16, kernel_size=3, padding=1, bias=False
        )
        self.residual_block2_bn1 = nn.BatchNorm2d(16, eps=0.001, momentum=0.01)
        self.residual_block2_conv2 = nn.Conv2d(16, 16, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(16, 5)
        self.reset_parameters()

    def reset_parameters(self):
        """Keras' default initializers, so training from scratch behaves the same."""
        nn.init.xavier_uniform_(self.conv_bn_relu1_conv1.weight)
        nn.init.xavier_uniform_(self.residual_block1_conv1.weight)
        nn.init.xavier_uniform_(self.residual_block1_conv2.weight)
        nn.init.zeros_(self.residual_block1_conv2.bias)
        nn.init.xavier_uniform_(self.residual_block2_conv1.weight)
        nn.init.xavier_uniform_(self.residual_block2_conv2.weight)
        nn.init.zeros_(self.residual_block2_conv2.bias)
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.zeros_(self.fc1.bias)

    def forward(self, inputs):
        x = self.conv_bn_relu1_conv1(inputs)
        x = F.relu(self.conv_bn_relu1_bn1(x))
        x_1 = self.residual_block1_conv1(x)
        x_2 = self.residual_block1_bn1(x_1)
        y = F.relu(x_2)
        y = self.residual_block1_conv2(y)
        x = x + y
        x_3 = self.residual_block2_conv1(x)
        x_4 = self.residual_block2_bn1(x_3)
        y = F.relu(x_4)
        y = self.residual_block2_conv2(y)
        x = (x + y).mean(dim=(2, 3))
        outputs = self.fc1(x)
        return outputs


def build_model(filters=16):
    if (filters,) != (16,):
        raise NotImplementedError(
            "Net was transpiled for build_model(filters=16); "
            "transpile again for other arguments"
        )
    return Net()
