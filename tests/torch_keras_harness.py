"""One numeric check for the torch → Keras direction (``check_torch_source``).

Builds the torch model from the source with random weights (BatchNorm statistics
randomised too), translates the source with ``--to keras``, maps the state_dict through
the plan into the generated Keras model, runs both on the same random inputs
(channels-first in torch, channels-last in Keras) and returns the errors and both
parameter counts. Noise (``torch.randn_like``) is the same numbers on both sides
(``SameNoise``). torch is imported before Keras (both in one process).
"""

from __future__ import annotations

import contextlib
import types

import numpy as np
import torch  # noqa: F401  (first: torch before tensorflow in one process)

from transpiler.translate import translate
from transpiler.weights.torch_source import keras_layer, keras_weights


def randomize_torch(model, seed: int = 0, scale: float = 0.3) -> None:
    """Random params (N(0, scale²)) and BatchNorm statistics, so every weight matters in the
    comparison."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn(p.shape, generator=g) * scale)
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


class SameNoise:
    """The same noise on both sides: ``torch.randn_like`` draws from a recorded numpy stream
    while torch runs, ``keras.random.normal`` replays it (shape checked) while Keras runs."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.RandomState(seed + 1000)
        self.draws: list[np.ndarray] = []

    @contextlib.contextmanager
    def recording(self):
        saved = torch.randn_like

        def randn_like(t, **kwargs):
            array = self.rng.standard_normal(tuple(t.shape)).astype("float32")
            self.draws.append(array)
            return torch.from_numpy(array).to(t.dtype)

        torch.randn_like = randn_like
        try:
            yield
        finally:
            torch.randn_like = saved

    @contextlib.contextmanager
    def replaying(self):
        import keras

        saved = keras.random.normal
        replay = iter(self.draws)

        def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
            # noise torch did not draw (a branch torch skipped, computed and discarded by
            # Keras' TrainingSelect) is NaN: if it reached an output, the error is NaN
            array = next(replay, None)
            if array is None:
                return keras.ops.full(shape, float("nan"), dtype=dtype)
            assert array.shape == tuple(int(d) for d in shape), (array.shape, shape)
            return keras.ops.convert_to_tensor(array * stddev + mean, dtype=dtype)

        keras.random.normal = normal
        try:
            yield
        finally:
            keras.random.normal = saved
        assert next(replay, None) is None, "Keras drew less noise than torch"


def check_torch_source(src: str, builder: str = "build_model", batch: int = 3, seed: int = 0,
                       path: str = "model.py", weight_scale: float = 0.3, training: bool = False):
    """Translate ``src`` and compare the torch and Keras models numerically, in inference
    mode (``model.eval()``, ``training=False``) or with ``training`` in training mode.

    Returns ``(max_abs_error, torch_param_count, keras_param_count, translation)``; the
    error is NaN when an output is.
    """
    import keras

    tr = translate(src, path, "keras")
    # the model translates (stubs of the program around it are the training tests' business)
    assert not [d for d in tr.stubs if d.message.split(":")[0] == builder], [str(d) for d in tr.stubs]
    md = next(m for m in tr.program.models if (m.builder or m.class_name) == builder)
    torch_mod = load_source(src)
    torch.manual_seed(seed)
    model = getattr(torch_mod, builder)()
    randomize_torch(model, seed, weight_scale)
    model.train(training)
    keras_mod = load_source(tr.text, "keras_model_under_test")
    kmodel = getattr(keras_mod, builder)()
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    for name, arrays in keras_weights(md.graph, state).items():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    rng = np.random.RandomState(seed)
    xs, xs_k = [], []
    for i, value in enumerate(md.graph.inputs):  # (a model of several inputs: each in order)
        shape = md.graph.origin.input_shapes[i][1:]
        if value.dtype.startswith("int"):
            high = min(n.attrs["input_dim"] for n in md.graph.nodes if n.op == "embedding")
            x = rng.randint(0, high, size=(batch, *shape)).astype(value.dtype)
        else:
            x = rng.randn(batch, *shape).astype("float32")
        layout = md.graph.layouts.inputs[i]
        # an input read by convolutions was made channels-last: the data is permuted where it enters
        moved = layout in ("NWC", "NHWC", "NDHWC") and md.graph.origin.input_shapes[i] != \
            tuple(value.shape)
        xs.append(x)
        xs_k.append(np.moveaxis(x, 1, -1) if moved else x)
    noise = SameNoise(seed)
    with torch.no_grad(), noise.recording():
        y_t = model(*(torch.from_numpy(x) for x in xs))
    with noise.replaying():
        y_k = kmodel(xs_k if len(xs_k) > 1 else xs_k[0], training=training)
    ys_t = y_t if isinstance(y_t, (tuple, list)) else [y_t]
    ys_k = y_k if isinstance(y_k, (tuple, list)) else [y_k]
    err = 0.0
    layouts = zip(md.graph.layouts.outputs, md.graph.layouts.target_outputs)
    for a, b, (src, dst) in zip(ys_t, ys_k, layouts):
        a = a.numpy()
        b = keras.ops.convert_to_numpy(b)
        if src and dst and src != dst:  # a feature map: Keras returns it channels-last
            b = np.moveaxis(b, -1, 1)
        assert a.shape == b.shape, (a.shape, b.shape)
        diff = float(np.max(np.abs(a - b)))
        err = float("nan") if np.isnan(diff) or np.isnan(err) else max(err, diff)
    return err, torch_param_count(model), int(sum(int(np.prod(w.shape)) for w in kmodel.weights)), tr


def assert_same_steps(tparam, topt, kvar, kopt, grads, before_step=None) -> None:
    """A torch optimizer on ``tparam`` and a Keras optimizer on ``kvar`` (float64) take the same
    gradients step by step; each step's update must agree to 2e-5 of its size (Keras' Adam
    casts its Python-float betas through float32 for the bias correction, which alone moves
    a float64 step by ~7e-6). ``before_step(step)`` runs first (a learning-rate change)."""
    import keras

    for step, grad in enumerate(grads):
        if before_step is not None:
            before_step(step)
        before = tparam.detach().numpy().copy()
        tparam.grad = torch.from_numpy(grad.copy())
        topt.step()
        kopt.apply_gradients([(keras.ops.convert_to_tensor(grad), kvar)])
        t, k = tparam.detach().numpy(), keras.ops.convert_to_numpy(kvar)
        update = np.max(np.abs(t - before))
        assert np.max(np.abs(t - k)) <= 1e-12 + 2e-5 * update, (step, np.max(np.abs(t - k)), update)
        kvar.assign(t)  # the next step starts from the same weights
