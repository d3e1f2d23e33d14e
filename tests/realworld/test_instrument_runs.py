"""The run instrumentation on small programs written here (not the shared set): what it records
from custom training loops, where it saves and loads initial weights, what it caps, and the
records of worker processes. Each test is one subprocess of the kind the harness starts."""

import json
import os
import sys
import textwrap

import pytest

from bench.realworld import run


def _require_program_module(name: str) -> None:
    """Skip unless ``name`` imports where the harness runs programs (this interpreter, or the
    programs' own dependencies that ``python -m bench.realworld --setup`` installs): the stand-in
    patches the real module's entry points (tensorflow_datasets is not a test dependency)."""
    import importlib.util
    from bench.realworld import deps
    if importlib.util.find_spec(name) is not None:
        return
    if os.path.isdir(os.path.join(deps.deps_dir(), name)):
        return
    pytest.skip(f"{name} is not installed for the harness's programs (python -m bench.realworld --setup)")


def _run(tmp_path, source, mode, extra=None):
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(source))
    env = run._base_env(str(tmp_path / "home"))
    return run._execute(sys.executable, "prog.py", str(tmp_path), env, mode, extra or {})


KERAS_CUSTOM_LOOP = """
import json
import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dropout(0.5),
                          keras.layers.Dense(1)])
opt = keras.optimizers.SGD(0.1)
x = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
y = x.sum(axis=1, keepdims=True)
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)

@tf.function
def step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(xb, training=True) - yb) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss

seen = [float(step(xb, yb)) for xb, yb in ds]   # a hand-written loop over a tf.data dataset
preds = model.predict(ds.repeat(), verbose=0)      # endless: only the cap ends it
json.dump({"losses": seen, "predicted": len(preds)}, open("truth.json", "w"))
"""


def test_keras_custom_loop_under_tf_function_is_recorded_and_capped(tmp_path):
    """A tf.function training loop: each step's loss read as the graph runs (the values the
    program itself sees), the initial weights saved at the first gradient, a user loop over a
    dataset and an endless predict capped, dropout in inference behaviour."""
    r = _run(tmp_path, KERAS_CUSTOM_LOOP, "keras",
             {"RW_SAVE_WEIGHTS": str(tmp_path / "initial.weights.h5"), "RW_PREDICT_STEPS": "3"})
    assert r.status == "ok", r.reason
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert len(truth["losses"]) == 3  # the dataset's 8 batches, capped at 3
    assert truth["predicted"] == 3 * 8  # 3 batches of the dataset's 8 rows
    assert r.record["tape"] == pytest.approx(truth["losses"], rel=1e-6)
    assert r.record["weights_saved"]["at"] == "first gradient"
    assert os.path.exists(tmp_path / "initial.weights.h5")
    assert run.keras_losses(r.record) == (r.record["tape"], "gradient targets")


KERAS_LOAD = """
import numpy as np
import keras

def build(seed):
    keras.utils.set_random_seed(seed)
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(1)])

reference = build(1)
reference.save_weights("reference.weights.h5")   # never called: the instrumentation skips it
model = build(2)
model(np.zeros((2, 4), "float32"))
same = all(np.array_equal(a, b) for a, b in zip(model.get_weights(), reference.get_weights()))
open("same.txt", "w").write(str(same))
"""


def test_keras_initial_weights_load_before_the_models_first_call(tmp_path):
    r = _run(tmp_path, KERAS_LOAD, "keras", {"RW_LOAD_WEIGHTS": str(tmp_path / "reference.weights.h5")})
    assert r.status == "ok", r.reason
    assert (tmp_path / "same.txt").read_text() == "True"
    assert r.record["weights_loaded"] == {"module": "Sequential", "at": "first call", "after_losses": 0}


TORCH_PROGRAM = """
import multiprocessing as mp
import torch
from torch import nn

def worker(_):
    import torch
    torch.ones(1, requires_grad=True).sum().backward()

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.9)

    def forward(self, x):
        return self.drop(self.fc(x))

if __name__ == "__main__":
    torch.manual_seed(0)
    net, crit = Net(), nn.CrossEntropyLoss()
    torch.save(net.state_dict(), "before.pt")
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = crit(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    torch.distributions.Categorical(logits=torch.zeros(2)).sample()
    p = mp.get_context("spawn").Process(target=worker, args=(0,))
    p.start(); p.join()
    torch.save(losses, "losses.pt")
"""


def test_torch_initial_weights_saved_at_first_backward_and_worker_records(tmp_path):
    torch = pytest.importorskip("torch")
    r = _run(tmp_path, TORCH_PROGRAM, "torch", {"RW_SAVE_WEIGHTS": str(tmp_path / "initial.pt")})
    assert r.status == "ok", r.reason
    before = torch.load(tmp_path / "before.pt")
    saved = torch.load(tmp_path / "initial.pt")
    assert set(saved) == set(before) and all(torch.equal(saved[k], before[k]) for k in before)
    assert r.record["weights_saved"]["model"] == "Net"  # not the parameterless loss module
    assert r.record["losses"] == pytest.approx(torch.load(tmp_path / "losses.pt"), rel=1e-7)
    assert r.record["optimizers"] == ["SGD"] and r.record["distributions"] == ["Categorical"]
    assert r.record["workers"] == 1 and r.record["worker_losses"] == [[1.0]]
    assert run.not_comparable(r.record) == "the training samples (Categorical): losses depend on the draws"
    assert "worker processes" in run.not_comparable(dict(r.record, workers=2))
    assert run.torch_losses({"workers": 1, "worker_losses": [[0.5, 0.4]], "losses": []}) == [0.5, 0.4]


def test_compare_verdicts_name_the_reason():
    res = run.Result(script="keras/a.py", direction="keras", translate_rc=0, parses=True, pure=True)
    res.original.status = res.translation.status = "ok"
    res.keras_losses, res.torch_losses = [1.0, 0.9, 0.8], [1.0, 0.9, 0.8]
    assert run.compare(res) == "not compared: no initial weights"
    res.translation.record = {"weights_loaded": {"module": "Net", "after_losses": 1}}
    assert run.compare(res) == "not compared: the initial weights were loaded after the first step"
    res.translation.record = {"weights_loaded": {"module": "Net", "after_losses": 0}}
    assert run.compare(res).startswith("equal: ")
    res.torch_losses = [1.0, 0.9, 0.7]
    assert run.compare(res).startswith("differ: ")
    res.original.record = {"optimizers": ["LBFGS"]}
    assert run.compare(res) == "not comparable: LBFGS evaluates the loss several times per step"
    res.stubs = 2  # the program's nature is told whatever the translation did
    assert run.compare(res) == "not comparable: LBFGS evaluates the loss several times per step"
    res.original.record = {}
    assert run.compare(res) == "not compared: 2 stubs"
    torch_res = run.Result(script="torch/x", direction="torch", translate_rc=0, parses=True, pure=True)
    torch_res.original.status = torch_res.translation.status = "ok"
    torch_res.torch_losses, torch_res.keras_losses = [2.0, 1.0, 0.5], [2.0, 1.0, 0.5]
    torch_res.translation.record = {"weights_loaded": {"module": "Net", "after_losses": 0}}
    assert run.compare(torch_res).startswith("equal: ")
    torch_res.translation.record = {}
    torch_res.weights = "conversion failed: x.py: boom"
    assert run.compare(torch_res) == "not compared: conversion failed: x.py: boom"


def test_torch_to_keras_first_steps_compared_from_the_same_weights(tmp_path):
    """The PyTorch -> Keras direction end to end on a corpus program laid out as a one-file
    project: the original's initial weights saved at its first backward, converted with
    ``transpile --to keras --weights``, loaded into the translation's model before its first
    call, and the first 3 step losses compared (dropout and shuffling neutralised in both)."""
    pytest.importorskip("torch")
    from bench.realworld import standins, torch_direction

    corpus = os.path.join(run.ROOT, "corpus", "torch")
    prog = tmp_path / "mlp_regression"
    prog.mkdir()
    (prog / "mlp_regression.py").write_text(open(os.path.join(corpus, "mlp_regression.py")).read())
    cache = standins.StandInCache(str(tmp_path / "standins"))
    res = torch_direction.run_torch_program(str(prog), str(tmp_path / "work"), cache,
                                            spec=("mlp_regression.py", [], [], None))
    assert res.clean, res.translate_error
    assert res.original.status == "ok", res.original.reason
    assert res.translation.status == "ok", res.translation.reason
    assert res.weights == "converted (from mlp_regression.py)"
    assert res.original.record["weights_saved"]["model"] == "Sequential"
    assert res.compare.startswith("equal: "), (res.compare, res.torch_losses, res.keras_losses)
    assert res.outcome == "first steps equal"


@pytest.mark.realworld
def test_keras_custom_gradient_tape_loop_compared_and_its_inference_pass_whole(tmp_path):
    """Keras -> PyTorch on the corpus' GradientTape loop: Keras' losses are the tape's targets,
    the torch translation's the backward calls; its closing predict over the in-memory arrays
    (a DataLoader under no_grad) is not cut by the training cap (it compares with all labels)."""
    pytest.importorskip("torch")
    from bench.realworld import standins

    res = run.run_keras_script(os.path.join(run.ROOT, "corpus", "keras", "custom_loop.py"), str(tmp_path),
                               standins.StandInCache(str(tmp_path / "standins")))
    assert res.translation.status == "ok", res.translation.reason
    assert res.keras_source == "gradient targets"
    assert res.outcome == "first steps equal", res.compare


KERAS_CUSTOM_TRAIN_STEP = """
import os
import numpy as np
import keras
import tensorflow as tf

def inner_model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(1)])

class Wrapper(keras.Model):   # no call: fit never builds it
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self.inner(x, training=True) - y) ** 2)
        grads = tape.gradient(loss, self.inner.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.inner.trainable_variables))
        return {"loss": loss}

keras.utils.set_random_seed(0)
model = Wrapper(inner_model())
initial = [w.copy() for w in model.inner.get_weights()]
model.compile(optimizer=keras.optimizers.SGD(0.1))
x = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
model.fit(x, x.sum(axis=1, keepdims=True), batch_size=8, epochs=3, verbose=0)
fresh = Wrapper(inner_model())
fresh.built = True
fresh.load_weights(os.environ["RW_SAVE_WEIGHTS"])
same = all(np.array_equal(a, b) for a, b in zip(fresh.inner.get_weights(), initial))
open("same.txt", "w").write(str(same))
"""


def test_keras_custom_train_step_of_an_unbuilt_wrapper_saves_its_initial_weights(tmp_path):
    """fit on a subclassed wrapper with its own train_step: the wrapper is not built when fit
    begins, so its weights are saved at the first gradient, still untrained; the losses are the
    gradient targets, 4 steps of 1 epoch."""
    r = _run(tmp_path, KERAS_CUSTOM_TRAIN_STEP, "keras", {"RW_SAVE_WEIGHTS": str(tmp_path / "w.weights.h5")})
    assert r.status == "ok", r.reason
    assert r.record["weights_saved"]["at"] == "first gradient (fit's model)"
    assert (tmp_path / "same.txt").read_text() == "True"
    losses, source = run.keras_losses(r.record)
    assert source == "gradient targets (custom train_step)" and len(losses) == 4


def test_a_timed_out_run_says_where_the_program_was(tmp_path, monkeypatch):
    """An uncapped loop (here: forever) is stopped at the time limit with SIGABRT first, so the
    reason names the program's own line it was on, not only 'over N s'."""
    monkeypatch.setattr(run, "TIMEOUT", 6)
    r = _run(tmp_path, "import time\n\ndef spin():\n    while True:\n        time.sleep(0.05)\n\nspin()\n",
             "none")
    assert r.status == "timeout"
    assert r.reason == "over 6 s, at prog.py:5 in spin: time.sleep(0.05)"


@pytest.mark.realworld
def test_keras_fit_with_dropout_compared_with_dropout_neutralised_in_both(tmp_path):
    """corpus mlp_regression: Dropout layers and fit's shuffling in Keras, their translations in
    torch; neutralised the same way on both sides, the first 3 fit steps agree."""
    pytest.importorskip("torch")
    from bench.realworld import standins

    res = run.run_keras_script(os.path.join(run.ROOT, "corpus", "keras", "mlp_regression.py"), str(tmp_path),
                               standins.StandInCache(str(tmp_path / "standins")))
    assert res.keras_source == "fit logs"
    assert res.outcome == "first steps equal", (res.compare, res.translation.reason)


TFDS_PROGRAM = """
import json
import tensorflow as tf
import tensorflow_datasets as tfds

(train, val), info = tfds.load("tf_flowers", split=["train[:90%]", "train[90%:]"], as_supervised=True,
                               with_info=True)
cyc = tfds.load("cycle_gan/horse2zebra", as_supervised=True)
few = [int(l) for _, l in tfds.load("omniglot", split="train", as_supervised=True)]  # a loop, unbatched
batched = [1 for _ in tfds.load("omniglot", split="train", as_supervised=True).batch(2)]
image, label = next(iter(train))
json.dump({"n": [int(train.cardinality()), int(val.cardinality())], "classes": info.features["label"].num_classes,
           "shape": list(info.features["image"].shape), "image": train.element_spec[0].shape.as_list(), "dtype": image.dtype.name,
           "splits": sorted(cyc), "few": len(few), "batched": len(batched),
           "train_examples": info.splits["train"].num_examples}, open("truth.json", "w"))
"""


def test_tfds_load_served_from_the_standin_table_with_split_syntax_and_info(tmp_path):
    """tfds.load of a dataset in the table: splits sliced as tfds does, supervised pairs, the
    info's class count and shapes; a loop over a small unbatched stand-in is read whole (few-shot
    tables), a loop over its batches stays capped."""
    _require_program_module("tensorflow_datasets")
    r = _run(tmp_path, TFDS_PROGRAM, "keras", {"RW_PREDICT_STEPS": "5"})
    assert r.status == "ok", r.reason
    truth = json.loads((tmp_path / "truth.json").read_text())
    spec = __import__("bench.realworld.standins", fromlist=["x"]).TFDS_DATASETS
    n = spec["tf_flowers"].splits["train"]
    assert truth["n"] == [round(0.9 * n), n - round(0.9 * n)] and truth["train_examples"] == n
    assert truth["classes"] == 5 and truth["shape"] == [None, None, 3]
    assert truth["image"] == [None, None, 3] and truth["dtype"] == "uint8"
    assert truth["splits"] == ["testA", "testB", "trainA", "trainB"]
    assert truth["few"] == spec["omniglot"].splits["train"] and truth["batched"] == 5
    assert any("served by the harness's stand-in" in e for e in r.record["events"])


TORCH_AUGMENT = """
import json
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(2)

    def forward(self, x):
        seen.append((self.training, self.bn.training))
        if self.training:  # a translated Random* layer: draws only in training
            x = x + torch.rand_like(x)
        return self.bn(x)

seen = []
net = Net()
net.train()
net(torch.ones(4, 2))
json.dump({"seen": seen, "after": net.training}, open("truth.json", "w"))
"""


def test_torch_program_modules_run_their_training_only_branches_at_inference(tmp_path):
    """The Keras side runs Random* layers at inference: the torch side runs the program's own
    modules' `if self.training:` branches at inference too, torch's own modules (BatchNorm) keep
    their training behaviour, and the flag is back once the forward returns."""
    r = _run(tmp_path, TORCH_AUGMENT, "torch")
    assert r.status == "ok", r.reason
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert truth == {"seen": [[False, True]], "after": True}
    assert any("training-only branches of Net" in e for e in r.record["events"])


KERAS_OWN_LAYER = """
import json
import numpy as np
import keras
from keras import layers


class StochasticDepth(layers.Layer):
    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate
        self.norm = layers.BatchNormalization()

    def call(self, x, training=None):
        x = self.norm(x)  # (the call context's mode: batch statistics in training)
        if training:
            keep = 1 - self.rate
            return x / keep * keras.ops.floor(keep + keras.random.uniform((keras.ops.shape(x)[0], 1)))
        return x


inputs = keras.Input((4,))
model = keras.Model(inputs, StochasticDepth(0.5)(layers.Dense(4)(inputs)))
x = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
a, b = np.asarray(model(x, training=True)), np.asarray(model(x, training=True))
c = np.asarray(model(x, training=False))
json.dump({"same": bool(np.allclose(a, b)), "batch_stats": not bool(np.allclose(a, c))}, open("truth.json", "w"))
"""


def test_keras_program_layers_run_their_own_training_branches_at_inference(tmp_path):
    """The torch side runs each program module's own ``if self.training:`` branches at
    inference: the Keras side does the same for the program's own Layer subclasses (a stochastic
    depth drawing with keras.random), while the layers they call keep the call's mode
    (BatchNormalization uses batch statistics in training)."""
    r = _run(tmp_path, KERAS_OWN_LAYER, "keras")
    assert r.status == "ok", r.reason
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert truth == {"same": True, "batch_stats": True}
    assert any(e.startswith("StochasticDepth (the program's layer)") for e in r.record["events"])


KERAS_CROP = """
import json
import numpy as np
import keras
import tensorflow as tf

x = np.random.default_rng(0).uniform(size=(2, 52, 60, 3)).astype("float32")
model = keras.Sequential([keras.Input((52, 60, 3)), keras.layers.RandomCrop(48, 48)])
got = np.asarray(model(x, training=True))
want = tf.image.resize(x[:, 0:52, 4:56, :], (48, 48), method="bilinear").numpy()
json.dump({"shape": list(got.shape), "err": float(np.abs(got - want).max())}, open("truth.json", "w"))
"""


def test_keras_random_crop_neutralised_as_the_centred_window_resized(tmp_path):
    """RandomCrop's neutral form keeps the layer's output size (Keras 3's own inference path
    returns the image uncropped, which broke a model cropping 52 -> 48): the centred window of the
    target's aspect ratio, resized, as Keras documents and the translations write it."""
    r = _run(tmp_path, KERAS_CROP, "keras")
    assert r.status == "ok", r.reason
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert truth["shape"] == [2, 48, 48, 3] and truth["err"] < 1e-5
    assert any(e.startswith("RandomCrop in inference behaviour") for e in r.record["events"])


GENERATED_LOADER_LOOP = '''
import json
import random
import numpy as np
import keras
import tensorflow as tf


class DatasetLoader:
    """torch's DataLoader over a map-style dataset (the runtime helper a translation copies)."""

    def __init__(self, n, batch_size):
        self.n, self.batch_size = n, batch_size

    def __iter__(self):
        for start in range(0, self.n, self.batch_size):
            yield np.full((self.batch_size, 2), start / self.n, "float32")


model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
opt = keras.optimizers.SGD(0.01)
trained = 0
for xb in DatasetLoader(800, 8):   # a training pass: a gradient per batch
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(xb) ** 2)
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    trained += 1
inferred = sum(1 for _ in DatasetLoader(800, 8))   # an inference pass (no gradient)
json.dump({"trained": trained, "inferred": inferred, "draw": random.random()}, open("truth.json", "w"))
'''


def test_keras_generated_loader_passes_capped_as_torchs_dataloader_and_random_seeded(tmp_path):
    """A translation's DataLoader stand-in (a class the program defines, the runtime helper's
    docstring) is capped as the original's DataLoader: a training pass at RW_STEPS batches, an
    inference pass over a map-style dataset at RW_PREDICT_STEPS; Python's random starts from
    the same seed in both runs (a Dataset drawing random pairs draws the same ones)."""
    r = _run(tmp_path, GENERATED_LOADER_LOOP, "keras", {"RW_PREDICT_STEPS": "32"})  # (RW_STEPS: 4)
    assert r.status == "ok", r.reason
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert truth["trained"] == 4 and truth["inferred"] == 32, truth
    import random

    random.seed(0)
    assert truth["draw"] == random.random()
    assert len(r.record["tape"]) == 4
