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


def test_causal_mask_of_a_run_time_length_matches_keras():
    """keras.io's Transformer decoders: ``ops.arange`` of the sequence length known only at run
    time, reshaped to (1, n, n) and tiled over the batch (a new axis 0 before an axis of unknown
    size, a broadcast keeping that size)."""
    source = (GOLDEN / "causal_mask_runtime_length" / "input.py").read_text()
    assert stubs(source) == []
    assert max_error(check_source(source)) < 1e-5


def test_causal_mask_tiled_by_a_concatenated_multiple_runs():
    """The same mask tiled by ``ops.concatenate([ops.expand_dims(batch_size, -1), [1, 1]])``
    (keras.io's neural machine translation decoder): no stub, and the module runs."""
    import torch
    from transpiler import verify

    source = (GOLDEN / "causal_mask_runtime_length" / "input.py").read_text().replace(
        "ops.tile(mask, [batch_size, 1, 1])",
        "ops.tile(mask, ops.concatenate([ops.expand_dims(batch_size, -1), ops.convert_to_tensor([1, 1])], axis=0))")
    assert "ops.concatenate" in source
    result = translate(source, "case.py")
    assert [d.message for d in result.stubs] == []
    model = verify.load_generated(result.text).build_model()
    assert tuple(model(torch.randn(3, 5, 8)).shape) == (3, 5, 4)


MODEL_AS_LAYER_WITH_LOGITS = """
import keras
from keras import layers

enc_in = keras.Input(shape=(4,), name="enc_in")
enc_out = layers.Dense(3)(enc_in)
encoder = keras.Model(enc_in, enc_out)
dec_in = keras.Input(shape=(4,), name="dec_in")
state = keras.Input(shape=(3,), name="state")
x = layers.Dense(3)(dec_in)
x = layers.Add()([x, state])
probs = layers.Dense(5, activation="softmax")(x)
decoder = keras.Model([dec_in, state], probs)
full = keras.Model([enc_in, dec_in], decoder([dec_in, enc_out]))
full.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
"""


def test_model_used_as_a_layer_ending_in_the_logits_softmax():
    """keras.io's neural machine translation: the decoder model, used as a layer, ends in the
    softmax the loss absorbs (return_logits). The decoder is inlined so the logits exist; the
    module structure cached before the logits were marked was reused (the call lost an argument
    and return_logits returned an input)."""
    import torch

    result = translate(MODEL_AS_LAYER_WITH_LOGITS, "case.py")
    assert [d.message for d in result.stubs] == []
    ns: dict = {}
    exec(compile(result.text.split("\nfull = Full()")[0], "gen", "exec"), ns)
    model = ns["Full"]()
    a, b = torch.randn(2, 4), torch.randn(2, 4)
    logits, probs = model(a, b, return_logits=True), model(a, b)
    assert logits.shape == probs.shape == (2, 5)
    assert torch.allclose(torch.softmax(logits, -1), probs, atol=1e-6)


def test_attention_mask_of_a_model_used_as_a_layer_stays_a_mask():
    """A model used as a layer calls its MultiHeadAttention again on the node's inputs: the
    third one is the attention_mask (key is value), never a key."""
    source = (GOLDEN / "causal_mask_runtime_length" / "input.py").read_text() + textwrap.dedent("""
        inner = build_model()
        outer_in = keras.Input(shape=(None, 8))
        outer = keras.Model(outer_in, inner(layers.Dense(8)(outer_in)))
        """)
    result = translate(source, "case.py")
    assert [d.message for d in result.stubs] == []
    outer = next(m for m in result.program.models if m.var == "outer")
    roles = [n.attrs["extra_inputs"] for n in outer.graph.nodes if n.op == "multi_head_attention"]
    assert roles == [("attention_mask",)]
