"""The PyTorch corpus (corpus/torch): every script builds, runs forward/backward, imports
only torch/numpy/stdlib, and trains to completion as `python script.py`.

Input convention (see corpus/torch/README.md): INPUT_SHAPE is one example without the
batch dimension in torch layout; INPUT_DTYPE is "float32" unless "int64" (token ids in
[0, VOCAB_SIZE)); an extra builder build_<name>() uses <NAME>_INPUT_SHAPE/_INPUT_DTYPE.
"""

from __future__ import annotations

import ast
import glob
import importlib.util
import inspect
import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn
from corpus_sample import sampled  # (every other case; the rest under -m corpus_all)
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_DIR = os.path.join(ROOT, "corpus", "torch")
SCRIPTS = sorted(p for p in glob.glob(os.path.join(CORPUS_DIR, "*.py"))
                 if not os.path.basename(p).startswith("_"))
REQUIRED = {"mnist_cnn", "mlp_regression", "lstm_classifier", "gru_regression", "vae", "dcgan",
            "resnet_small", "text_classifier", "custom_param"}
ALLOWED_ROOTS = {"torch", "numpy"} | set(sys.stdlib_module_names)
FORBIDDEN_ROOTS = {"keras", "tensorflow", "tf_keras", "torchvision", "jax", "flax",
                   "urllib", "http", "socket", "ftplib", "subprocess"}  # nothing is downloaded
MAX_PARAMS = 120_000
BATCH = 3
RUN_TIMEOUT = 180  # seconds; scripts take a few seconds alone, more on a loaded machine


def _name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _tree(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as fh:
        return ast.parse(fh.read(), path)


_MODULES: dict[str, object] = {}


def _load(path: str):
    name = _name(path)
    if name not in _MODULES:
        spec = importlib.util.spec_from_file_location(f"torch_corpus_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[name] = module
    return _MODULES[name]


def _builders(path: str) -> list[tuple[str, str]]:
    """(builder function, constant prefix) pairs: build_model -> "", build_foo -> "FOO_"."""
    out = []
    for node in _tree(path).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("build_"):
            suffix = node.name[len("build_"):]
            out.append((node.name, "" if suffix == "model" else suffix.upper() + "_"))
    return out


BUILDER_CASES = [pytest.param(p, fn, prefix, id=f"{_name(p)}.{fn}")
                 for p in SCRIPTS for fn, prefix in _builders(p)]


def _example_input(module, prefix: str, batch: int = BATCH) -> torch.Tensor:
    shape = getattr(module, prefix + "INPUT_SHAPE")
    dtype = getattr(module, prefix + "INPUT_DTYPE", "float32")
    assert isinstance(shape, tuple) and all(isinstance(d, int) and d > 0 for d in shape), shape
    if dtype == "int64":
        return torch.randint(0, module.VOCAB_SIZE, (batch, *shape), dtype=torch.int64)
    assert dtype == "float32", dtype
    return torch.randn(batch, *shape)


def _outputs(out) -> list[torch.Tensor]:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    assert outs and all(isinstance(t, torch.Tensor) for t in outs), type(out)
    return outs


def test_at_least_eight_scripts_and_the_required_ones():
    names = {_name(p) for p in SCRIPTS}
    assert len(names) >= 8
    assert REQUIRED <= names, REQUIRED - names


@pytest.mark.parametrize("path", SCRIPTS, ids=_name)
def test_imports_only_torch_numpy_and_stdlib(path):
    tree = _tree(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots = {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import"
            roots = {(node.module or "").split(".")[0]}
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            called = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            assert called not in {"__import__", "import_module"}, "dynamic import"
            continue
        else:
            continue
        assert not roots & FORBIDDEN_ROOTS, ast.unparse(node)
        assert roots <= ALLOWED_ROOTS, ast.unparse(node)


@pytest.mark.parametrize("path", SCRIPTS, ids=_name)
def test_script_shape(path):
    """Docstring, a module-level build_model and INPUT_SHAPE, training kept under __main__."""
    tree = _tree(path)
    assert ast.get_docstring(tree), "module docstring"
    top_names = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                 if isinstance(t, ast.Name)}
    assert "INPUT_SHAPE" in top_names
    assert any(isinstance(n, ast.FunctionDef) and n.name == "build_model" for n in tree.body)
    assert any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body)
    text = ast.unparse(tree)
    assert "torch.manual_seed(0)" in text


@pytest.mark.parametrize("path,builder,prefix", BUILDER_CASES)
def test_builder_forward_backward(path, builder, prefix):
    module = _load(path)
    build = getattr(module, builder)
    params = inspect.signature(build).parameters.values()
    assert all(p.default is not inspect.Parameter.empty for p in params), "defaults only"

    torch.manual_seed(0)
    model = build()
    assert isinstance(model, nn.Module)
    n_params = sum(p.numel() for p in model.parameters())
    assert 0 < n_params <= MAX_PARAMS, n_params

    x = _example_input(module, prefix)
    model.eval()
    with torch.no_grad():
        outs = _outputs(model(x))
    for t in outs:
        assert t.shape[0] == BATCH, t.shape
        assert torch.isfinite(t).all()

    # train mode: a backward pass reaches every trainable parameter
    model.train()
    loss = sum(t.float().pow(2).mean() for t in _outputs(model(x)))
    loss.backward()
    missing = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
    assert not missing, missing


@pytest.mark.parametrize("path,builder,prefix", BUILDER_CASES)
def test_builder_state_dict_round_trip(path, builder, prefix):
    module = _load(path)
    build = getattr(module, builder)
    torch.manual_seed(0)
    trained, fresh = build(), build()
    fresh.load_state_dict(trained.state_dict())
    trained.eval()
    fresh.eval()
    x = _example_input(module, prefix)
    with torch.no_grad():
        torch.manual_seed(1)  # vae samples in forward even in eval mode
        a = _outputs(trained(x))
        torch.manual_seed(1)
        b = _outputs(fresh(x))
    for ta, tb in zip(a, b):
        assert torch.equal(ta, tb)


def test_dcgan_generator_feeds_discriminator():
    module = _load(os.path.join(CORPUS_DIR, "dcgan.py"))
    torch.manual_seed(0)
    netG, netD = module.build_model(), module.build_discriminator()
    netG.eval()
    netD.eval()
    with torch.no_grad():
        fake = netG(torch.randn(BATCH, *module.INPUT_SHAPE))
        assert tuple(fake.shape[1:]) == module.DISCRIMINATOR_INPUT_SHAPE
        assert fake.abs().max() <= 1.0  # Tanh
        assert netD(fake).shape == (BATCH,)


@pytest.mark.slow
@pytest.mark.parametrize("path", sampled([pytest.param(p, id=_name(p)) for p in SCRIPTS]))
def test_script_runs_to_completion(path, tmp_path):
    env = dict(os.environ)
    # one thread each: the suite shares two cores and oversubscribed RNNs crawl
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
    env.pop("PYTHONPATH", None)
    proc = program_runner.run([sys.executable, path], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=RUN_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip(), "prints its progress"
    assert "Traceback" not in proc.stderr
    assert not list(tmp_path.iterdir()), "writes nothing into the working directory"
