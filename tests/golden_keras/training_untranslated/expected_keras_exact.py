# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""What the training translation leaves for a human: each a stub with its line."""

import numpy as np
import math
import keras
from keras import layers


def torch_kernel_init():
    """PyTorch's default weight init (kaiming_uniform, a=sqrt(5)): U(±1/sqrt(fan_in))."""
    return keras.initializers.VarianceScaling(1 / 3, "fan_in", "uniform")


def torch_uniform_init(fan_in):
    """PyTorch's default bias (and recurrent weight) init: U(±1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return keras.initializers.RandomUniform(-bound, bound)


class ArrayDataset:
    """torch's TensorDataset over numpy arrays: item i is the tuple of every array's row i."""

    def __init__(self, *arrays):
        self.arrays = arrays

    def __len__(self):
        return len(self.arrays[0])

    def __getitem__(self, index):
        return tuple(array[index] for array in self.arrays)


class ArrayLoader:
    """torch's DataLoader over an ArrayDataset: batches of numpy arrays, in a new random
    order on every pass when shuffle is set."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        order = np.random.permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            yield self.dataset[order[start : start + self.batch_size]]


INPUT_SHAPE = (5,)


def build_model():
    """The build_model model, translated from PyTorch (channels-last inputs)."""
    model = keras.Sequential(
        [
            keras.Input(shape=(5,), name="x"),
            layers.Dense(
                3,
                kernel_initializer=torch_kernel_init(),
                bias_initializer=torch_uniform_init(5),
                name="linear_0",
            ),
        ],
        name="build_model",
    )
    return model


def main():
    x = np.zeros((32, 5), dtype="float32")
    y = np.zeros((32,), dtype="int64")
    loader = ArrayLoader(ArrayDataset(x, y), batch_size=8)
    model = build_model()
    # per-group learning rates have no Keras optimizer argument
    optimizer = keras.optimizers.SGD(learning_rate=0.1)
    # transpiler: not translated (CrossEntropyLoss: argument(s) weight not translated);
    # translate by hand:
    # | criterion = nn.CrossEntropyLoss(weight=torch.ones(3))
    raise NotImplementedError(
        "transpiler: input.py:21:5: CrossEntropyLoss: argument(s) weight not translated"
    )
    # transpiler: not translated (model's gradients are never zeroed in the loop: they
    # accumulate over iterations (not translated)); translate by hand:
    # | for xb, yb in loader:
    # |     loss = criterion(model(xb), yb)
    # |     loss.backward()  # gradients accumulate: no zero_grad()
    # |     optimizer.step()
    raise NotImplementedError(
        "transpiler: input.py:22:5: model's gradients are never zeroed in the loop: they accumulate over iterations (not translated)"
    )
    # transpiler: not translated (tensor attribute .device of 'x'); translate by hand:
    # | print(x.device)
    raise NotImplementedError(
        "transpiler: input.py:26:5: tensor attribute .device of 'x'"
    )


if __name__ == "__main__":
    main()
