"""One numeric check for the torch → Keras direction (``check_torch_source``).

Builds the torch model from the source with random weights (BatchNorm statistics
randomised too), translates the source with ``--to keras``, maps the state_dict through
the plan into the generated Keras model, runs both on the same random inputs
(channels-first in torch, channels-last in Keras) and returns the errors and both
parameter counts. torch is imported before Keras (both in one process).
"""

from __future__ import annotations

import types

import numpy as np
import torch  # noqa: F401  (first: torch before tensorflow in one process)

from transpiler.translate import translate
from transpiler.weights.torch_source import keras_weights


def randomize_torch(model, seed: int = 0) -> None:
    """Random params and BatchNorm statistics, so every weight matters in the comparison."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(torch.randn(b.shape, generator=g) * 0.2)
            elif name.endswith("running_var"):
                b.copy_(torch.rand(b.shape, generator=g) + 0.5)


def load_source(src: str, name: str = "torch_model_under_test"):
    module = types.ModuleType(name)
    module.__dict__["__name__"] = name
    exec(compile(src, f"<{name}>", "exec"), module.__dict__)
    return module


def torch_param_count(model) -> int:
    """Params + buffers, minus num_batches_tracked, minus torch's second RNN bias."""
    n = 0
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        if name.endswith("num_batches_tracked"):
            continue
        if isinstance(_owner(model, name), (torch.nn.LSTM, torch.nn.RNN)) and ".bias_hh_l" in f".{name.split('.')[-1]}":
            continue
        n += t.numel()
    return n


def _owner(model, name):
    mod = model
    for part in name.split(".")[:-1]:
        mod = getattr(mod, part)
    return mod


def check_torch_source(src: str, builder: str = "build_model", batch: int = 3, seed: int = 0,
                       path: str = "model.py"):
    """Translate ``src`` and compare the torch and Keras models numerically.

    Returns ``(max_abs_error, torch_param_count, keras_param_count, translation)``.
    """
    import keras

    tr = translate(src, path, "keras")
    # the model translates (stubs of the program around it are the training tests' business)
    assert not [d for d in tr.stubs if d.message.split(":")[0] == builder], [str(d) for d in tr.stubs]
    md = next(m for m in tr.program.models if (m.builder or m.class_name) == builder)
    torch_mod = load_source(src)
    torch.manual_seed(seed)
    model = getattr(torch_mod, builder)()
    randomize_torch(model, seed)
    model.eval()
    keras_mod = load_source(tr.text, "keras_model_under_test")
    kmodel = getattr(keras_mod, builder)()
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        kmodel.get_layer(name).set_weights(arrays)
    shape = md.graph.meta["source_input_shapes"][0][1:]
    dtype = md.graph.inputs[0].dtype
    rng = np.random.RandomState(seed)
    if dtype.startswith("int"):
        high = min(n.attrs["input_dim"] for n in md.graph.nodes if n.op == "embedding")
        x = rng.randint(0, high, size=(batch, *shape)).astype(dtype)
    else:
        x = rng.randn(batch, *shape).astype("float32")
    with torch.no_grad():
        y_t = model(torch.from_numpy(x))
    layout = md.graph.meta["input_layouts"][0]
    # an input read by convolutions was made channels-last: the data is permuted where it enters
    moved = layout in ("NWC", "NHWC", "NDHWC") and md.graph.meta["source_input_shapes"][0] != \
        tuple(md.graph.inputs[0].shape)
    x_k = np.moveaxis(x, 1, -1) if moved else x
    y_k = kmodel(x_k, training=False)
    ys_t = y_t if isinstance(y_t, (tuple, list)) else [y_t]
    ys_k = y_k if isinstance(y_k, (tuple, list)) else [y_k]
    err = 0.0
    layouts = zip(md.graph.meta["output_layouts"], md.graph.meta["target_output_layouts"])
    for a, b, (src, dst) in zip(ys_t, ys_k, layouts):
        a = a.numpy()
        b = keras.ops.convert_to_numpy(b)
        if src and dst and src != dst:  # a feature map: Keras returns it channels-last
            b = np.moveaxis(b, -1, 1)
        assert a.shape == b.shape, (a.shape, b.shape)
        err = max(err, float(np.max(np.abs(a - b))))
    return err, torch_param_count(model), int(sum(int(np.prod(w.shape)) for w in kmodel.weights)), tr
