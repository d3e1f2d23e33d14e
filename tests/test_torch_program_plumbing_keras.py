"""PyTorch programs as pytorch/examples writes them → Keras (issue 19 items 2 and 4): custom
``Dataset`` classes making their data with torch, a ``DataLoader`` over a dataset another file
gives, worker processes (``mp.Process``, ``model.share_memory()``), device moves on batches.

The two-file program ``programs_torch/hogwild`` is translated as a directory, run end to end,
and its first training steps are compared with the torch original's from the same weights.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from transpiler.cli import run
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

HOGWILD = Path(__file__).parent / "programs_torch" / "hogwild"
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}

# -- custom Dataset classes ----------------------------------------------------------------
RANDOM_DATASET = '''\
import torch
from torch.utils.data import Dataset


class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        self.data = [(torch.rand(20), torch.rand(1)) for _ in range(size)]
        self.codes = torch.randint(0, 5, (size,))
        self.extra = torch.zeros(size, 3)

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        x, y = self.data[index]
        image = x.clone().unsqueeze(0).view(4, 5)
        return image.permute(1, 0), y, self.codes[index], self.extra[index].size(0)
'''


def test_a_dataset_making_its_data_with_torch_becomes_numpy_of_the_same_shapes_and_dtypes():
    tr = translate(RANDOM_DATASET, "datautils.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "torch" not in tr.text.replace("PyTorch", "")
    space: dict = {}
    exec(compile(tr.text, "generated", "exec"), space)
    ds = space["MyTrainDataset"](6)
    image, y, code, width = ds[2]
    assert len(ds) == 6
    assert image.shape == (5, 4) and image.dtype == np.float32
    assert np.array_equal(image, ds.data[2][0].reshape(4, 5).T)  # unsqueeze/view/permute as torch's
    assert y.shape == (1,) and y.dtype == np.float32 and 0 <= y[0] < 1
    assert code.dtype == np.int64 and 0 <= code < 5
    assert width == 3


def test_a_dataset_calling_a_tensor_method_numpy_lacks_is_a_stub():
    """``.masked_fill`` kept on a numpy array would fail when the loader reads an item."""
    src = RANDOM_DATASET.replace("return image.permute(1, 0), y", "return image.masked_fill(image > 0.5, 0.0), y")
    tr = translate(src, "datautils.py", "keras")
    assert any(".masked_fill()" in str(d) and "MyTrainDataset" in str(d) for d in tr.stubs), \
        [str(d) for d in tr.stubs]


def test_a_dataset_using_numpy_functions_named_like_tensor_methods_is_kept():
    src = RANDOM_DATASET.replace("import torch\n", "import numpy as np\nimport torch\n").replace(
        "return image.permute(1, 0), y", "return np.exp(image), y")
    tr = translate(src, "datautils.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]


# -- a library module's loader and loop over what another file gives --------------------------
def test_a_loader_over_a_dataset_parameter_is_a_dataset_loader_and_its_loop_a_tape_step():
    tr = translate((HOGWILD / "train.py").read_text(), "train.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "train_loader = DatasetLoader(\n        dataset," in tr.text
    assert 'batch_size=dataloader_kwargs.get("batch_size", 1)' in tr.text
    assert "tape.gradient(loss, model.trainable_variables)" in tr.text
    assert ".to(" not in tr.text  # device moves on the batches: nothing to move in Keras


def test_functions_reached_from_a_guessed_function_keep_the_guess_of_their_model():
    """``test(args, model, ...)`` passes its parameter on to ``test_epoch(model, ...)``, which
    calls ``model.eval()``: the model there is the Keras model (``predict``), not a value
    whose torch methods would stay (``model.eval()`` fails on a Keras model)."""
    tr = translate((HOGWILD / "train.py").read_text(), "train.py", "keras")
    body = tr.text[tr.text.index("def test_epoch("):]
    assert "model.eval()" not in body and ".max(1)" not in body and ".eq(" not in body
    assert "model.predict(data, verbose=0)" in body


def test_worker_processes_run_one_after_the_other_in_the_keras_program():
    tr = translate((HOGWILD / "main.py").read_text(), "main.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "p = Process(target=train, args=(rank, args, model, device, dataset1, kwargs))" in tr.text
    assert "class Process:" in tr.text
    assert "share_memory" not in tr.text.replace("dropped model.share_memory()", "")
    assert "# transpiler: dropped model.share_memory(): one process holds the Keras model" in tr.text


def _translate_dir(tmp_path: Path) -> Path:
    out = tmp_path / "keras"
    assert run([str(HOGWILD), "--to", "keras", "-o", str(out)]) == 0
    return out


def test_hogwild_program_runs_end_to_end_as_keras(tmp_path):
    out = _translate_dir(tmp_path)
    p = program_runner.run([sys.executable, "main.py", "--epochs", "1"], cwd=out, capture_output=True, text=True,
                       env=ENV, timeout=600, preload=("torch", "tensorflow"))
    assert p.returncode == 0, p.stderr[-3000:]
    assert len(re.findall(r"Train Epoch: 1 \[\d+/64\]\tLoss: ", p.stdout)) == 16  # 2 workers x 8 batches
    assert "Test set: Average loss:" in p.stdout


#: runs the program's own ``train`` once (one worker, no shuffling) from weights.npz; the
#: Keras side writes that file from its freshly built model first
KERAS_DRIVER = '''
import sys
import numpy as np
import main
from train import train
model = main.Net()
weights = {}
for layer in model.layers:
    if layer.get_weights():
        kernel, bias = layer.get_weights()
        weights[layer.name + ".weight"] = kernel.T
        weights[layer.name + ".bias"] = bias
np.savez(sys.argv[1], **weights)
args = main.parser.parse_args(["--epochs", "1"])
train(0, args, model, None, main.Blobs(64, 0), {"batch_size": 8})
'''
TORCH_DRIVER = '''
import sys
import numpy as np
import torch
import main
from train import train
model = main.Net()
weights = np.load(sys.argv[1])
model.load_state_dict({k: torch.from_numpy(weights[k]) for k in weights.files})
args = main.parser.parse_args(["--epochs", "1"])
train(0, args, model, torch.device("cpu"), main.Blobs(64, 0), {"batch_size": 8})
'''


def _losses(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"Loss: ([0-9.]+)", text)]


def test_hogwild_training_steps_equal_torch_from_the_same_weights(tmp_path):
    out = _translate_dir(tmp_path)
    weights = tmp_path / "weights.npz"
    runs = []
    for cwd, driver in ((out, KERAS_DRIVER), (HOGWILD, TORCH_DRIVER)):
        p = program_runner.run([sys.executable, "-c", driver, str(weights)], cwd=cwd, capture_output=True, text=True,
                           env=ENV, timeout=600, preload=("torch", "tensorflow"))
        assert p.returncode == 0, p.stderr[-3000:]
        runs.append(_losses(p.stdout))
    keras_losses, torch_losses = runs
    assert len(keras_losses) == len(torch_losses) == 8
    k, t = np.array(keras_losses[:3]), np.array(torch_losses[:3])
    assert np.all(np.abs(k - t) / np.abs(t) <= 1e-4), (k, t)  # (printed with 6 decimals)


# -- one training step per call of a function (full-batch programs: gat) ----------------------
FULL_BATCH = Path(__file__).parent / "programs_torch" / "full_batch_steps.py"

#: runs the program's main() with Net() giving a model with the weights of weights.npz (the
#: Keras side writes that file from its freshly built model first)
STEP_KERAS_DRIVER = '''
import sys
import numpy as np
import program
model = program.Net()
weights = {}
for layer in model.layers:
    if layer.get_weights():
        kernel, bias = layer.get_weights()
        weights[layer.name + ".weight"] = kernel.T
        weights[layer.name + ".bias"] = bias
np.savez(sys.argv[1], **weights)
program.Net = lambda: model
program.main()
'''
STEP_TORCH_DRIVER = '''
import sys
import numpy as np
import torch
import program
model = program.Net()
weights = np.load(sys.argv[1])
model.load_state_dict({k: torch.from_numpy(weights[k]) for k in weights.files})
program.Net = lambda: model
program.main()
'''


def test_a_function_whose_body_is_one_step_runs_it_under_a_tape():
    tr = translate(FULL_BATCH.read_text(), "full_batch_steps.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    body = tr.text[tr.text.index("def train_iter("):tr.text.index("def evaluate(")]
    assert "with tf.GradientTape() as tape:\n        output = model(x, training=True)" in body
    assert "optimizer.apply_gradients(zip(grads, model.trainable_variables))" in body
    assert "zero_grad" not in body and ".backward()" not in body and ".step()" not in body


def test_a_step_function_keeps_its_setup_outside_the_tape():
    """``model = ...; optimizer = ...`` before the step (pytorch/examples ddp's demo_basic)
    are made once, before the tape starts."""
    src = FULL_BATCH.read_text().replace(
        "def train_iter(epoch, model, optimizer, criterion, x, y, print_every=1):\n    model.train()\n",
        "def train_iter(epoch, model, optimizer, criterion, x, y, print_every=1):\n"
        "    extra = torch.optim.SGD(model.parameters(), lr=0.0)\n    print('step', epoch)\n")
    text = translate(src, "full_batch_steps.py", "keras").text
    body = text[text.index("def train_iter("):text.index("def evaluate(")]
    assert body.index("extra = ") < body.index("print(\"step\", epoch)") < body.index("tf.GradientTape")


def test_full_batch_steps_equal_torch_from_the_same_weights(tmp_path):
    import shutil

    tr = translate(FULL_BATCH.read_text(), "full_batch_steps.py", "keras")
    (tmp_path / "keras").mkdir()
    (tmp_path / "torch").mkdir()
    (tmp_path / "keras" / "program.py").write_text(tr.text)
    shutil.copy(FULL_BATCH, tmp_path / "torch" / "program.py")
    weights = tmp_path / "weights.npz"
    runs = []
    for side, driver in (("keras", STEP_KERAS_DRIVER), ("torch", STEP_TORCH_DRIVER)):
        p = program_runner.run([sys.executable, "-c", driver, str(weights)], cwd=tmp_path / side, capture_output=True,
                           text=True, env=ENV, timeout=600, preload=("torch", "tensorflow"))
        assert p.returncode == 0, p.stderr[-3000:]
        runs.append([float(v) for v in re.findall(r"Epoch: \d+ loss: ([0-9.]+)", p.stdout)])
    keras_losses, torch_losses = runs
    assert len(keras_losses) == len(torch_losses) == 5
    k, t = np.array(keras_losses[:3]), np.array(torch_losses[:3])
    assert np.all(np.abs(k - t) / np.abs(t) <= 1e-4), (k, t)


REALWORLD = Path(__file__).resolve().parents[2] / "shared" / "realworld" / "torch"


def test_realworld_ddp_example_step_is_translated_without_stubs():
    """pytorch/examples distributed/ddp/example.py (read where the set is at hand): its
    ``demo_basic`` makes the model and optimizer, then one step outside any loop."""
    import pytest

    path = REALWORLD / "distributed" / "ddp" / "example.py"
    if not path.is_file():
        pytest.skip("the real-world set is not at hand")
    tr = translate(path.read_text(), "example.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    body = tr.text[tr.text.index("def demo_basic("):]
    assert body.index("optimizer = keras.optimizers.SGD(") < body.index("tf.GradientTape(")
    assert "accumulate_gradients(" in body and "apply_gradients(tape, optimizer, ddp_model" in body


# -- checkpoints of other objects than a model's state_dict -----------------------------------
CHECKPOINT = Path(__file__).parent / "programs_torch" / "checkpoint_dict.py"

#: main() with every Net() holding the weights of weights.npz (written by the Keras side
#: from a freshly built model first)
CHECKPOINT_KERAS_DRIVER = '''
import sys
import numpy as np
import program
first = program.Net()
weights = {}
for layer in first.layers:
    if layer.get_weights():
        kernel, bias = layer.get_weights()
        weights[layer.name + ".weight"] = kernel.T
        weights[layer.name + ".bias"] = bias
np.savez(sys.argv[1], **weights)
build = program.Net
def same():
    model = build()
    model.set_weights(first.get_weights())
    return model
program.Net = same
program.main()
'''
CHECKPOINT_TORCH_DRIVER = '''
import sys
import numpy as np
import torch
import program
weights = np.load(sys.argv[1])
build = program.Net
def same():
    model = build()
    model.load_state_dict({k: torch.from_numpy(weights[k]) for k in weights.files})
    return model
program.Net = same
program.main()
'''


def test_a_checkpoint_dict_is_saved_and_loaded_by_the_generated_helpers():
    tr = translate(CHECKPOINT.read_text(), "checkpoint_dict.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert '"model_state_dict": model.get_weights(),' in tr.text
    assert '"optimizer_state_dict": optimizer_state(optimizer),' in tr.text
    assert 'checkpoint = load_object("checkpoint.tar")' in tr.text
    assert 'load_model_state(restored, checkpoint["model_state_dict"])' in tr.text
    assert "load_optimizer_state(\n        restored_optimizer, restored," in tr.text


def test_checkpoint_program_resumes_like_torch_from_the_same_weights(tmp_path):
    """The resumed model and optimizer continue exactly as the ones that were saved (the
    optimizer's moments and step count come back), and every printed loss equals torch's."""
    import shutil

    tr = translate(CHECKPOINT.read_text(), "checkpoint_dict.py", "keras")
    (tmp_path / "keras").mkdir()
    (tmp_path / "torch").mkdir()
    (tmp_path / "keras" / "program.py").write_text(tr.text)
    shutil.copy(CHECKPOINT, tmp_path / "torch" / "program.py")
    weights = tmp_path / "weights.npz"
    runs = []
    for side, driver in (("keras", CHECKPOINT_KERAS_DRIVER), ("torch", CHECKPOINT_TORCH_DRIVER)):
        p = program_runner.run([sys.executable, "-c", driver, str(weights)], cwd=tmp_path / side, capture_output=True,
                           text=True, env=ENV, timeout=600, preload=("torch", "tensorflow"))
        assert p.returncode == 0, p.stderr[-3000:]
        runs.append([float(v) for v in re.findall(r"loss ([0-9.]+)", p.stdout)])
    keras_losses, torch_losses = runs
    assert len(keras_losses) == len(torch_losses) == 5  # epochs 0, 1, the resumed-from loss, 2 twice
    assert keras_losses[3] == keras_losses[4]  # the restored pair continues as the saved one
    k, t = np.array(keras_losses), np.array(torch_losses)
    assert np.all(np.abs(k - t) / np.abs(t) <= 1e-4), (k, t)


def test_load_object_refuses_a_file_pytorch_wrote(tmp_path):
    import pytest
    import torch

    from transpiler.runtime.keras.training import load_object, save_object

    torch.save({"epoch": 3}, tmp_path / "torch.pt")
    with pytest.raises(ValueError, match="a file PyTorch wrote"):
        load_object(str(tmp_path / "torch.pt"))
    save_object({"epoch": 3, "w": [np.ones(2, "float32")]}, str(tmp_path / "ours.pt"))
    back = load_object(str(tmp_path / "ours.pt"))
    assert back["epoch"] == 3 and np.array_equal(back["w"][0], np.ones(2))


def test_a_distributed_query_inside_an_f_string_leaves_the_output_parsing():
    """``f"backend={dist.get_backend()}"``: the constant has no quotes of its own (a quoted
    "none" inside the f-string's own quotes was a SyntaxError before Python 3.12)."""
    import ast

    src = ('import torch\nimport torch.distributed as dist\n\n\ndef report():\n'
           '    print(f"[rank {dist.get_rank()}] backend={dist.get_backend()}")\n')
    text = translate(src, "report.py", "keras").text
    ast.parse(text)
    space: dict = {}
    exec(compile(text, "generated", "exec"), space)
    assert "backend=none" in _stdout_of(space["report"])


def _stdout_of(fn) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn()
    return out.getvalue()


# -- samplers and torch-only context managers ---------------------------------------------------
SAMPLED = '''\
import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        return torch.tensor([float(index)]), torch.tensor(index * index)


def loaders(dataset, batch_size):
    train = DataLoader(dataset, batch_size=batch_size, shuffle=False, sampler=DistributedSampler(dataset))
    val = DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset, shuffle=False))
    return train, val


def epochs(n):
    train, val = loaders(Squares(10), 4)
    seen = []
    for epoch in range(n):
        train.sampler.set_epoch(epoch)
        seen.append(sorted(int(x) for xb, _ in train for x in xb[:, 0]))
    order = [int(x) for xb, _ in val for x in xb[:, 0]]
    return seen, order, len(train)


def resume(path):
    with torch.serialization.safe_globals([Squares]):
        state = torch.load(path)
    return state
'''


def test_a_distributed_sampler_is_the_one_replica_sampler_the_loader_batches():
    tr = translate(SAMPLED, "sampled.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "SampledLoader(" in tr.text and "sampler=DistributedSampler(dataset)" in tr.text
    space: dict = {}
    exec(compile(tr.text, "generated", "exec"), space)
    seen, order, batches = space["epochs"](2)
    assert seen == [list(range(10)), list(range(10))]  # every index once per epoch, one replica
    assert order == list(range(10))  # shuffle=False: the dataset's order
    assert batches == 3


def test_a_safe_globals_block_is_kept_unwrapped_with_a_note():
    tr = translate(SAMPLED, "sampled.py", "keras")
    body = tr.text[tr.text.index("def resume("):]
    assert "safe_globals" not in body.replace("dropped torch.serialization.safe_globals(...)", "")
    assert "state = load_object(path)" in body
    assert "# transpiler: dropped torch.serialization.safe_globals(...)" in body


# -- torch array functions in data code ------------------------------------------------------------
ARRAY_FUNCTIONS = '''\
import torch


def arrays():
    x = torch.randn(2, 3, 4)
    mask = (torch.triu(torch.ones((4, 4))) == 1).transpose(0, 1)
    return (torch.flatten(x), torch.flatten(x, 1), torch.flatten(x, start_dim=2), mask,
            torch.tril(torch.ones(3, 3), diagonal=-1), torch.eye(3), torch.diag(torch.ones(3)),
            torch.randint(10, size=(5,)), torch.randint(2, 6, size=(2, 2)), x)
'''


def test_torch_array_functions_equal_torch_on_the_same_data():
    import torch

    tr = translate(ARRAY_FUNCTIONS, "arrays.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    space: dict = {}
    exec(compile(tr.text, "generated", "exec"), space)
    ours = space["arrays"]()
    x = torch.from_numpy(ours[-1])
    theirs = (torch.flatten(x), torch.flatten(x, 1), torch.flatten(x, start_dim=2),
              (torch.triu(torch.ones((4, 4))) == 1).transpose(0, 1), torch.tril(torch.ones(3, 3), diagonal=-1),
              torch.eye(3), torch.diag(torch.ones(3)))
    for mine, torch_value in zip(ours, theirs):
        assert np.array_equal(mine, torch_value.numpy()) and mine.dtype == torch_value.numpy().dtype
    assert ours[7].shape == (5,) and ours[7].min() >= 0 and ours[7].max() < 10
    assert ours[8].shape == (2, 2) and ours[8].min() >= 2 and ours[8].max() < 6


def test_multinomial_of_a_weights_vector_draws_its_indices():
    src = ("import torch\n\n\ndef draw(weights, k):\n    w = torch.from_numpy(weights)\n"
           "    return torch.multinomial(w, k)\n")
    tr = translate(src, "draw.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    space: dict = {}
    exec(compile(tr.text, "generated", "exec"), space)
    weights = np.array([0.0, 3.0, 0.0, 1.0], dtype="float32")  # (float32, not summing to 1)
    drawn = space["draw"](weights, 2)
    assert sorted(drawn.tolist()) == [1, 3]  # without replacement: both indices of non-zero weight
    assert space["draw"](weights, 1).shape == (1,)


def test_random_split_of_a_dataset_the_file_is_given_and_a_torch_annotation():
    """minGPT-ddp's main.py: ``random_split(CharDataset(cfg), ...)`` of another file's Dataset
    class, and ``device: torch.device = torch.device(...)`` (the annotation a string now)."""
    src = ('import torch\nfrom torch.utils.data import random_split\nfrom char_dataset import CharDataset\n\n\n'
           'def parts(cfg):\n    device: torch.device = torch.device("cpu")\n    dataset = CharDataset(cfg)\n'
           '    n = int(len(dataset) * 0.75)\n    return random_split(dataset, [n, len(dataset) - n])\n')
    tr = translate(src, "main.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    space: dict = {"__name__": "generated"}
    text = tr.text.replace("from char_dataset import CharDataset", "CharDataset = lambda cfg: list(range(cfg))")
    exec(compile(text, "generated", "exec"), space)
    train, test = space["parts"](8)
    assert len(train) == 6 and len(test) == 2
    assert sorted([train[i] for i in range(6)] + [test[i] for i in range(2)]) == list(range(8))
    assert 'device: "torch.device" = Device("cpu")' in tr.text


def test_numpy_data_saved_to_an_open_file_is_read_back_by_the_other_program(tmp_path):
    """time_sequence_prediction: generate_sine_wave.py saves numpy data with torch.save to an
    open file, train.py reads it with torch.load: both are translated, the pair agrees."""
    make = ('import numpy as np\nimport torch\n\nnp.random.seed(2)\nx = np.empty((3, 5), "int64")\n'
            'x[:] = np.array(range(5)) + np.random.randint(-4, 4, 3).reshape(3, 1)\n'
            'data = np.sin(x / 1.0).astype("float64")\ntorch.save(data, open("traindata.pt", "wb"))\n')
    use = ('import numpy as np\nimport torch\n\n\ndef main():\n    data = torch.load("traindata.pt")\n'
           '    print("shape", data.shape, float(np.abs(data).max()) <= 1.0)\n\n\nmain()\n')
    made, used = translate(make, "generate.py", "keras"), translate(use, "train.py", "keras")
    assert not made.stubs and not used.stubs, [str(d) for d in made.stubs + used.stubs]
    for name, text in (("generate.py", made.text), ("train.py", used.text)):
        (tmp_path / name).write_text(text)
        p = program_runner.run([sys.executable, name], cwd=tmp_path, capture_output=True, text=True, env=ENV,
                           timeout=600, preload=("torch", "tensorflow"))
        assert p.returncode == 0, p.stderr[-3000:]
    assert "shape (3, 5) True" in p.stdout
