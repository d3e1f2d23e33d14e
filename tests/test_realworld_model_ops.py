"""Tensor ops of real keras.io models (issue 18, item 4): sinusoidal embeddings, ...

Each class of problem is a small program written here (the keras.io scripts are never copied
into the project); the translation must have no stub and compute Keras' numbers."""

from __future__ import annotations

import pathlib
import textwrap

from harness import check_source, max_error
from transpiler.translate import translate

GOLDEN = pathlib.Path(__file__).parent / "golden"


def stubs(source: str) -> list[str]:
    return [d.message for d in translate(textwrap.dedent(source), "case.py").stubs]


def test_sinusoidal_time_embedding_matches_keras():
    """tf.sin / tf.math.sin / keras.ops.cos on a layer's tensors (ddpm's TimeEmbedding)."""
    source = (GOLDEN / "sinusoidal_time_embedding" / "input.py").read_text()
    assert stubs(source) == []
    assert max_error(check_source(source)) < 1e-5
