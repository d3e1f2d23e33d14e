"""Sizes of a sequence axis known only when the program runs, inside a layer's call()
(issue 18 items 1 and 4; keras.io ner_transformers, neural_machine_translation_with_transformer,
text_generation_with_miniature_gpt).

``ops.shape(x)[-1]`` on a sequence of any length (``Input(shape=(None,))``) is the run-time
size of that axis; ``ops.arange`` up to it is the ``arange_like`` op (``torch.arange(x.shape[1],
device=x.device)`` in ``forward``). Numeric tests compare the generated module with Keras on the
same weights at two lengths.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from transpiler.translate import translate

POSITIONS = '''
import keras
from keras import layers, ops


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, inputs):
        length = {length}
        positions = {positions}
        return self.token_emb(inputs) + self.pos_emb(positions)


def build_model():
    inputs = keras.Input(shape=(None,), dtype="int32")
    x = TokenAndPositionEmbedding(40, 50, 8)(inputs)
    return keras.Model(inputs, layers.Dense(3)(x))
'''

CASES = {
    "ops_shape": ("ops.shape(inputs)[-1]", "ops.arange(0, length, 1)"),
    "start_stop_step": ("ops.shape(inputs)[-1]", "ops.arange(start=0, stop=length, step=1)"),
    "tf_shape_range": ("tf.shape(inputs)[1]", "tf.range(start=0, limit=length, delta=1)"),
    "stop_only": ("keras.ops.shape(inputs)[1]", "ops.arange(length)"),
}


def _source(case: str) -> str:
    length, positions = CASES[case]
    source = POSITIONS.replace("{length}", length).replace("{positions}", positions)
    return source.replace("import keras\n", "import keras\nimport tensorflow as tf\n", 1)


def _compare(source: str, lengths=(5, 11)) -> float:
    import keras

    from harness import load_source_module, randomize_keras_weights
    from transpiler import verify

    result = translate(source, "case.py")
    assert [d.message for d in result.stubs] == []
    md = result.program.models[0]
    keras.backend.clear_session()
    kmodel = load_source_module(source).build_model()
    randomize_keras_weights(kmodel, 0)
    tmodel = verify.load_generated(result.text).build_model()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    worst = 0.0
    for n in lengths:
        tokens = np.random.RandomState(n).randint(0, 50, size=(3, n)).astype("int32")
        worst = max(worst, max(c.max_abs for c in verify.run_both(kmodel, tmodel, md.graph, [tokens])))
    return worst


@pytest.mark.parametrize("case", sorted(CASES))
def test_positions_up_to_a_run_time_length_match_keras(case):
    assert _compare(_source(case)) <= 1e-5


def test_positions_up_to_a_run_time_length_are_computed_in_forward():
    text = translate(_source("ops_shape"), "case.py").text
    assert "positions = torch.arange(inputs.shape[1], device=inputs.device)" in text
    assert "register_buffer" not in text  # (no constant of the model: its length varies)


def test_keras_ops_backend_shape_is_read_as_ops_shape():
    """keras.io ner_transformers calls ``keras.ops.backend.shape`` (older Keras 3 exposed it; the
    Keras here has no ``keras.ops.backend``, so there is no Keras run to compare with)."""
    source = _source("ops_shape").replace("ops.shape(inputs)[-1]", "keras.ops.backend.shape(inputs)[-1]")
    result = translate(source, "case.py")
    assert [d.message for d in result.stubs] == []
    assert "positions = torch.arange(inputs.shape[1], device=inputs.device)" in result.text


def test_a_stepped_arange_keeps_its_start_and_step():
    from transpiler.ir.graph import Graph
    from transpiler.printers.torch.ops import emit as torch_emit

    g = Graph("g")
    x = g.new_value("x", shape=(None, None), dtype="int32")
    node = g.add_node("arange_like", "positions", [x], 1, attrs={"axis": 1, "start": 1, "step": 2, "dtype": "int32"})
    assert torch_emit(node).call(["x"]) == "torch.arange(1, x.shape[1], 2, device=x.device)"
    node = g.add_node("arange_like", "p2", [x], 1, attrs={"axis": 1, "dtype": "float32"})
    assert torch_emit(node).call(["x"]) == "torch.arange(x.shape[1], device=x.device, dtype=torch.float32)"


def test_indexing_an_axis_of_run_time_size_is_a_stub_not_a_crash():
    """``x[:, 1::2]`` on a sequence of any length: refused with a reason (it raised TypeError)."""
    source = _source("ops_shape").replace("self.token_emb(inputs) +", "self.token_emb(inputs[:, 1::2]) +")
    result = translate(source, "case.py")
    assert any("known only when the program runs" in d.message for d in result.stubs)


def test_arange_like_shape_rule():
    from transpiler.ir.graph import Graph
    from transpiler.ir.shapes import infer_node

    g = Graph("g")
    x = g.new_value("x", shape=(None, None, 4), dtype="float32")
    node = g.add_node("arange_like", "positions", [x], 1, attrs={"axis": 1, "start": 0, "step": 1, "dtype": "int32"})
    infer_node(node)
    assert node.outputs[0].shape == (None,)
    y = g.new_value("y", shape=(None, 9, 4), dtype="float32")
    node = g.add_node("arange_like", "p2", [y], 1, attrs={"axis": 1, "start": 1, "step": 3, "dtype": "int32"})
    infer_node(node)
    assert node.outputs[0].shape == (3,)


def test_keras_emitter_for_arange_like():
    from transpiler.ir.graph import Graph
    from transpiler.printers.keras.ops import emit as keras_emit

    g = Graph("g")
    x = g.new_value("x", shape=(None, None), dtype="int32")
    node = g.add_node("arange_like", "positions", [x], 1, attrs={"axis": 1, "start": 2, "step": 3, "dtype": "int32"})
    assert keras_emit(node).call(["x"]) == "keras.ops.arange(2, keras.ops.shape(x)[1], 3)"


CAUSAL = '''
import keras
from keras import layers, ops


def causal_attention_mask(batch_size, n_dest, n_src, dtype):
    i = ops.arange(n_dest)[:, None]
    j = ops.arange(n_src)
    m = i >= j - n_src + n_dest
    mask = ops.cast(m, dtype)
    mask = ops.reshape(mask, [1, n_dest, n_src])
    mult = ops.concatenate(
        [ops.expand_dims(batch_size, -1), ops.convert_to_tensor([1, 1])], 0
    )
    return ops.tile(mask, mult)


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.att = layers.MultiHeadAttention(num_heads, embed_dim)

    def call(self, inputs):
        input_shape = ops.shape(inputs)
        batch_size = input_shape[0]
        seq_len = input_shape[1]
        causal_mask = causal_attention_mask(batch_size, seq_len, seq_len, "bool")
        return self.att(inputs, inputs, attention_mask=causal_mask)


def build_model():
    inputs = keras.Input(shape=(6, 8))
    x = TransformerBlock(8, 2)(inputs)
    return keras.Model(inputs, layers.Dense(3)(x))
'''


def test_causal_mask_tiled_over_the_batch_matches_keras():
    """keras.io text_generation_with_miniature_gpt's causal_attention_mask: a (1, n, n) mask made
    from ops.arange, reshaped (a size-1 axis inserted) and tiled by [batch_size, 1, 1] (a shape
    vector: ops.expand_dims of the batch size concatenated with [1, 1]): one mask per sample.
    The Keras here refuses ops.tile with symbolic multiples while building a Functional model
    (it iterates over them), so the reference is the same program with ops.broadcast_to."""
    import keras

    from harness import load_source_module, randomize_keras_weights
    from transpiler import verify

    result = translate(CAUSAL, "case.py")
    assert [d.message for d in result.stubs] == []
    assert ".expand(inputs.shape[0], 6, 6)" in result.text
    md = result.program.models[0]
    reference = CAUSAL.replace("return ops.tile(mask, mult)",
                               "return ops.broadcast_to(mask, (batch_size, n_dest, n_src))")
    keras.backend.clear_session()
    kmodel = load_source_module(reference).build_model()
    randomize_keras_weights(kmodel, 0)
    tmodel = verify.load_generated(result.text).build_model()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    x = np.random.RandomState(0).standard_normal((3, 6, 8)).astype("float32")
    assert max(c.max_abs for c in verify.run_both(kmodel, tmodel, md.graph, [x])) <= 1e-5


def test_reshaping_a_constant_other_than_by_unit_axes_is_a_stub():
    source = CAUSAL.replace("ops.reshape(mask, [1, n_dest, n_src])", "ops.reshape(mask, [n_dest * n_src])")
    result = translate(source, "case.py")
    assert any("inserting size-1 axes" in d.message for d in result.stubs)
