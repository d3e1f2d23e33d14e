# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import numpy as np
import hashlib
import os
import torch
from torch import nn
import torch.nn.functional as F
from torch.hub import download_url_to_file
from torch.utils.data import DataLoader, TensorDataset
from types import SimpleNamespace


def make_loader(inputs, targets=None, batch_size=32, shuffle=False):
    """Arrays (already in the model's layout) → a DataLoader of float32 / int64 batches."""
    arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if targets is not None:
        arrays += list(targets) if isinstance(targets, (list, tuple)) else [targets]
    tensors = []
    for array in arrays:
        tensor = torch.as_tensor(np.asarray(array))
        # booleans (a one-hot ``y == k``) are numbers to Keras (float32), integers are indices
        floating = tensor.is_floating_point() or tensor.dtype == torch.bool
        tensors.append(tensor.float() if floating else tensor.long())
    return DataLoader(TensorDataset(*tensors), batch_size=batch_size, shuffle=shuffle)


def reset_metrics(metrics):
    """The running sums and counts of ``metrics`` ((name, output index, metric) triples) at
    the start of an epoch or evaluation; a stateful metric object is reset."""
    return {name: 0.0 for name, _, _ in metrics}, {name: 0 for name, _, _ in metrics}


def update_metrics(metrics, outputs, targets, sums, counts):
    """Add one batch's metric values to the running ``sums`` and ``counts`` (their means are
    what Keras reports); a stateful metric object keeps its own result so far."""
    for name, index, metric in metrics:
        values = metric(outputs[index], targets[index])
        sums[name] += values.sum().item()
        counts[name] += values.numel()


def train_step(model, optimizer, loss_fns, loss_weights, inputs, targets):
    """One optimizer step on a batch; returns the batch loss and the (detached) outputs."""
    model.train()
    optimizer.zero_grad()
    outputs = model(*inputs, return_logits=True)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    loss = 0.0
    for loss_fn, weight, output, target in zip(
        loss_fns, loss_weights, outputs, targets
    ):
        per_sample = loss_fn(output, target)
        loss = loss + weight * per_sample.mean()  # Keras' sum_over_batch_size
    loss.backward()
    optimizer.step()
    return loss.item(), tuple(output.detach() for output in outputs)


def fit(
    model,
    optimizer,
    loss_fns,
    x,
    y,
    epochs=1,
    batch_size=32,
    verbose="auto",
    metrics=(),
    validation_split=0.0,
    validation_data=None,
    loss_weights=None,
    shuffle=True,
):
    """Keras' Model.fit as a loop: running means per epoch, printed per epoch."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    if validation_split:
        # Keras holds out the LAST fraction of the arrays, before any shuffling
        split = int(len(inputs[0]) * (1 - validation_split))
        validation_data = ([a[split:] for a in inputs], [a[split:] for a in targets])
        inputs, targets = [a[:split] for a in inputs], [a[:split] for a in targets]
    loader = make_loader(inputs, targets, batch_size, shuffle=shuffle)
    n_in, n_out = len(inputs), len(targets)
    history = {}
    for epoch in range(epochs):
        total, seen = 0.0, 0
        sums, counts = reset_metrics(metrics)
        for batch in loader:
            batch_inputs, batch_targets = batch[:n_in], batch[n_in : n_in + n_out]
            loss, outputs = train_step(
                model, optimizer, loss_fns, loss_weights, batch_inputs, batch_targets
            )
            total += loss * len(batch_inputs[0])
            seen += len(batch_inputs[0])
            update_metrics(metrics, outputs, batch_targets, sums, counts)
        logs = {
            "loss": total / seen,
            **{name: sums[name] / counts[name] for name in sums},
        }
        if validation_data is not None:
            results = evaluate(
                model,
                loss_fns,
                *validation_data,
                batch_size=batch_size,
                metrics=metrics,
                loss_weights=loss_weights,
                return_dict=True,
            )
            logs.update({f"val_{key}": value for key, value in results.items()})
        for key, value in logs.items():
            history.setdefault(key, []).append(value)
        if verbose:
            print(
                f"Epoch {epoch + 1}/{epochs} - "
                + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
            )
    return SimpleNamespace(history=history)


@torch.no_grad()
def evaluate(
    model,
    loss_fns,
    x,
    y,
    batch_size=32,
    metrics=(),
    loss_weights=None,
    return_dict=False,
):
    """Keras' Model.evaluate: the mean loss (and metrics) over the data, in inference mode (the
    model's mode restored after)."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    was_training = model.training
    model.eval()
    total, seen = 0.0, 0
    sums, counts = reset_metrics(metrics)
    for batch in make_loader(inputs, targets, batch_size):
        batch_inputs, batch_targets = batch[: len(inputs)], batch[len(inputs) :]
        outputs = model(*batch_inputs, return_logits=True)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        loss = sum(
            w * fn(out, t).mean()
            for fn, w, out, t in zip(loss_fns, loss_weights, outputs, batch_targets)
        )
        total += loss.item() * len(batch_inputs[0])
        seen += len(batch_inputs[0])
        update_metrics(metrics, outputs, batch_targets, sums, counts)
    # Keras sets the mode per call: the model trains after this as it did before
    model.train(was_training)
    results = {
        "loss": total / seen,
        **{name: sums[name] / counts[name] for name in sums},
    }
    if return_dict:
        return results
    return results["loss"] if len(results) == 1 else list(results.values())


def one_channel_layout(array, perm):
    """``np.transpose(array, perm)``: a channels-last array into the model's layout, for a model
    input of one channel (``keras.Input((28, 28, 1))``). An array one axis short of it (an
    (N, 28, 28) array) gains the last axis of size 1 first, as Keras' functional model adds it.
    """
    import numpy as np

    array = np.asarray(array)
    return np.transpose(
        array[..., None] if array.ndim == len(perm) - 1 else array, perm
    )


KERAS_DATASETS_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def load_mnist(path="mnist.npz"):
    """keras.datasets.mnist.load_data() without Keras: the same file, read with numpy."""
    path = os.path.join(cache_folder(), path)
    fetch(
        KERAS_DATASETS_URL + "mnist.npz",
        path,
        file_hash="731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1",
    )
    with np.load(path, allow_pickle=False) as data:
        return (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])


def data_home():
    """The download cache: $TRANSPILED_DATA_HOME, else $XDG_CACHE_HOME/transpiled_data."""
    home = os.environ.get("TRANSPILED_DATA_HOME")
    if not home:
        home = os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache"),
            "transpiled_data",
        )
    return os.path.expanduser(home)


def file_hash_matches(path, file_hash, algorithm="auto"):
    """Whether the file's sha256 (or md5: a 32-digit hash, or algorithm="md5") is file_hash."""
    if algorithm == "sha256" or (algorithm == "auto" and len(file_hash) == 64):
        hasher = hashlib.sha256()
    else:
        hasher = hashlib.md5()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            hasher.update(chunk)
    return hasher.hexdigest() == str(file_hash)


def cache_folder(cache_subdir="datasets", cache_dir=None):
    """The folder of the cache a file goes to (made if missing): <cache_dir or data_home()>/<cache_subdir>."""
    base = os.path.expanduser(cache_dir) if cache_dir is not None else data_home()
    os.makedirs(base, exist_ok=True)
    if not os.access(base, os.W_OK):
        base = os.path.join("/tmp", "transpiled_data")
    folder = os.path.join(base, cache_subdir)
    os.makedirs(folder, exist_ok=True)
    return folder


def fetch(origin, target, file_hash=None, hash_algorithm="auto", force_download=False):
    """Make ``target`` the file at ``origin``: a file already there is kept when its hash is
    ``file_hash`` (or when no hash is given), else it is downloaded; a download whose hash
    differs is removed and refused. True when it downloaded."""
    if (
        not force_download
        and os.path.exists(target)
        and (file_hash is None or file_hash_matches(target, file_hash, hash_algorithm))
    ):
        return False
    print(f"Downloading data from {origin}")
    download_url_to_file(origin, target, progress=False)
    if file_hash is not None and not file_hash_matches(
        target, file_hash, hash_algorithm
    ):
        os.remove(target)
        raise ValueError(
            f"Incomplete or corrupted file detected. The {hash_algorithm} file hash does not "
            f"match the provided value of {file_hash}."
        )
    return True


def to_categorical(y, num_classes=None, dtype="float64"):
    """keras.utils.to_categorical without Keras: one-hot rows for integer labels (float64, as Keras 3)."""
    y = np.asarray(y, dtype="int64")
    if y.ndim > 1 and y.shape[-1] == 1:
        y = y.reshape(y.shape[:-1])
    num_classes = int(y.max()) + 1 if num_classes is None else num_classes
    return np.eye(num_classes, dtype=dtype)[y]


def categorical_crossentropy(logits, target):
    """Keras' categorical_crossentropy per sample (one-hot or probability targets), from logits."""
    return -(
        target.to(logits.dtype).view_as(logits) * F.log_softmax(logits, dim=-1)
    ).sum(dim=-1)


def categorical_accuracy(output, target):
    """1.0 where the arg-max class equals the one-hot target's."""
    return (output.argmax(dim=-1) == target.view_as(output).argmax(dim=-1)).float()


# Load data
(x_train, y_train), (x_test, y_test) = load_mnist()
x_train = x_train.astype("float32") / 255.0
x_test = x_test.astype("float32") / 255.0
x_train = np.expand_dims(x_train, -1)
x_test = np.expand_dims(x_test, -1)
num_classes = 10
y_train = to_categorical(y_train, num_classes)
y_test = to_categorical(y_test, num_classes)


class Net(nn.Module):
    """Transpiled from the Keras model ``model`` (input.py:16).

    Input ``x``: (N, 1, 28, 28) float32, channels-first.
    Returns: (N, 10).

    ``return_logits=True`` skips the final softmax/sigmoid: the training loss
    works on logits, which is numerically sound (Keras clips probabilities instead).
    """

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, kernel_size=3)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=3)
        self.pool2 = nn.MaxPool2d(2)
        self.dropout1 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(1600, num_classes)

    def forward(self, x, return_logits=False):
        x = F.relu(self.conv1(x))
        x = self.pool1(x)
        x = F.relu(self.conv2(x))
        x = self.pool2(x).flatten(1)
        x = self.dropout1(x)
        logits = self.fc1(x)
        if return_logits:
            return logits
        return F.softmax(logits, dim=-1)


model = Net()
print(model)
batch_size = 128
epochs = 1
optimizer = torch.optim.Adam(
    model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07
)
loss_fn = categorical_crossentropy  # on logits: the model's final activation moves into the loss
fit(
    model,
    optimizer,
    loss_fn,
    one_channel_layout(x_train, (0, 3, 1, 2)),
    y_train,
    epochs=1,
    batch_size=128,
    metrics=[("accuracy", 0, categorical_accuracy)],
    validation_split=0.1,
)
score = evaluate(
    model,
    loss_fn,
    one_channel_layout(x_test, (0, 3, 1, 2)),
    y_test,
    batch_size=32,
    metrics=[("accuracy", 0, categorical_accuracy)],
)
print("Test loss:", score[0])
print("Test accuracy:", score[1])
