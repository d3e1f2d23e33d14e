"""Every corpus script: transpiles, imports no Keras, and its model is numerically equal."""

from __future__ import annotations

import ast
import glob
import os

import pytest

from harness import check_source, max_error

from transpiler.translate import translate
from corpus_sample import sampled  # (every other case; the rest under -m corpus_all)

ROOT = os.path.dirname(os.path.dirname(__file__))
CORPUS = sorted(p for p in glob.glob(os.path.join(ROOT, "corpus", "keras", "*.py"))
                if not p.endswith("_torch.py"))  # outputs a user may have written beside them
#: image CNNs whose generated forward must contain no runtime permute/transpose
CNNS = {"mnist_cnn", "resnet_small", "unet_small", "mobilenet_like", "odd_sizes", "multi_input"}


def _name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def test_corpus_has_at_least_twelve_scripts():
    assert len(CORPUS) >= 12


@pytest.mark.parametrize("path", sampled([pytest.param(p, id=_name(p)) for p in CORPUS]))
def test_corpus_output_imports_no_keras(path):
    result = translate(_read(path), path)
    tree = ast.parse(result.text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots = {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            roots = {(node.module or "").split(".")[0]}
        else:
            continue
        assert not roots & {"keras", "tensorflow", "tf_keras"}, ast.unparse(node)
    assert "import torch" in result.text


@pytest.mark.parametrize("path", sampled([pytest.param(p, id=_name(p)) for p in CORPUS]))
def test_corpus_builder_kept_under_its_name(path):
    result = translate(_read(path), path)
    tree = ast.parse(result.text)
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "build_model" in functions
    assert any(isinstance(n, ast.ClassDef) for n in tree.body)


@pytest.mark.parametrize("path", sampled([pytest.param(p, id=_name(p)) for p in CORPUS], every=4))
def test_corpus_model_numerically_equal(path, record_property):
    checked = check_source(_read(path), path=path, batch=4)
    record_property("max_abs_error", max_error(checked))  # (per corpus model, in the junit report)
    assert max_error(checked) <= 1e-4
    assert checked.keras_params == checked.torch_params


@pytest.mark.parametrize("path", [p for p in CORPUS if _name(p) in CNNS], ids=_name)
def test_corpus_cnn_has_no_runtime_permute(path):
    result = translate(_read(path), path)
    for md in result.program.models:
        assert not [n for n in md.graph.nodes if n.op == "transpose"], md.class_name
    forward = result.text[result.text.index("def forward"):]
    for word in (".permute(", ".transpose(", ".movedim("):
        assert word not in forward.split("\ndef ")[0]
