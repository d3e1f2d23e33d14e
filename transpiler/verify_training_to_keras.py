"""Training equivalence for the PyTorch → Keras direction: the torch program's own
optimizer, loss and scheduler objects against the generated Keras ``compile``/``fit``.

Both sides start from the same weights (the torch model's, mapped into the Keras model),
see the same batches in the same order (shuffle off) for the same epochs, and the
per-step losses are returned side by side. The torch side runs the usual loop with the
objects the *source* constructs (their constructor calls evaluated in the source module);
how often the scheduler steps, the clipping and the early stopping are the caller's (what
the source loop does, stated by the test). The Keras side runs ``model.fit`` with the
optimizer, loss, metrics and callbacks the printer writes for the program, and the
per-step losses are read back from fit's running means. As in ``verify_training``,
dropout is inactive (rate 0) and both sides run in float64.

Imports both frameworks (torch first); used by the tests.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch  # noqa: F401  (before TensorFlow)

import keras

from transpiler import verify
from transpiler.ir import training as T
from transpiler.printers.keras.training import ProgramPrinter, input_perm
from transpiler.translate import translate
from transpiler.verify_training import batches
from transpiler.weights.torch_source import keras_layer, keras_weights

_counter = itertools.count()


@dataclass
class LoopFacts:
    """What the source loop does besides zero_grad/backward/step (stated by the caller)."""

    scheduler: str | None = None  # None, "epoch", "step" or "plateau"
    clip_norm: float | None = None
    early_stopping_patience: int | None = None
    names: dict[str, Any] = field(default_factory=dict)  # the loop's locals its objects read
    #: the loop's locals computed from the torch model (parameter groups), given the model
    model_names: Callable[[Any], dict[str, Any]] | None = None
    validate_on_training_data: bool = False  # so early stopping does not end the 20 steps early


def _load(text: str, name: str):
    return verify.load_generated(text, f"{name}_{next(_counter)}")


def _fact(result, kind: str) -> T.TrainingStatement:
    found = [ts for ts in result.program.training if ts.kind == kind]
    assert found, f"the program has no {kind}"
    return found[0]


# long: one equivalence run top to bottom: translate, train torch as the source does, then Keras
def run_both(path: str, facts: LoopFacts, steps_per_epoch: int = 2, epochs: int = 10, batch: int = 8,
             seed: int = 0, exact: bool = False, own_weights: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per-step losses (torch, keras) of ``path``'s training loop translated to Keras (with
    ``--exact`` when ``exact``); ``own_weights``: the Keras model starts from the weights its
    own code draws (``keras.utils.set_random_seed(seed)``), not the torch model's."""
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    result = translate(source, path, "keras", exact=exact)
    loop_ts = _fact(result, "training_loop")
    loop: T.TrainingLoop = loop_ts.config
    md = loop_ts.model_def
    loss = loop.compile.losses[0]
    data = batches(md, [loss], steps_per_epoch + 1, batch, seed)
    train, (vx, vy) = data[:steps_per_epoch], data[0 if facts.validate_on_training_data else -1]

    # -- torch: the source's own objects ------------------------------------------------
    src = _load(source, "torch_program")
    torch.manual_seed(seed)
    tmodel = getattr(src, md.builder)().double()
    for module in tmodel.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            module.p = 0.0
        if isinstance(module, (torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN)):
            module.dropout = 0.0
    state = {k: v.detach().float().numpy() for k, v in tmodel.state_dict().items()}
    namespace = dict(vars(src))
    namespace.update(facts.names)
    namespace[loop.model] = tmodel
    if facts.model_names is not None:
        namespace.update(facts.model_names(tmodel))
    t_opt = eval(_fact(result, "optimizer_object").source, namespace)  # the source's constructor call
    namespace[loop.optimizer] = t_opt
    t_loss = eval(_loss_source(result, loop), namespace)
    t_sched = None
    if facts.scheduler:
        t_sched = eval(_scheduler_source(result), namespace)

    def to_torch(x, perm):
        if perm is not None:  # the Keras-layout batch, back in the torch model's layout
            x = np.transpose(x, np.argsort(perm))
        t = torch.from_numpy(np.ascontiguousarray(x))
        return t.double() if t.is_floating_point() else t.long()

    perm = input_perm(md, 0)
    t_train = [(to_torch(xs[0], perm), to_torch(ys[0], None)) for xs, ys in train]
    t_val = (to_torch(vx[0], perm), to_torch(vy[0], None))
    t_losses: list[float] = []
    best, wait = float("inf"), 0
    for epoch in range(epochs):
        tmodel.train()
        for xb, yb in t_train:
            t_opt.zero_grad()
            value = t_loss(tmodel(xb), yb)
            value.backward()
            if facts.clip_norm is not None:
                torch.nn.utils.clip_grad_norm_(tmodel.parameters(), facts.clip_norm)
            t_opt.step()
            if facts.scheduler == "step":
                t_sched.step()
            t_losses.append(value.item())
        tmodel.eval()
        with torch.no_grad():
            val = t_loss(tmodel(t_val[0]), t_val[1]).item()
        if facts.scheduler == "epoch":
            t_sched.step()
        elif facts.scheduler == "plateau":
            t_sched.step(val)
        if facts.early_stopping_patience is not None:
            if val < best:
                best, wait = val, 0
            else:
                wait += 1
                if wait >= facts.early_stopping_patience:
                    break

    # -- Keras: the generated compile/fit ---------------------------------------------
    gen = _load(result.text, "keras_program")
    keras.backend.clear_session()
    keras.config.set_floatx("float64")  # also for the loss tracker fit reports through
    try:
        if own_weights:
            keras.utils.set_random_seed(seed)
        return np.array(t_losses), _fit(gen, md, None if own_weights else state, result, loop, loss, facts, train,
                                        vx, vy, batch, epochs)
    finally:
        keras.config.set_floatx("float32")


def _fit(gen, md, state, result, loop, loss, facts, train, vx, vy, batch, epochs) -> np.ndarray:
    kmodel = getattr(gen, md.builder)()
    for name, arrays in keras_weights(md.graph, state).items() if state is not None else ():
        keras_layer(kmodel, md.graph, name).set_weights(arrays)
    for layer in kmodel.layers:
        if hasattr(layer, "rate"):
            layer.rate = 0.0
    printer: ProgramPrinter = result.training_printer
    knames = dict(vars(gen))
    knames.update(facts.names)
    knames[loop.model] = kmodel
    # the parameter groups the program lists (as the Keras variables holding them)
    for ts in result.program.training:
        if ts.kind == "param_groups":
            for name, variables in ts.config.items():
                knames[name] = [keras_layer(kmodel, md.graph, layer).weights[i] for layer, i in variables]
    # the expressions the generated program holds for its objects
    optimizer = eval(printer.optimizer_expr(loop.compile.optimizer), knames)
    kloss = eval(printer.loss_expr(loss), knames)
    metrics = [eval(printer.metric(m, loss), knames) for m in (loop.compile.metrics or [[]])[0]]
    callbacks = [eval(printer.schedule_expr(ts.config) if ts.kind == "schedule_object"
                      else printer.plateau_expr(ts.config), knames)
                 for ts in result.program.training if ts.kind in ("schedule_object", "callback_object")]
    if loop.early_stopping is not None:
        callbacks.append(eval(printer.early_stopping_expr(loop.early_stopping), knames))
    recorder = _Recorder()
    kmodel.compile(optimizer=optimizer, loss=kloss, metrics=metrics)
    x = _double(np.concatenate([xs[0] for xs, _ in train]))
    y = _double(np.concatenate([ys[0] for _, ys in train]))
    kmodel.fit(x, y, batch_size=batch, epochs=epochs, shuffle=False, validation_data=(_double(vx[0]), _double(vy[0])),
               callbacks=callbacks + [recorder], verbose=0)
    return np.array(recorder.losses)


def _double(a: np.ndarray) -> np.ndarray:
    return a.astype("float64") if a.dtype.kind == "f" else a


class _Recorder(keras.callbacks.Callback):
    """Per-step losses from fit's running means (equal batches: l_k = k m_k - (k-1) m_{k-1})."""

    def __init__(self):
        super().__init__()
        self.losses: list[float] = []
        self.k = 0
        self.mean = 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self.k, self.mean = 0, 0.0

    def on_train_batch_end(self, batch, logs=None):
        self.k += 1
        mean = float(logs["loss"])
        self.losses.append(self.k * mean - (self.k - 1) * self.mean)
        self.mean = mean


def _loss_source(result, loop: T.TrainingLoop) -> str:
    if loop.loss:
        return _fact(result, "loss_object").source
    raise NotImplementedError("a loss written as F.<loss>(...) in the loop")


def _scheduler_source(result) -> str:
    ts = next(t for t in result.program.training if t.kind in ("schedule_object", "callback_object"))
    return ts.source


# long: the hooks recording weights, noise and losses on both sides must wrap the same calls
def run_programs(path: str, steps: int = 20, seed: int = 0, eager: bool = True,
                 fit_logs: list | None = None, exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A program with a custom training step, run whole on both sides: the torch script's
    ``main()`` and the generated Keras script's, with the same initial weights (each Keras
    model gets the weights its torch counterpart was built with), the same batches (the
    loaders' shuffle off), the same noise (``torch.randn``/``torch.randn_like`` and
    ``np.random.standard_normal``/``keras.random.normal`` draw from one recorded stream) and
    float64 throughout (``exact``: the program translated with ``--exact``). Returns every loss value the program's loss object computed, in
    order, on each side (the first ``steps`` steps' worth); a program whose loss is written
    in the loop (no loss object): every value ``backward()`` was called on.

    A trainer's ``fit`` runs its step eagerly (the recording is Python-level); with
    ``eager=False`` it runs as traced (no Keras values are recorded then: a program without
    noise, compared by the logs of each fit, appended to ``fit_logs``)."""
    import contextlib
    import functools
    import io

    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    result = translate(source, path, "keras", exact=exact)
    loss_ts = next((ts for ts in result.program.training if ts.kind == "loss_object"), None)
    loss_class = loss_ts.source.split("(")[0].split(".")[-1] if loss_ts is not None else None
    builders = [md for md in result.program.models if md.builder]
    src = _load(source, "torch_program")
    gen = _load(result.text, "keras_program")

    # -- torch --------------------------------------------------------------------------
    states: dict[str, list] = {}
    draws: list[np.ndarray] = []
    rng = np.random.RandomState(seed)
    t_losses: list[float] = []

    def record_builder(name, build):
        @functools.wraps(build)
        def wrapped(*args, **kwargs):
            model = build(*args, **kwargs)
            states.setdefault(name, []).append({k: v.detach().float().numpy().copy()
                                                for k, v in model.state_dict().items()})
            return model
        return wrapped

    def randn(*size, **kwargs):
        shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
        array = rng.standard_normal(shape).astype("float32")
        draws.append(array)
        return torch.from_numpy(array.astype("float64"))

    def randn_like(t, **kwargs):
        return randn(*t.shape).to(t.dtype)

    # the values recorded: what the loss object computes, else what backward() starts from
    loss_cls = getattr(torch.nn, loss_class) if loss_class else torch.Tensor
    hook = "forward" if loss_class else "backward"
    forward = getattr(loss_cls, hook)

    def recording_forward(self, *args, **kwargs):
        if not loss_class:
            t_losses.append(float(self.detach()))
            return forward(self, *args, **kwargs)
        value = forward(self, *args, **kwargs)
        t_losses.append(float(value.detach()))
        return value

    for md in builders:
        setattr(src, md.builder, record_builder(md.builder, getattr(src, md.builder)))
    src.DataLoader = functools.partial(_no_shuffle, src.DataLoader)
    from_numpy = torch.from_numpy
    saved = (torch.randn, torch.from_numpy, torch.get_default_dtype(), torch.randn_like)
    torch.randn, torch.randn_like = randn, randn_like
    torch.from_numpy = lambda a: from_numpy(a).double() if a.dtype.kind == "f" else from_numpy(a)
    torch.set_default_dtype(torch.float64)
    setattr(loss_cls, hook, recording_forward)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            src.main()
    finally:
        torch.randn, torch.from_numpy, torch.randn_like = saved[0], saved[1], saved[3]
        torch.set_default_dtype(saved[2])
        setattr(loss_cls, hook, forward)

    # -- Keras --------------------------------------------------------------------------
    k_losses: list[float] = []
    built: dict[str, int] = {}

    def keras_builder(md, build):
        @functools.wraps(build)
        def wrapped(*args, **kwargs):
            model = build(*args, **kwargs)
            i = built.get(md.builder, 0)
            built[md.builder] = i + 1
            if i < len(states.get(md.builder, [])):  # the i-th model the torch program built
                for name, arrays in keras_weights(md.graph, states[md.builder][i]).items():
                    keras_layer(model, md.graph, name).set_weights(arrays)
            return model
        return wrapped

    replay = iter(draws)

    def standard_normal(size=None):
        array = next(replay)
        assert array.shape == tuple(np.atleast_1d(size)), (array.shape, size)
        return array.copy()

    def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
        if not all(isinstance(d, (int, np.integer)) for d in shape):  # (a symbolic call: no draw)
            return saved_normal[1](shape, mean=mean, stddev=stddev, dtype=dtype, seed=seed)
        array = standard_normal(tuple(int(d) for d in shape))
        return keras.ops.convert_to_tensor(array.astype("float64") * stddev + mean, dtype=dtype)

    if loss_class:
        kcls = getattr(keras.losses, type(eval(_printed_loss(result), vars(gen))).__name__)
        khook = "__call__"
    elif hasattr(gen, "accumulate_gradients"):  # the generated step's backward(): accumulate_gradients(tape, loss, ...)
        kcls, khook = gen, "accumulate_gradients"
    else:  # the canonical step's backward(): tape.gradient(loss, ...)
        import tensorflow as tf

        kcls, khook = tf.GradientTape, "gradient"
    call = getattr(kcls, khook)

    def recording_call(self, *args, **kwargs):
        if not loss_class:  # (accumulate_gradients: ``self`` is the tape; tape.gradient: the tape)
            k_losses.append(float(keras.ops.convert_to_numpy(args[0])))
            return call(self, *args, **kwargs)
        value = call(self, *args, **kwargs)
        k_losses.append(float(keras.ops.convert_to_numpy(value)))
        return value

    for md in builders:
        setattr(gen, md.builder, keras_builder(md, getattr(gen, md.builder)))
    if hasattr(gen, "ArrayLoader"):
        gen.ArrayLoader = functools.partial(_no_shuffle, gen.ArrayLoader)
    if hasattr(gen, "ArrayDataset"):  # float64 data, as torch.from_numpy gives the torch side
        dataset = gen.ArrayDataset
        gen.ArrayDataset = lambda *arrays: dataset(*(_double(np.asarray(a)) for a in arrays))
    saved_normal = np.random.standard_normal, keras.random.normal
    np.random.standard_normal, keras.random.normal = standard_normal, normal
    setattr(kcls, khook, recording_call)
    # a trainer's fit: the batches in order (as the loaders' shuffle off), the step run
    # eagerly (the recorded noise and loss values are Python-level, a trace would keep the first)
    import tensorflow as tf

    saved_fit, saved_shuffle = keras.Model.fit, tf.data.Dataset.shuffle
    saved_slices, slices = vars(tf.data.Dataset)["from_tensor_slices"], tf.data.Dataset.from_tensor_slices
    keras.Model.fit = functools.partialmethod(_fit_in_order, saved_fit, fit_logs if fit_logs is not None else [])
    tf.data.Dataset.shuffle = lambda self, *args, **kwargs: self
    tf.data.Dataset.from_tensor_slices = staticmethod(lambda arrays, *a, **kw: slices(  # float64, as torch's side
        tuple(_double(np.asarray(x)) for x in arrays) if isinstance(arrays, tuple) else arrays, *a, **kw))
    tf.config.run_functions_eagerly(eager)
    if not eager:
        setattr(kcls, khook, call)
    keras.backend.clear_session()
    keras.config.set_floatx("float64")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            gen.main()
    finally:
        np.random.standard_normal, keras.random.normal = saved_normal
        setattr(kcls, khook, call)
        keras.config.set_floatx("float32")
        keras.Model.fit, tf.data.Dataset.shuffle = saved_fit, saved_shuffle
        tf.data.Dataset.from_tensor_slices = saved_slices
        tf.config.run_functions_eagerly(False)
    return np.array(t_losses), np.array(k_losses)


def _fit_in_order(self, fit, logs, *args, **kwargs):
    kwargs["shuffle"] = False
    history = fit(self, *args, **kwargs)
    logs.append(history.history)
    return history


def _no_shuffle(cls, *args, **kwargs):
    kwargs["shuffle"] = False
    return cls(*args, **kwargs)


def _printed_loss(result) -> str:
    printer: ProgramPrinter = result.training_printer
    return printer.loss_expr(_fact(result, "loss_object").config)
