"""ONNX out (issue 20 item 3): a script's model → an ONNX file whose numbers are the source
framework's: every corpus model of both directions, given the same weights, computes under
onnxruntime what Keras / torch compute (1e-4), passes ``onnx.checker`` with full shape
inference; the CLI writes it atomically, refuses what it cannot export, and is deterministic."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import torch  # noqa: F401 (import torch before tensorflow in one process)
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from transpiler import onnx_out  # noqa: E402
from transpiler.ir import ops as ops_table  # noqa: E402
from transpiler.printers.onnx.builder import Unsupported, emitter_for  # noqa: E402
from transpiler.printers.onnx.export import export_graph  # noqa: E402
from transpiler.weights.canonical import node_params  # noqa: E402

KERAS_CORPUS = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, "corpus", "keras", "*.py"))
                      if not p.endswith(("_torch.py", "_keras.py")))
TORCH_CORPUS = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, "corpus", "torch", "*.py")))

#: ops of the table the ONNX printer does not emit yet, with the reason (a new op must be added
#: to the printer or here)
NOT_EMITTED = {"opaque_layer": "a custom layer the reader could not read: a marked stub in every output",
               "eye": "batched identity matrices (EyeLike on a Shape-sized ConstantOfShape) are not mapped yet",
               "unit_normalize": "UnitNormalization (ReduceL2 -> Max(eps) -> Div) is not mapped yet",
               "index_lookup": "StringLookup / IntegerLookup inside a model: strings are no ONNX tensor here, "
                               "and a vocabulary table (LabelEncoder of ai.onnx.ml) is not mapped yet",
               "slice_like": "a slice to another tensor's run-time size (Shape -> Gather -> Slice) is not mapped yet",
               "arange_like": "position ids up to another tensor's run-time size (Shape -> Gather -> Range) is not "
                              "mapped yet",
               "conv_lstm2d": "ConvLSTM2D: ONNX has no convolutional LSTM; a Loop over Conv nodes per time "
                              "step is not mapped yet"}


#: the corpus models the default run exports (all of them under ``-m onnx_out_corpus``)
SAMPLE = {"mnist_cnn", "lstm_classifier", "transformer_classifier", "vae", "bilstm_tagger"}


def _sampled(names):
    return [n if n in SAMPLE else pytest.param(n, marks=pytest.mark.onnx_out_corpus) for n in names]


def _run(model, feeds: list[np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: x for i, x in zip(session.get_inputs(), feeds)})


def test_every_op_has_an_emission_or_a_reason():
    missing = sorted(n for n in ops_table._TABLE if emitter_for(n) is None and n not in NOT_EMITTED)
    assert not missing, f"ops with no ONNX emission and no reason in NOT_EMITTED: {missing}"
    assert all(emitter_for(n) is None for n in NOT_EMITTED), "an op in NOT_EMITTED has an emission now"


@pytest.mark.slow
@pytest.mark.parametrize("name", _sampled(KERAS_CORPUS))
def test_keras_corpus_model_equals_keras(name):
    """The Keras corpus script's model, with randomised weights taken from the Keras model
    itself, gives Keras' outputs under onnxruntime (inputs and outputs channels-first)."""
    import keras

    from harness import randomize_keras_weights
    from transpiler.verify import (ensure_built, keras_canonical_params, load_generated, output_layouts,
                                   random_inputs, to_source_layout, to_target_layout)

    path = os.path.join(ROOT, "corpus", "keras", f"{name}.py")
    with open(path, encoding="utf-8") as fh:
        _keras_source_equals_keras(fh.read(), path, name)


def _keras_source_equals_keras(src: str, path: str, name: str) -> None:
    import keras

    from harness import randomize_keras_weights
    from transpiler.verify import (ensure_built, keras_canonical_params, load_generated, output_layouts,
                                   random_inputs, to_source_layout, to_target_layout)

    program = onnx_out.read_script(src, path, "keras")
    md = next(m for m in program.models if m.builder)
    keras.backend.clear_session()
    model = getattr(load_generated(src, f"onnx_out_{name}"), md.builder)()
    ensure_built(model, md.graph)
    randomize_keras_weights(model)
    not_emitted = sorted({n.op for n in md.graph.nodes} & set(NOT_EMITTED))
    if not_emitted:  # (csv_feature_classifier's StringLookup): refused by name, never a wrong graph
        from transpiler.printers.onnx.builder import Unsupported

        with pytest.raises(Unsupported, match="|".join(not_emitted)):
            export_graph(md.graph, node_params(md.graph, keras_canonical_params(md.graph, model)), dynamic_batch=True)
        return
    proto = export_graph(md.graph, node_params(md.graph, keras_canonical_params(md.graph, model)),
                         dynamic_batch=True)
    onnx.checker.check_model(proto, full_check=True)
    inputs = random_inputs(md.graph, 3)
    got = _run(proto, [to_target_layout(x, v.layout) for x, v in zip(inputs, md.graph.inputs)])
    want = model(inputs if len(inputs) > 1 else inputs[0], training=False)
    want = want if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for y, k, layout in zip(got, want, output_layouts(md.graph)):
        k = keras.ops.convert_to_numpy(k)
        y = to_source_layout(y, layout)
        assert y.shape == k.shape
        assert float(np.max(np.abs(y - k))) <= 1e-4


FNET = """import keras
from keras import layers


class FNetLayer(layers.Layer):
    def __init__(self, embedding_dim):
        super().__init__()
        self.ffn = layers.Dense(units=embedding_dim, activation="relu")

    def call(self, inputs):
        x = keras.ops.fft2((inputs, {imag}))[{part}]
        return self.ffn(x + inputs)


def build_model():
    inp = keras.Input(shape=(6, 5))
    x = layers.Dense(4)(inp)
    return keras.Model(inp, FNetLayer(4)(x))
"""


@pytest.mark.parametrize("imag, part", [("keras.ops.zeros_like(inputs)", 0), ("inputs * 0.5", 0),
                                        ("inputs * 0.5", 1)], ids=["real_input", "complex_real", "complex_imag"])
def test_fft2_is_two_dfts_over_a_complex_axis_and_equals_keras(imag, part):
    """keras.io's FNet token mixing: ``ops.fft2((real, imag))`` as ONNX DFTs, equal to Keras."""
    src = FNET.replace("{imag}", imag).replace("{part}", str(part))
    _keras_source_equals_keras(src, "fnet.py", f"fnet_{part}")


@pytest.mark.parametrize("size", [(4, 3), (7, 4)], ids=["smaller", "larger"])
def test_random_crop_is_keras_smart_resize_at_inference(size):
    """RandomCrop in an ONNX (inference) graph: the centred window of the target's aspect
    ratio resized (as Keras documents it), after a conv so the image is channels-first."""
    import keras

    from harness import randomize_keras_weights
    from transpiler.verify import ensure_built, keras_canonical_params, load_generated, to_source_layout

    src = ("import keras\nfrom keras import layers\n\n\ndef build_model():\n"
           "    inp = keras.Input(shape=(9, 6, 3))\n    x = layers.Conv2D(2, 1)(inp)\n"
           f"    out = layers.RandomCrop({size[0]}, {size[1]})(x)\n    return keras.Model(inp, out)\n")
    program = onnx_out.read_script(src, "crop.py", "keras")
    md = next(m for m in program.models if m.builder)
    keras.backend.clear_session()
    model = load_generated(src, f"onnx_out_crop_{size[0]}").build_model()
    ensure_built(model, md.graph)
    randomize_keras_weights(model)
    proto = export_graph(md.graph, node_params(md.graph, keras_canonical_params(md.graph, model)), dynamic_batch=True)
    onnx.checker.check_model(proto, full_check=True)
    x = np.random.default_rng(0).standard_normal((3, 9, 6, 3)).astype("float32")
    got = to_source_layout(_run(proto, [x.transpose(0, 3, 1, 2)])[0], md.graph.outputs[0].layout)
    conv = keras.ops.convert_to_numpy(model.layers[1](x))
    want = np.asarray(keras.preprocessing.image.smart_resize(conv, size))
    assert got.shape == want.shape
    assert float(np.max(np.abs(got - want))) <= 1e-4


def _torch_program(name):
    path = os.path.join(ROOT, "corpus", "torch", f"{name}.py")
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    return path, src, onnx_out.read_script(src, path, "torch")


def _torch_inputs(graph, batch=3):
    rng = np.random.default_rng(0)
    out = []
    for v in graph.inputs:
        shape = [batch] + [8 if d is None else int(d) for d in v.shape[1:]]
        out.append(rng.integers(0, 10, shape).astype(v.dtype) if v.dtype.startswith("int")
                   else rng.standard_normal(shape).astype("float32"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", _sampled(TORCH_CORPUS))
def test_torch_corpus_model_equals_torch(name):
    """The PyTorch corpus script's model, with its own (seeded) initial state_dict, gives
    torch's outputs under onnxruntime."""
    import torch

    from transpiler.verify import load_generated
    from transpiler.weights.torch_source import canonical_from_source

    path, src, program = _torch_program(name)
    md = program.models[0]
    torch.manual_seed(0)
    module = load_generated(src, f"onnx_out_t_{name}")
    model = (getattr(module, md.builder)(**md.builder_args) if md.builder else getattr(module, md.class_name)())
    model.eval()
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    proto = export_graph(md.graph, node_params(md.graph, canonical_from_source(md.graph, state)), dynamic_batch=True)
    onnx.checker.check_model(proto, full_check=True)
    inputs = _torch_inputs(md.graph)
    got = _run(proto, inputs)
    with torch.no_grad():
        want = model(*[torch.as_tensor(x) for x in inputs])
    want = want if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for y, t in zip(got, want):
        assert y.shape == tuple(t.shape)
        assert float(np.max(np.abs(y - t.numpy()))) <= 1e-4


# ---------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------
def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "transpiler", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": ROOT})


def test_cli_keras_weights_equal_keras(tmp_path):
    """``--to onnx --weights W.weights.h5``: the trained checkpoint's numbers, Keras' outputs."""
    import keras

    from harness import randomize_keras_weights
    from transpiler.verify import load_generated

    path = os.path.join(ROOT, "corpus", "keras", "mnist_cnn.py")
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    keras.backend.clear_session()
    model = load_generated(src, "onnx_out_cli_mnist").build_model()
    randomize_keras_weights(model)
    ckpt = str(tmp_path / "m.weights.h5")
    model.save_weights(ckpt)
    out = tmp_path / "m.onnx"
    r = _cli(path, "--to", "onnx", "-o", str(out), "--weights", ckpt, "--dynamic-batch")
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stderr and "build_model" in r.stderr
    proto = onnx.load(str(out))
    assert "m.weights.h5" in proto.doc_string
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    x = np.random.default_rng(1).standard_normal((4, 28, 28, 1)).astype("float32")
    (y,) = _run(proto, [x.transpose(0, 3, 1, 2).copy()])
    assert float(np.max(np.abs(y - keras.ops.convert_to_numpy(model(x, training=False))))) <= 1e-4


def test_cli_torch_weights_equal_torch(tmp_path):
    """A PyTorch script with its user's state_dict (``torch.save(model.state_dict())``)."""
    import torch

    from transpiler.verify import load_generated

    path = os.path.join(ROOT, "corpus", "torch", "resnet_small.py")
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    _, _, program = _torch_program("resnet_small")
    md = program.models[0]
    torch.manual_seed(3)
    model = getattr(load_generated(src, "onnx_out_cli_resnet"), md.builder)()
    model.eval()
    ckpt = str(tmp_path / "r.pt")
    torch.save(model.state_dict(), ckpt)
    out = tmp_path / "r.onnx"
    r = _cli(path, "--to", "onnx", "-o", str(out), "--weights", ckpt)
    assert r.returncode == 0, r.stderr
    proto = onnx.load(str(out))
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_value == 1  # without --dynamic-batch: batch 1
    x = _torch_inputs(md.graph, batch=1)
    (y,) = _run(proto, x)
    with torch.no_grad():
        assert float(np.max(np.abs(y - model(torch.as_tensor(x[0])).numpy()))) <= 1e-4


def test_cli_without_weights_draws_initial_ones_and_says_so(tmp_path):
    out_a, out_b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    path = os.path.join(ROOT, "corpus", "keras", "lstm_classifier.py")
    assert _cli(path, "--to", "onnx", "-o", str(out_a)).returncode == 0
    assert _cli(path, "--to", "onnx", "-o", str(out_b)).returncode == 0
    assert out_a.read_bytes() == out_b.read_bytes()  # deterministic
    proto = onnx.load(str(out_a))
    assert "initial weights" in proto.doc_string and "glorot_uniform" in proto.doc_string
    onnx.checker.check_model(proto, full_check=True)
    kernels = [np.asarray(onnx.numpy_helper.to_array(t)) for t in proto.graph.initializer]
    assert any(k.size > 100 and 0 < float(np.std(k)) < 1 for k in kernels)  # drawn, not zeros


def test_cli_unsupported_writes_nothing_and_exits_3(tmp_path):
    script = tmp_path / "thresholded.py"
    script.write_text("import keras\nfrom keras import layers\n\n\ndef build_model():\n"
                      "    inputs = keras.Input(shape=(8,))\n"
                      "    x = layers.ReLU(threshold=0.5)(layers.Dense(4)(inputs))\n"
                      "    return keras.Model(inputs, x)\n\n\nmodel = build_model()\n")
    out = tmp_path / "t.onnx"
    r = _cli(str(script), "--to", "onnx", "-o", str(out))
    assert r.returncode == 3, r.stderr
    assert "relu with a threshold" in r.stderr and "nothing was written" in r.stderr
    assert not out.exists()


def test_cli_refusals(tmp_path):
    src = os.path.join(ROOT, "corpus", "keras", "mlp_regression.py")
    r = _cli(src, "--to", "onnx", "-o", src)
    assert r.returncode == 2 and "ends in .onnx" in r.stderr
    r = _cli(os.path.join(ROOT, "corpus", "keras"), "--to", "onnx")
    assert r.returncode == 2 and "one script" in r.stderr
    r = _cli(src, "--to", "pytorch", "--dynamic-batch", "-o", str(tmp_path / "x.py"))
    assert r.returncode == 2 and "--to onnx" in r.stderr
    r = _cli(src, "--to", "onnx", "-o", str(tmp_path / "x.onnx"), "--model", "nothing_like_it")
    assert r.returncode == 3 and "nothing_like_it" in r.stderr


def test_translation_path_imports_no_runtime():
    """ONNX out reads and prints with ``onnx`` only: no torch, tensorflow, keras or onnxruntime."""
    code = ("import sys, os\nfrom transpiler import onnx_out\n"
            f"p = {os.path.join(ROOT, 'corpus', 'keras', 'resnet_small.py')!r}\n"
            "r = onnx_out.export_script(open(p).read(), p)\n"
            "bad = [m for m in ('torch', 'tensorflow', 'keras', 'onnxruntime') if m in sys.modules]\n"
            "print(bad)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_a_boolean_operand_is_promoted_as_the_tables_computes_fact_says():
    """``numbers="computes"`` in the ops table: a comparison's boolean multiplied into a float
    tensor is cast to float first (ONNX's Mul refuses mixed types), as Keras promotes it."""
    src = ("import keras\nfrom keras import layers, ops\n\n"
           "inputs = keras.Input(shape=(4,))\nh = layers.Dense(3)(inputs)\n"
           "y = ops.multiply(h, ops.greater(h, 0.0))\nmodel = keras.Model(inputs, y)\n")
    assert ops_table.get("multiply").numbers == "computes" and ops_table.get("greater").numbers == ""
    proto = onnx_out.export_script(src, "masked.py").model
    onnx.checker.check_model(proto, full_check=True)
    (mul,) = [n for n in proto.graph.node if n.op_type == "Mul"]
    casts = {n.output[0] for n in proto.graph.node if n.op_type == "Cast"}
    assert casts & set(mul.input), [(n.op_type, list(n.input)) for n in proto.graph.node]
    x = np.random.default_rng(0).normal(size=(1, 4)).astype(np.float32)
    params = {t.name: onnx.numpy_helper.to_array(t) for t in proto.graph.initializer}
    (gemm,) = [n for n in proto.graph.node if n.op_type == "Gemm"]
    trans_b = {a.name: a.i for a in gemm.attribute}.get("transB", 0)
    kernel, bias = params[gemm.input[1]], params[gemm.input[2]]
    h = x @ (kernel.T if trans_b else kernel) + bias
    (y,) = _run(proto, [x])
    np.testing.assert_allclose(y, h * (h > 0), atol=1e-6)


def test_an_unknown_numbers_fact_is_refused():
    with pytest.raises(ValueError, match="numbers="):
        ops_table.op("__numbers_probe", layout=ops_table.TRANSPARENT, numbers="adds")
    assert "__numbers_probe" not in ops_table._TABLE


def test_runtime_sizes_need_the_checkpoint():
    """A model whose sizes the program computes when it runs has no initial weights to draw."""
    path = os.path.join(ROOT, "corpus", "keras", "data_sized_blocks.py")
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    with pytest.raises(Unsupported, match="--weights"):
        onnx_out.export_script(src, path)


@pytest.mark.slow
@pytest.mark.parametrize("name", _sampled(["mnist_cnn", "lstm_classifier", "transformer_classifier"]))
def test_keras_script_through_onnx_to_pytorch(name, tmp_path):
    """Keras script → ONNX (its trained weights) → PyTorch source (the ONNX frontend): the
    generated module, loading the weights that came with it, computes Keras' numbers."""
    import keras
    import torch
    from safetensors.numpy import load_file

    from harness import randomize_keras_weights
    from transpiler.verify import load_generated

    path = os.path.join(ROOT, "corpus", "keras", f"{name}.py")
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    keras.backend.clear_session()
    model = load_generated(src, f"onnx_rt_{name}").build_model()
    randomize_keras_weights(model)
    ckpt = str(tmp_path / "k.weights.h5")
    model.save_weights(ckpt)
    r = _cli(path, "--to", "onnx", "-o", str(tmp_path / "m.onnx"), "--weights", ckpt, "--dynamic-batch")
    assert r.returncode == 0, r.stderr
    r = _cli(str(tmp_path / "m.onnx"), "--to", "pytorch", "-o", str(tmp_path / "m.py"))
    assert r.returncode == 0, r.stderr
    module = load_generated((tmp_path / "m.py").read_text(), f"onnx_rt_torch_{name}")
    net = module.build_model()
    net.load_state_dict({k: torch.as_tensor(v) for k, v in load_file(str(tmp_path / "m.safetensors")).items()})
    net.eval()
    program = onnx_out.read_script(src, path, "keras")
    from transpiler.verify import random_inputs, to_target_layout

    md = next(m for m in program.models if m.builder)
    inputs = random_inputs(md.graph, 3)
    with torch.no_grad():
        got = net(*[torch.as_tensor(to_target_layout(x, v.layout)) for x, v in zip(inputs, md.graph.inputs)])
    want = keras.ops.convert_to_numpy(model(inputs if len(inputs) > 1 else inputs[0], training=False))
    assert float(np.max(np.abs(got.numpy() - want))) <= 1e-4


@pytest.mark.slow
@pytest.mark.parametrize("name", _sampled(["mnist_cnn", "resnet_small", "lstm_classifier"]))
def test_torch_script_through_onnx_to_keras(name, tmp_path):
    """PyTorch script → ONNX (the user's state_dict) → Keras source: the generated Keras model
    (channels-last), loading the weights that came with it, computes torch's numbers."""
    import keras
    import torch

    from transpiler.verify import load_generated

    path, src, program = _torch_program(name)
    md = program.models[0]
    torch.manual_seed(5)
    model = getattr(load_generated(src, f"onnx_rt_t_{name}"), md.builder or md.class_name)()
    model.eval()
    ckpt = str(tmp_path / "t.pt")
    torch.save(model.state_dict(), ckpt)
    r = _cli(path, "--to", "onnx", "-o", str(tmp_path / "m.onnx"), "--weights", ckpt, "--dynamic-batch")
    assert r.returncode == 0, r.stderr
    r = _cli(str(tmp_path / "m.onnx"), "--to", "keras", "-o", str(tmp_path / "m.py"))
    assert r.returncode == 0, r.stderr
    keras.backend.clear_session()
    net = load_generated((tmp_path / "m.py").read_text(), f"onnx_rt_keras_{name}").build_model()
    net.load_weights(str(tmp_path / "m.weights.h5"))
    (x,) = _torch_inputs(md.graph)
    with torch.no_grad():
        want = model(torch.as_tensor(x)).numpy()
    x_in = x.transpose(0, 2, 3, 1) if x.ndim == 4 else x  # the Keras model reads channels-last
    got = keras.ops.convert_to_numpy(net(x_in, training=False))
    assert got.shape == want.shape
    assert float(np.max(np.abs(got - want))) <= 1e-4
