"""Reinforcement-learning programs to Keras (issue 19 item 4): a loss built after the episode
from log-probabilities the forward passes of every step recorded (frontend_ast/torch/episodes).

The programs (tests/programs_torch/episodes/, written for these tests in pytorch/examples'
style) run against a stand-in gymnasium (same folder). The first update is compared with
torch's from the same weights and the same episode: the actions both sides sample are set to
one sequence and dropout is off, so the gradients torch's autograd gives must be the ones the
Keras program's tape gives.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys

import numpy as np
import pytest

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

HERE = os.path.dirname(os.path.abspath(__file__))
EPISODES = os.path.join(HERE, "programs_torch", "episodes")
PROGRAMS = ["policy_gradient", "actor_critic"]
REALWORLD = os.path.join(os.environ.get("RW_REALWORLD_DIR") or os.path.normpath(
    os.path.join(HERE, "..", "..", "shared", "realworld")), "torch", "reinforcement_learning")
ACTIONS = [0, 1, 1, 0, 1, 0, 0, 1]


def _path(name: str) -> str:
    return os.path.join(EPISODES, f"{name}.py")


def _translated(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        result = translate(fh.read(), path, "keras")
    assert not result.stubs, [str(d) for d in result.stubs]
    return result.text


@pytest.mark.parametrize("name", PROGRAMS)
def test_episode_loss_is_differentiated_by_the_program_tape(name):
    """The update function calls no model: its backward() is the recording tape's gradient,
    not a tape opened around the update (which would hold none of the forward passes)."""
    text = _translated(_path(name))
    assert "autograd_tape.gradient(" in text
    assert "with tf.GradientTape" not in text
    assert "import torch" not in text
    assert "class Categorical" in text and "def with_attributes" in text


def test_step_with_its_own_forward_pass_keeps_its_local_tape():
    """A step function that calls the model itself is one training step under its own tape
    (tests/programs_torch/full_batch_steps.py): no recording from the program's start."""
    text = _translated(os.path.join(HERE, "programs_torch", "full_batch_steps.py"))
    assert "autograd_tape" not in text and "tf.GradientTape" in text


def _run(text: str, folder) -> subprocess.CompletedProcess:
    (folder / "out.py").write_text(text)
    env = dict(os.environ, PYTHONPATH=EPISODES, TF_CPP_MIN_LOG_LEVEL="3")
    done = program_runner.run([sys.executable, "out.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300, preload=("torch", "tensorflow"))
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.parametrize("name", PROGRAMS)
def test_episode_program_runs_as_keras(name, tmp_path):
    done = _run(_translated(_path(name)), tmp_path)
    assert "Solved" in done.stdout, done.stdout


@pytest.mark.parametrize("name", ["reinforce", "actor_critic"])
def test_realworld_episode_program_runs_as_keras(name, tmp_path):
    path = os.path.join(REALWORLD, f"{name}.py")
    if not os.path.exists(path):
        pytest.skip("the shared real-world scripts are not at hand")
    done = _run(_translated(path), tmp_path)
    assert "Solved" in done.stdout, done.stdout


# -- the first update, torch and Keras -----------------------------------------------------
class _Stop(Exception):
    pass


def _module_of(g, base):
    found = [v for k, v in g.items() if isinstance(v, base) and not k.startswith("_")]
    assert len(found) == 1, found
    return found[0]


def _torch_update(path, monkeypatch):
    import torch

    monkeypatch.setattr(sys, "argv", [path])
    monkeypatch.syspath_prepend(EPISODES)
    g = runpy.run_path(path, run_name="episode_test")
    model = _module_of(g, torch.nn.Module)
    weights = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    actions = iter(ACTIONS)
    monkeypatch.setattr(torch.distributions.Categorical, "sample",
                        lambda self, sample_shape=torch.Size(): torch.full(self.batch_shape, next(actions)))
    monkeypatch.setattr(torch.nn.Dropout, "forward", lambda self, x: x)
    grads = {}

    def step(*args, **kwargs):
        grads.update({n: p.grad.numpy().copy() for n, p in model.named_parameters()})
        raise _Stop

    monkeypatch.setattr(g["optimizer"], "step", step)
    with pytest.raises(_Stop):
        g["main"]()
    return weights, grads


def _keras_update(text, weights, tmp_path, monkeypatch):
    import keras

    out = tmp_path / "out.py"
    out.write_text(text)
    monkeypatch.setattr(sys, "argv", [str(out)])
    g = runpy.run_path(str(out), run_name="episode_test")
    try:
        model = _module_of(g, keras.Model)
        if not model.built:  # a subclass builds on its first call (an observation of the env's size)
            import numpy as np

            first = next(w for n, w in weights.items() if n.endswith(".weight"))
            model(np.zeros((1, first.shape[1]), "float32"))
        for name in {n.rsplit(".", 1)[0] for n in weights}:
            model.get_layer(name).set_weights([weights[f"{name}.weight"].T, weights[f"{name}.bias"]])
        actions = iter(ACTIONS)
        monkeypatch.setattr(g["Categorical"], "sample", lambda self, sample_shape=(): keras.ops.full(
            tuple(self.logits.shape[:-1]), next(actions), dtype="int64"))
        monkeypatch.setattr(keras.layers.Dropout, "call", lambda self, inputs, training=None: inputs)
        grads = {}

        def apply_gradients(pairs):
            grads.update({"/".join(v.path.split("/")[-2:]): keras.ops.convert_to_numpy(gr) for gr, v in pairs})
            raise _Stop

        monkeypatch.setattr(g["optimizer"], "apply_gradients", apply_gradients)
        with pytest.raises(_Stop):
            g["main"]()
        return grads
    finally:
        g["autograd_tape"]._tape.__exit__(None, None, None)  # (the program's tape records no more)


@pytest.mark.parametrize("name", PROGRAMS)
def test_first_update_equals_torch(name, tmp_path, monkeypatch):
    import torch  # noqa: F401  (torch before TensorFlow in one process)

    path = _path(name)
    sys.modules.pop("gymnasium", None)
    weights, torch_grads = _torch_update(path, monkeypatch)
    keras_grads = _keras_update(_translated(path), weights, tmp_path, monkeypatch)
    sys.modules.pop("gymnasium", None)
    assert len(keras_grads) == len(torch_grads)
    for key, grad in torch_grads.items():
        layer, kind = key.rsplit(".", 1)
        got = keras_grads[f"{layer}/{'kernel' if kind == 'weight' else 'bias'}"]
        got = got.T if kind == "weight" else got
        assert np.abs(grad).max() > 0, key  # (the episode's loss reaches every weight)
        np.testing.assert_allclose(got, grad, rtol=1e-4, atol=1e-6 * np.abs(grad).max(), err_msg=key)


def test_categorical_matches_torch():
    import torch
    from transpiler.runtime.keras.distributions import Categorical
    import keras

    rng = np.random.default_rng(0)
    for shape in [(2,), (1, 2), (3, 5)]:
        p = rng.uniform(0.05, 1.0, size=shape).astype("float32")
        for kwargs in ({"probs": p}, {"logits": np.log(p)}):
            t = torch.distributions.Categorical(**{k: torch.tensor(v) for k, v in kwargs.items()})
            k = Categorical(**kwargs)
            a = t.sample()
            assert tuple(keras.ops.convert_to_numpy(k.sample()).shape) == tuple(a.shape)
            np.testing.assert_allclose(keras.ops.convert_to_numpy(k.log_prob(a.numpy())), t.log_prob(a).numpy(),
                                       rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(keras.ops.convert_to_numpy(k.entropy()), t.entropy().numpy(),
                                       rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(keras.ops.convert_to_numpy(k.probs), t.probs.numpy(), rtol=1e-6)


UPDATE_GIVEN_THE_LOSS = '''
import numpy as np
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def update(loss):
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


x = torch.from_numpy(np.random.default_rng(0).normal(size=(16, 3)).astype("float32"))
y = x.sum(dim=1, keepdim=True)
for step in range(3):
    loss = ((model(x) - y) ** 2).mean()
    update(loss)
    print(f"step {step} loss {loss.item():.4f}")
'''


def test_update_function_given_the_loss_differentiates_the_callers_forward_pass(tmp_path):
    """``update(loss)`` steps on a loss its caller computed: a tape opened in ``update`` would
    hold no forward pass (Keras refuses the None gradients); the program's tape has them."""
    result = translate(UPDATE_GIVEN_THE_LOSS, "update.py", "keras")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "autograd_tape.gradient(loss, model.trainable_variables)" in result.text
    done = _run(result.text, tmp_path)
    losses = [float(line.split()[-1]) for line in done.stdout.splitlines() if line.startswith("step")]
    assert len(losses) == 3 and losses[2] < losses[0], done.stdout
