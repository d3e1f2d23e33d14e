# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
"""An argparse-driven script as pytorch/examples writes them: devices, seeds, loader kwargs."""

import argparse
import numpy as np
import tensorflow as tf
import keras
from keras import layers


class Device:
    """torch.device(...) of the PyTorch program, for its own checks and prints
    (``device.type == "cuda"``, ``print(f"Using {device}")``): Keras places the computation on
    a device itself, nothing is moved to it."""

    def __init__(self, type, index=None):
        if isinstance(type, Device):
            type, index = type.type, type.index
        type = str(type)
        if ":" in type:
            type, index = type.split(":")[0], int(type.split(":")[1])
        self.type = type
        self.index = index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


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


def Net():
    """The Net model, translated from PyTorch (channels-last inputs)."""
    x = keras.Input(shape=(12,), name="x")
    fc1 = layers.Dense(16, name="fc1")(x)
    relu = layers.ReLU(name="relu")(fc1)
    fc2 = layers.Dense(3, name="fc2")(relu)
    log_softmax = keras.ops.log_softmax(fc2, axis=-1)
    return keras.Model(inputs=x, outputs=log_softmax, name="Net")


class Trainer(keras.Model):
    """The training step of the loop in train() (lines 23-30), for fit to run. It is not
    the step compile() builds: the epoch loop runs over 'enumerate(train_loader)',
    not range(epochs). fit logs loss (each averaged over the epoch's batches) in
    place of the loop's own reporting: the prints (line 29).
    """

    def __init__(self, model, optimizer, device):
        super().__init__()
        self.model = model
        self.optimizer_ = optimizer
        self.device = device
        self.trackers = [keras.metrics.Mean(name="loss")]

    @property
    def metrics(self):
        return self.trackers

    def train_step(self, data):
        model, optimizer, device = self.model, self.optimizer_, self.device
        data, target = data
        with tf.GradientTape() as tape:
            loss = keras.ops.mean(
                -keras.ops.squeeze(
                    keras.ops.take_along_axis(
                        model(data, training=True),
                        keras.ops.expand_dims(target, -1),
                        axis=-1,
                    ),
                    -1,
                )
            )
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        self.trackers[0].update_state(loss)
        return {tracker.name: tracker.result() for tracker in self.trackers}


def train(args, model, device, train_loader, optimizer, epoch):
    # transpiler: the training loop (lines 23-30) is fit running Trainer.train_step, its
    # custom step, on the loader's batches
    trainer = Trainer(model, optimizer, device)
    trainer.compile()
    trainer.fit(
        train_loader.dataset.arrays[0],
        train_loader.dataset.arrays[1],
        batch_size=train_loader.batch_size,
        epochs=1,
        shuffle=train_loader.shuffle,
        verbose=2,
    )


def main():
    parser = argparse.ArgumentParser(description="plumbing")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=2)
    parser.add_argument("--no-accel", action="store_true")
    args = parser.parse_args()

    # transpiler: torch.accelerator.is_available() is False here: Keras places the
    # computation on a device itself
    use_accel = not args.no_accel and False
    # transpiler: torch.cuda.is_available() is False here: Keras places the computation on a
    # device itself
    use_cuda = False
    # transpiler: torch.backends.mps.is_available() is False here: Keras places the
    # computation on a device itself
    use_mps = False
    keras.utils.set_random_seed(args.seed)
    # transpiler: dropped torch.cuda.manual_seed_all(): Keras chooses and configures the
    # device itself
    # transpiler: dropped torch.backends.cudnn.benchmark = ...: Keras chooses and configures
    # the device itself
    # transpiler: dropped torch.backends.cudnn.deterministic = ...: Keras chooses and
    # configures the device itself
    if use_accel:
        # transpiler: torch.accelerator.current_accelerator() is None here: Keras places the
        # computation on a device itself
        device = None
    elif use_cuda or use_mps:
        device = Device("cuda" if use_cuda else "mps")
    else:
        device = Device("cpu")
    # transpiler: torch.cuda.device_count() is 0 here: Keras places the computation on a
    # device itself
    print(f"device {device}, {0} GPUs")

    train_kwargs = {"batch_size": args.batch_size}
    if use_accel:
        train_kwargs.update({"num_workers": 1, "pin_memory": True, "shuffle": True})

    train_set = ArrayDataset(
        np.random.standard_normal((64, 12)).astype("float32"),
        np.random.randint(0, 3, size=(64,)),
    )
    train_loader = ArrayLoader(
        train_set,
        batch_size=train_kwargs.get("batch_size", 1),
        shuffle=train_kwargs.get("shuffle", False),
    )
    model = Net()
    optimizer = keras.optimizers.SGD(learning_rate=args.lr)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)


if __name__ == "__main__":
    main()
