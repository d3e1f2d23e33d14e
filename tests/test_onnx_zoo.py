"""The light model-zoo graphs inside the onnx wheel (Caffe2 exports at opset 9, weights made by
ConstantOfShape) through the ONNX frontend to both targets, against onnxruntime.

The default run takes a small sample (SqueezeNet with random weights, at opset 9 and at the
current opset); ``-m onnx_zoo`` runs all 9 graphs (bench/onnx_zoo.py prints the table)."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))

from onnx_harness import compare  # noqa: E402
from onnx_zoo import randomized, zoo_paths  # noqa: E402

ZOO = zoo_paths()


def _variant(name: str, variant: str, tmp_path) -> str:
    import onnx

    if variant == "shipped":
        return ZOO[name]
    opset = onnx.defs.onnx_opset_version() if variant == "random-opset" else None
    return randomized(ZOO[name], str(tmp_path / f"{name}_{variant}.onnx"), seed=0, opset=opset)


def _check(name: str, variant: str, target: str, tmp_path) -> None:
    result = compare(_variant(name, variant, tmp_path), target, seed=0)
    assert not result.stubs, result.stubs
    assert result.max_abs <= 1e-4 * max(1.0, result.scale), (result.max_abs, result.scale)
    assert result.top1 is not False


def test_zoo_has_the_nine_light_models():
    assert len(ZOO) == 9


@pytest.mark.parametrize("variant, target", [("random", "pytorch"), ("random", "keras"),
                                             ("random-opset", "pytorch")])
def test_zoo_sample_squeezenet_matches_onnxruntime(tmp_path, variant, target):
    _check("squeezenet", variant, target, tmp_path)


@pytest.mark.onnx_zoo
@pytest.mark.parametrize("target", ["pytorch", "keras"])
@pytest.mark.parametrize("variant", ["shipped", "random", "random-opset"])
@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_model_matches_onnxruntime(tmp_path, name, variant, target):
    """The whole zoo (about 15 minutes): deselected unless ``-m onnx_zoo`` (tests/conftest.py)."""
    _check(name, variant, target, tmp_path)
