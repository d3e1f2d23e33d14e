"""Checkpoints through files, both directions, and every way a file can be wrong.

Per op: a Keras model with random weights is saved as ``.weights.h5``, converted to
safetensors through the IR (no Keras involved in reading), loaded into the generated
module with ``strict=True`` and run against Keras; then the torch state_dict is saved
with ``torch.save``, converted back to a Keras 3 ``.weights.h5`` and loaded with
``model.load_weights``: every Keras weight must come back bit for bit.
"""

from __future__ import annotations

import os
import pickle
import shutil
import zipfile

import numpy as np
import pytest
import torch  # before TensorFlow (see conftest.py)
import keras
from safetensors.torch import load_file

from harness import load_source_module, randomize_keras_weights
from transpiler import verify
from transpiler.ir import ops as ops_table
from transpiler.ir.params import expected_shapes
from transpiler.translate import translate
from transpiler.weights.convert import keras_layer_order, keras_to_torch, torch_to_keras
from transpiler.weights.errors import CheckpointError
from transpiler.weights.keras_files import KerasCheckpoint
from transpiler.weights.mapping import source_layers, torch_plan
from transpiler.weights.safetensors_io import SafetensorsFile
from corpus_sample import sampled  # (every other case; the rest under -m corpus_all)

CORPUS = os.path.join(os.path.dirname(__file__), "..", "corpus", "keras")
HEADER = "import keras\nfrom keras import layers\n\n\ndef build_model():\n"


def model_source(shape, *body, dtype=None) -> str:
    dt = f", dtype={dtype!r}" if dtype else ""
    lines = [f"inp = keras.Input(shape={shape!r}{dt})", *body, "return keras.Model(inp, out)"]
    return HEADER + "".join(f"    {line}\n" for line in lines)


def build(source: str, seed: int = 0):
    result = translate(source, "case.py")
    md = next(m for m in result.program.models if m.builder == "build_model")
    keras.backend.clear_session()
    kmodel = load_source_module(source).build_model()
    verify.ensure_built(kmodel, md.graph)  # a subclassed model makes its weights on its first call
    randomize_keras_weights(kmodel, seed)
    return result, md.graph, kmodel


def roundtrip(source: str, tmp_path, tol: float = 1e-5, fmt: str = ".weights.h5") -> float:
    result, graph, kmodel = build(source)
    ckpt = str(tmp_path / f"m{fmt}")
    (kmodel.save_weights if fmt == ".weights.h5" else kmodel.save)(ckpt)
    out = str(tmp_path / "m.safetensors")
    keras_to_torch(graph, ckpt, out)
    generated = verify.load_generated(result.text)
    tmodel = generated.build_model()
    state = load_file(out)
    assert list(state) == list(tmodel.state_dict()), "keys equal build_model().state_dict(), in order"
    tmodel.load_state_dict(state, strict=True)
    inputs = verify.random_inputs(graph, 3, 0)
    err = max(c.max_abs for c in verify.run_both(kmodel, tmodel, graph, inputs))
    assert err <= tol
    # back: torch .pt → Keras .weights.h5 → load_weights, bit for bit
    pt = str(tmp_path / "m.pt")
    torch.save(tmodel.state_dict(), pt)
    back = str(tmp_path / "back.weights.h5")
    if graph.from_keras.user_classes:  # not written yet for subclassed models: said, not guessed
        with pytest.raises(CheckpointError, match="subclassed model"):
            torch_to_keras(graph, pt, back)
        return err
    torch_to_keras(graph, pt, back)
    keras.backend.clear_session()
    fresh = load_source_module(source).build_model()
    fresh.load_weights(back)
    for a, b in zip(kmodel.weights, fresh.weights):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=a.path)
    return err


# Every op of the table that holds params, with the variants that change the mapping.
OP_CASES = {
    "dense": [((6,), "out = layers.Dense(4)(inp)"), ((6,), "out = layers.Dense(4, use_bias=False)(inp)")],
    "conv1d": [((9, 3), 'out = layers.Conv1D(4, 3, strides=2, padding="same")(inp)')],
    "conv2d": [((7, 6, 3), 'out = layers.Conv2D(5, (3, 2), padding="same")(inp)'),
               ((7, 6, 4), "out = layers.Conv2D(6, 3, groups=2)(inp)")],
    "conv3d": [((5, 6, 4, 2), "out = layers.Conv3D(3, (2, 3, 2))(inp)")],
    "conv_transpose1d": [((6, 3), "out = layers.Conv1DTranspose(4, 3, strides=2)(inp)")],
    "conv_transpose2d": [((5, 6, 3), 'out = layers.Conv2DTranspose(4, (3, 2), strides=2, padding="same")(inp)')],
    "depthwise_conv2d": [((7, 6, 3), "out = layers.DepthwiseConv2D(3, depth_multiplier=2)(inp)")],
    "separable_conv2d": [((7, 6, 3), "out = layers.SeparableConv2D(5, 3, depth_multiplier=2)(inp)")],
    "batch_norm": [((5, 6, 4), "out = layers.BatchNormalization()(inp)"),
                   ((5, 6, 4), "out = layers.BatchNormalization(center=False)(inp)"),
                   ((5, 6, 4), "out = layers.BatchNormalization(scale=False)(inp)"),
                   ((5, 6, 4), "out = layers.BatchNormalization(center=False, scale=False)(inp)")],
    "layer_norm": [((5, 6, 4), "out = layers.LayerNormalization()(inp)"),
                   ((5, 6, 4), "out = layers.LayerNormalization(axis=[1, 2, 3])(inp)")],
    "prelu": [((5, 6, 4), "out = layers.PReLU()(inp)"), ((5, 6, 4), "out = layers.PReLU(shared_axes=[1, 2])(inp)")],
    "embedding": [((7,), "out = layers.Embedding(30, 5)(inp)")],
    "simple_rnn": [((5, 4), "out = layers.SimpleRNN(3, return_sequences=True)(inp)")],
    "lstm": [((5, 4), "out = layers.LSTM(3)(inp)"), ((5, 4), "out = layers.LSTM(3, use_bias=False)(inp)")],
    "gru": [((5, 4), "out = layers.GRU(3)(inp)")],
    "conv_lstm2d": [((3, 5, 4, 2), 'out = layers.ConvLSTM2D(3, (3, 2), padding="same")(inp)'),
                    ((3, 5, 4, 2), "out = layers.ConvLSTM2D(3, 2, use_bias=False, return_sequences=True)(inp)")],
    "bidirectional": [((5, 4), "out = layers.Bidirectional(layers.LSTM(3))(inp)"),
                      ((5, 4), 'out = layers.Bidirectional(layers.GRU(3), merge_mode="sum")(inp)')],
    # nn.MultiheadAttention's packed in_proj_weight, then the per-projection form
    "multi_head_attention": [((5, 8), "out = layers.MultiHeadAttention(2, 4)(inp, inp)"),
                             ((5, 8), "out = layers.MultiHeadAttention(2, 4, use_bias=False)(inp, inp)"),
                             ((5, 8), "out = layers.MultiHeadAttention(3, 2, value_dim=5, output_shape=7)(inp, inp)")],
    "attention": [((5, 4), 'out = layers.Attention(use_scale=True, score_mode="concat")([inp, inp])')],
    "additive_attention": [((5, 4), "out = layers.AdditiveAttention()([inp, inp])")],
    "rms_norm": [((5, 6), "out = layers.RMSNormalization()(inp)")],
    "group_norm": [((5, 6, 4), "out = layers.GroupNormalization(2)(inp)"),
                   ((5, 6, 4), "out = layers.GroupNormalization(2, center=False)(inp)")],
    "normalization": [((5, 6, 4), "out = layers.Normalization()(inp)"),
                      ((5, 6, 4), "out = layers.Normalization(axis=(1, 3))(inp)")],
}
# Passes that rewrite weights: Flatten → Dense (rows), Dense → Reshape (columns)
PASS_CASES = [
    ((5, 6, 3), "x = layers.Conv2D(4, 3)(inp)", "x = layers.Flatten()(x)", "out = layers.Dense(5)(x)"),
    ((7,), "x = layers.Dense(24)(inp)", "x = layers.Reshape((2, 3, 4))(x)", "out = layers.Conv2D(2, 1)(x)"),
]


def _dtype(op):
    return "int32" if op == "embedding" else None


@pytest.mark.parametrize("op, case", [(op, c) for op, cases in OP_CASES.items() for c in cases],
                         ids=[f"{op}-{i}" for op, cases in OP_CASES.items() for i in range(len(cases))])
def test_op_roundtrip_through_files(op, case, tmp_path):
    shape, *body = case
    roundtrip(model_source(shape, *body, dtype=_dtype(op)), tmp_path)


@pytest.mark.parametrize("fmt", [".weights.h5", ".keras", ".h5"])
def test_attention_model_through_every_format(fmt, tmp_path):
    """MultiHeadAttention keeps its projections in sub-groups (query_dense, ...; legacy .h5:
    query/, key/, value/, attention_output/), Normalization an integer count."""
    roundtrip(model_source((6,), "x = layers.Embedding(4, 8, mask_zero=True)(inp)",
                           "x = layers.MultiHeadAttention(2, 4)(x, x)", "x = layers.Normalization()(x)",
                           "x = layers.MultiHeadAttention(3, 2, value_dim=5)(x, x)", "out = layers.LSTM(3)(x)",
                           dtype="int32"), tmp_path, fmt=fmt)


@pytest.mark.parametrize("fmt", [".weights.h5", ".keras", ".h5"])
def test_time_distributed_dense_through_every_format(fmt, tmp_path):
    """TimeDistributed(Dense) is the Dense on the sequence, its tensors under the wrapper
    (``time_distributed/layer/vars``; legacy .h5: ``time_distributed/dense/kernel``); was a
    stub (no model translated), and the way back writes them where load_weights looks."""
    roundtrip(model_source((5, 4), "x = layers.LSTM(6, return_sequences=True)(inp)",
                           "x = layers.TimeDistributed(layers.Dense(3, activation='relu'))(x)",
                           "out = layers.TimeDistributed(layers.Dense(2), name='per_step')(x)"), tmp_path, fmt=fmt)


SEQ2SEQ = {  # encoder states → the decoder's initial_state (Keras' character-level seq2seq)
    "lstm": ("_, h, c = layers.LSTM(6, return_state=True)(enc)",
             "y = layers.LSTM(6, return_sequences=True)(dec, initial_state=[h, c])"),
    "gru": ("_, h = layers.GRU(6, return_state=True)(enc)", "y = layers.GRU(6, return_sequences=True)(dec, initial_state=h)"),
}


@pytest.mark.parametrize("fmt", [".weights.h5", ".keras", ".h5"])
@pytest.mark.parametrize("cell", sorted(SEQ2SEQ))
def test_seq2seq_initial_state_through_every_format(cell, fmt, tmp_path):
    """The decoder started from the encoder's states (was a stub): both RNNs' tensors map
    through the file and back; the states themselves hold no weights."""
    encoder, decoder = SEQ2SEQ[cell]
    lines = ["enc = keras.Input(shape=(7, 5))", "dec = keras.Input(shape=(6, 4))", encoder, decoder,
             "out = layers.Dense(4)(y)", "return keras.Model([enc, dec], out)"]
    roundtrip(HEADER + "".join(f"    {line}\n" for line in lines), tmp_path, fmt=fmt)


@pytest.mark.parametrize("case", PASS_CASES, ids=["flatten-dense", "dense-reshape"])
def test_pass_rewritten_weights_roundtrip(case, tmp_path):
    shape, *body = case
    roundtrip(model_source(shape, *body), tmp_path)


def test_every_op_with_params_has_a_file_case():
    with_params = {name for name, spec in ops_table.all_ops().items() if spec.params or spec.wraps}
    # a custom layer's add_weight needs a class: tests/test_subclass.py::test_add_weight_checkpoint_converts
    assert with_params - {"variable"} == set(OP_CASES)


@pytest.mark.parametrize("op, case", [(op, c) for op, cases in OP_CASES.items() for c in cases],
                         ids=[f"{op}-{i}" for op, cases in OP_CASES.items() for i in range(len(cases))])
def test_param_shapes_from_the_table_equal_keras(op, case):
    shape, *body = case
    _, graph, kmodel = build(model_source(shape, *body, dtype=_dtype(op)))
    for name, node in source_layers(graph).items():
        want = [tuple(w.shape) for w in kmodel.get_layer(name).weights]
        assert list(expected_shapes(node).values()) == want


# ---------------------------------------------------------------------------------
# The corpus, through the three Keras formats
# ---------------------------------------------------------------------------------
CORPUS_NAMES = sorted(f[:-3] for f in os.listdir(CORPUS) if f.endswith(".py"))


#: corpus scripts whose Keras model this test cannot save as the script builds it, with the reason
#: (strict: when the model can be saved, the xfail fails and the entry goes)
UNSAVED = {
    "text_lookup_classifier": "the converter cannot bind the run-time sizes of Net(vectorize_layer.vocabulary_size(), "
                              "...) from the checkpoint (CheckpointError: layer 'embedding' shapes)",
    "normalized_augmentation": "the Normalization state Keras adapts is not in the converted checkpoint, and "
                               "the torch → Keras writer refuses a model calling another Keras model as a layer "
                               "(data_augmentation: CheckpointError)",
    "lazy_composite_autoencoder": "a wrapper model Keras builds only on its first fit (never built here), "
                                  "without get_config (a whole-model save refuses it)",
    "mlp_block_factory": "the layers of a Sequential built by a factory and called on a tensor (create_mlp(...)(x)) "
                         "are not written under that submodel in the converted checkpoint: the torch → Keras "
                         "writer refuses such a model (CheckpointError: another Keras model called as a layer)",
}


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [".weights.h5", ".keras", ".h5"])
@pytest.mark.parametrize("name", sampled([pytest.param(n, marks=pytest.mark.xfail(reason=UNSAVED[n], strict=True))
                                          if n in UNSAVED else n for n in CORPUS_NAMES], every=4))
def test_corpus_checkpoint_roundtrip(name, fmt, tmp_path):
    with open(os.path.join(CORPUS, f"{name}.py")) as fh:
        source = fh.read()
    roundtrip(source, tmp_path, tol=1e-4, fmt=fmt)


def test_keras_layer_order_equals_keras(tmp_path):
    """The reverse writer keys layers as model.layers orders them (class name + a counter in
    that order): check the layers that hold weights on every corpus model (weightless
    layers may be folded away by the passes, e.g. a Permute pair; Keras needs no group
    for them)."""
    for name in CORPUS_NAMES:
        if name in UNSAVED:  # (a model of sub-models: Keras lists the sub-models, the graph their layers)
            continue  # (normalized_augmentation: its weighted Normalization lives in a Sequential sub-model)
        with open(os.path.join(CORPUS, f"{name}.py")) as fh:
            source = fh.read()
        _, graph, kmodel = build(source)
        if graph.from_keras.user_classes:
            continue  # a subclassed model's layers are its attributes: keras_layer_order is not used
        ours = [n.source_name for n in keras_layer_order(graph) if n.source_name in source_layers(graph)]
        theirs = [layer.name for layer in kmodel.layers if layer.weights]
        assert ours == theirs, name


# ---------------------------------------------------------------------------------
# Names saved in another process: Keras numbers its automatic names per process
# ---------------------------------------------------------------------------------
def test_layer_names_offset_by_other_models(tmp_path):
    source = model_source((6,), "x = layers.Dense(5)(inp)", "out = layers.Dense(3)(x)")
    result, graph, _ = build(source)
    keras.backend.clear_session()
    layers_before = [keras.layers.Dense(2) for _ in range(3)]  # noqa: F841 - take dense..dense_2
    kmodel = load_source_module(source).build_model()
    randomize_keras_weights(kmodel, 3)
    assert [layer.name for layer in kmodel.layers[1:]] == ["dense_3", "dense_4"]
    ckpt = str(tmp_path / "w.weights.h5")
    kmodel.save_weights(ckpt)
    out = str(tmp_path / "w.safetensors")
    report = keras_to_torch(graph, ckpt, out)
    # matched by path (layers/dense, layers/dense_1) as Keras' own loader does: the shifted
    # global names need no guess, so no warning (issue 22 item 9)
    assert not report.warnings
    tmodel = verify.load_generated(result.text).build_model()
    tmodel.load_state_dict(load_file(out), strict=True)
    inputs = verify.random_inputs(graph, 3, 0)
    assert max(c.max_abs for c in verify.run_both(kmodel, tmodel, graph, inputs)) <= 1e-5


# ---------------------------------------------------------------------------------
# Streaming: the chunk size changes nothing; keys and order are the module's
# ---------------------------------------------------------------------------------
def test_chunked_writes_are_identical(tmp_path):
    source = model_source((5, 6, 3), "x = layers.Conv2D(4, 3)(inp)", "x = layers.Flatten()(x)",
                          "x = layers.Dense(7)(x)", "out = layers.Dense(2)(x)")
    _, graph, kmodel = build(source)
    ckpt = str(tmp_path / "w.weights.h5")
    kmodel.save_weights(ckpt)
    a, b = str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors")
    keras_to_torch(graph, ckpt, a, chunk_bytes=1 << 24)
    keras_to_torch(graph, ckpt, b, chunk_bytes=8)
    with open(a, "rb") as fa, open(b, "rb") as fb:
        assert fa.read() == fb.read()
    assert SafetensorsFile(a).keys() == [e.key for e in torch_plan(graph)]


def test_pt_output(tmp_path):
    source = model_source((6,), "out = layers.Dense(3)(inp)")
    result, graph, kmodel = build(source)
    ckpt = str(tmp_path / "w.weights.h5")
    kmodel.save_weights(ckpt)
    out = str(tmp_path / "w.pt")
    keras_to_torch(graph, ckpt, out)
    tmodel = verify.load_generated(result.text).build_model()
    tmodel.load_state_dict(torch.load(out, weights_only=True), strict=True)


# ---------------------------------------------------------------------------------
# Wrong files: a clear CheckpointError, never a traceback from h5py/zipfile/pickle
# ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("small")
    source = model_source((6,), "x = layers.Dense(5, name='hidden')(inp)", "out = layers.Dense(3)(x)")
    _, graph, kmodel = build(source)
    paths = {}
    for fmt in (".weights.h5", ".keras", ".h5"):
        paths[fmt] = str(tmp / f"w{fmt}")
        (kmodel.save_weights if fmt == ".weights.h5" else kmodel.save)(paths[fmt])
    return graph, paths, tmp


@pytest.mark.parametrize("fmt", [".weights.h5", ".keras", ".h5"])
@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_truncated_keras_files(small, fmt, keep, tmp_path):
    graph, paths, _ = small
    bad = str(tmp_path / f"cut{fmt}")
    with open(paths[fmt], "rb") as fh:
        data = fh.read()
    with open(bad, "wb") as fh:
        fh.write(data[: int(len(data) * keep)])
    out = str(tmp_path / "o.safetensors")
    with pytest.raises(CheckpointError, match="corrupt|truncated"):
        keras_to_torch(graph, bad, out)
    assert not os.path.exists(out), "no half-written output"
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".transpile-")]


@pytest.mark.parametrize("content, match", [
    (b"", "empty"),
    (b"\x89HDF\r\n\x1a\n" + b"\0" * 200, "corrupt|truncated"),
    (b"hello, not a checkpoint at all", "not a Keras checkpoint"),
    (pickle.dumps({"a": 1}), "pickle"),
])
def test_garbage_files(small, content, match, tmp_path):
    graph = small[0]
    bad = str(tmp_path / "bad.weights.h5")
    with open(bad, "wb") as fh:
        fh.write(content)
    with pytest.raises(CheckpointError, match=match):
        keras_to_torch(graph, bad, str(tmp_path / "o.safetensors"))


def test_zip_without_weights(small, tmp_path):
    bad = str(tmp_path / "x.keras")
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("config.json", "{}")
    with pytest.raises(CheckpointError, match="model.weights.h5"):
        keras_to_torch(small[0], bad, str(tmp_path / "o.safetensors"))


def test_compressed_keras_member_is_read(small, tmp_path):
    """A .keras zip re-packed with deflate (not how Keras writes it) still reads."""
    graph, paths, _ = small
    packed = str(tmp_path / "deflated.keras")
    with zipfile.ZipFile(paths[".keras"]) as src, zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    a, b = str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors")
    keras_to_torch(graph, paths[".keras"], a)
    keras_to_torch(graph, packed, b)
    assert SafetensorsFile(a).to_dict().keys() == SafetensorsFile(b).to_dict().keys()
    for k, v in SafetensorsFile(a).to_dict().items():
        np.testing.assert_array_equal(v, SafetensorsFile(b).read(k))


def test_shape_mismatch_names_layer_and_shapes(small, tmp_path):
    source = model_source((6,), "x = layers.Dense(8, name='hidden')(inp)", "out = layers.Dense(3)(x)")
    _, other_graph, _ = build(source)
    _, paths, _ = small
    with pytest.raises(CheckpointError, match=r"'hidden'.*\(6, 5\).*\(6, 8\)"):
        keras_to_torch(other_graph, paths[".weights.h5"], str(tmp_path / "o.safetensors"))


def test_missing_layer_is_named(small, tmp_path):
    source = model_source((6,), "x = layers.Dense(5, name='hidden')(inp)", "x = layers.Dense(3)(x)",
                          "out = layers.Dense(2, name='extra')(x)")
    _, other_graph, _ = build(source)
    with pytest.raises(CheckpointError, match="'extra'"):
        keras_to_torch(other_graph, small[1][".weights.h5"], str(tmp_path / "o.safetensors"))


def test_tensor_count_mismatch(small, tmp_path):
    source = model_source((6,), "x = layers.Dense(5, name='hidden', use_bias=False)(inp)",
                          "out = layers.Dense(3)(x)")
    _, other_graph, _ = build(source)
    with pytest.raises(CheckpointError, match="'hidden'.*2 tensors.*expects 1"):
        keras_to_torch(other_graph, small[1][".weights.h5"], str(tmp_path / "o.safetensors"))


class _Payload:
    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_pickle_payload_is_refused_and_never_run(small, tmp_path):
    graph = small[0]
    marker = tmp_path / "pwned"
    payload = _Payload()
    payload.marker = str(marker)
    evil = str(tmp_path / "evil.pt")
    torch.save({"hidden.weight": payload}, evil)
    with pytest.raises(CheckpointError, match="refused"):
        torch_to_keras(graph, evil, str(tmp_path / "o.weights.h5"))
    assert not marker.exists()
    raw = str(tmp_path / "raw.pt")
    with open(raw, "wb") as fh:
        pickle.dump(payload, fh)
    with pytest.raises(CheckpointError, match="refused"):
        torch_to_keras(graph, raw, str(tmp_path / "o.weights.h5"))
    assert not marker.exists()


def test_torch_checkpoint_mismatch(small, tmp_path):
    graph = small[0]
    keys = [e.key for e in torch_plan(graph)]
    state = {k: torch.zeros(2) for k in keys}
    bad = str(tmp_path / "bad.pt")
    torch.save(state, bad)
    with pytest.raises(CheckpointError, match=r"shape \(2,\)"):
        torch_to_keras(graph, bad, str(tmp_path / "o.weights.h5"))
    torch.save({k: v for k, v in state.items() if k != keys[0]}, bad)
    with pytest.raises(CheckpointError, match="missing 1 tensor"):
        torch_to_keras(graph, bad, str(tmp_path / "o.weights.h5"))
    torch.save({**state, "stray.weight": torch.zeros(1)}, bad)
    with pytest.raises(CheckpointError, match="stray.weight"):
        torch_to_keras(graph, bad, str(tmp_path / "o.weights.h5"))


@pytest.mark.parametrize("damage", ["header", "truncate"])
def test_corrupt_safetensors(small, damage, tmp_path):
    graph, paths, _ = small
    good = str(tmp_path / "g.safetensors")
    keras_to_torch(graph, paths[".weights.h5"], good)
    with open(good, "rb") as fh:
        data = fh.read()
    bad = str(tmp_path / "b.safetensors")
    with open(bad, "wb") as fh:
        fh.write(data[:8] + b"#" + data[9:] if damage == "header" else data[:-10])
    with pytest.raises(CheckpointError, match="corrupt|truncated"):
        torch_to_keras(graph, bad, str(tmp_path / "o.weights.h5"))


def test_reader_lists_layers_by_name(small):
    _, paths, _ = small
    for fmt, path in paths.items():
        with KerasCheckpoint(path) as ck:
            named = {n: [tuple(t.shape) for t in layer.tensors] for n, layer in ck.layers.items() if layer.tensors}
        assert named == {"hidden": [(6, 5), (5,)], "dense": [(5, 3), (3,)]}, fmt


# ---------------------------------------------------------------------------------
# Lazy transforms: streamed in chunks, equal to the plain numpy formula
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize("step", [None, "permute_rows", "permute_cols"])
@pytest.mark.parametrize("transform", ["IDENTITY", "TRANSPOSE", "GRU_KERNEL"])
@pytest.mark.parametrize("chunk", [4, 64, 1 << 20])
def test_lazy_chunks_equal_numpy(step, transform, chunk):
    from transpiler.ir.transforms import Transform
    from transpiler.weights.transforms import Lazy, apply_lazy, param_transform_lazy

    rng = np.random.RandomState(0)
    rows, cols = 2 * 3 * 4, 9  # a Dense kernel after a (2, 3, 4) feature map; 9 = 3 GRU gates of 3
    a = rng.standard_normal((rows, cols)).astype("float32")
    expected = a
    x = Lazy(a)
    if step is not None:
        order = np.arange(rows if step == "permute_rows" else cols)
        if step == "permute_rows":
            order = order.reshape(2, 3, 4).transpose(2, 0, 1).reshape(-1)
            expected = a[order]
            x = param_transform_lazy((step, ((2, 3, 4), (2, 0, 1))), x)
        else:
            order = order.reshape(1, 1, 9).transpose(2, 0, 1).reshape(-1)  # the identity on (1, 1, 9)
            expected = a[:, order]
            x = param_transform_lazy((step, ((1, 1, 9), (2, 0, 1))), x)
    if transform == "TRANSPOSE":
        expected = expected.T
    elif transform == "GRU_KERNEL":
        z, r, h = np.split(expected.T, 3, axis=0)
        expected = np.concatenate([r, z, h], axis=0)
    out = apply_lazy(getattr(Transform, transform), x)
    streamed = np.concatenate([c.reshape(-1) for c in out.chunks(chunk)]).reshape(out.shape)
    np.testing.assert_array_equal(streamed, expected)
    np.testing.assert_array_equal(out.materialize(), expected)
