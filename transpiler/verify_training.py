"""Training equivalence: the Keras program and the generated torch program trained from
the same initial weights on the same batches, step by step.

Keras' ``train_on_batch`` and the generated ``train_step`` (with the generated optimizer
and loss functions) run on the same synthetic batches; the per-step losses are returned
side by side. Dropout is inactive on both sides (rate 0): the frameworks draw different
masks. Both sides run in float64: Adam-family optimizers turn float32 rounding noise in
near-zero gradients into full-size steps, so float32 runs of two correct implementations
drift apart chaotically; float64 isolates the semantics being compared.

Imports both frameworks (torch first); used by ``transpile verify``, the tests and bench/.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import torch  # noqa: F401  (before TensorFlow: a process holding both loads torch first)

import keras

from transpiler import verify
from transpiler.ir import training as T
from transpiler.printers.torch.training import TrainingPrinter
from transpiler.translate import translate

STEPS = 20
KERAS_OPTIMIZERS = {"adam": "Adam", "adamw": "AdamW", "sgd": "SGD", "rmsprop": "RMSprop", "adagrad": "Adagrad",
                    "adadelta": "Adadelta", "adamax": "Adamax", "nadam": "Nadam"}
_counter = itertools.count()


def _load_source(source: str):
    """Import Keras source text as a module (its __main__ block does not run)."""
    return verify.load_generated(source, f"keras_program_{next(_counter)}")


def prepare(path: str, exact: bool = False, own_weights: bool = False):
    """``own_weights``: the torch model keeps the weights its generated code draws (seed 0)
    instead of Keras' initial weights."""
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    result = translate(source, path, exact=exact)
    compiles = [ts for ts in result.program.training if ts.kind == "compile"]
    if compiles:
        ts = compiles[0]
        md = ts.model_def
    else:  # a custom loop: its optimizer and loss objects say how it trains
        by_kind = {t.kind: t for t in result.program.training}
        assert "optimizer_object" in by_kind and "loss_object" in by_kind, "the program trains its model"
        md = result.program.models[0]
        ts = T.TrainingStatement("compile", "model", T.Compile(by_kind["optimizer_object"].config,
                                                               [by_kind["loss_object"].config]))
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    keras.utils.set_random_seed(1)  # Keras' initializers draw: the same start on every run
    keras.config.set_floatx("float64")
    try:
        kmodel = getattr(_load_source(source), md.builder)()
    finally:
        keras.config.set_floatx("float32")
    # Keras' own initial weights: the program's real starting point (own_weights: the torch
    # program's, drawn by its generated code)
    torch.manual_seed(0)
    tmodel = getattr(generated, md.builder)().double()
    if not own_weights:
        tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    # dropout off on both sides (custom layers' own dropout too): the masks cannot match
    for layer in kmodel._flatten_layers(include_self=False, recursive=True):
        if hasattr(layer, "rate"):
            layer.rate = 0.0
        if isinstance(layer, keras.layers.Rescaling):
            # Rescaling casts its Python-float scale through a float32 tensor (tf.cast of a
            # float): 1/255 is off by 6e-8 in a float64 model. float32 runs are unaffected;
            # the float64 reference keeps the exact constants, as the generated code does.
            layer.scale, layer.offset = np.float64(layer.scale), np.float64(layer.offset)
    for module in tmodel.modules():
        if isinstance(module, torch.nn.modules.dropout._DropoutNd):
            module.p = 0.0
    return result, ts, md, generated, kmodel, tmodel


def batches(md, losses: list[T.Loss], n: int, batch: int = 8, seed: int = 0):
    rng = np.random.RandomState(seed)
    graph = md.graph
    out = []
    for _ in range(n):
        xs = [verify.random_inputs(graph, batch, seed=rng.randint(1 << 30))[i] for i in range(len(graph.inputs))]
        ys = []
        for loss, value in zip(losses, graph.outputs):
            # a free size (a sequence of any length) is the one random_inputs gives the inputs
            shape = (batch, *(verify._FREE_SIZE if d is None else d for d in verify._source_shape(value)[1:]))
            if loss.kind == "sparse_categorical_crossentropy":
                ys.append(rng.randint(0, shape[-1], size=shape[:-1]).astype("int64"))
            elif loss.kind == "categorical_crossentropy":
                ys.append(np.eye(shape[-1], dtype="float32")[rng.randint(0, shape[-1], size=shape[:-1])])
            elif loss.kind == "binary_crossentropy":
                ys.append(rng.randint(0, 2, size=shape).astype("float32"))
            else:
                ys.append(rng.standard_normal(shape).astype("float32"))
        out.append((xs, ys))
    return out


def keras_optimizer(opt: T.Optimizer):
    kwargs = {k: v for k, v in opt.hyper.items() if v is not None}
    kwargs.update(opt.clip)
    return getattr(keras.optimizers, KERAS_OPTIMIZERS[opt.kind])(**kwargs)


_LOSS_CLASSES = {"sparse_categorical_crossentropy": "SparseCategoricalCrossentropy",
                 "categorical_crossentropy": "CategoricalCrossentropy",
                 "binary_crossentropy": "BinaryCrossentropy"}


_PARAM_LOSS_CLASSES = {"mean_squared_error": "MeanSquaredError", "mean_absolute_error": "MeanAbsoluteError",
                       "huber": "Huber", "kl_divergence": "KLDivergence", "hinge": "Hinge",
                       "cosine_similarity": "CosineSimilarity",
                       "mean_squared_logarithmic_error": "MeanSquaredLogarithmicError",
                       "mean_absolute_percentage_error": "MeanAbsolutePercentageError", "poisson": "Poisson",
                       "log_cosh": "LogCosh"}


def keras_loss(loss: T.Loss):
    kwargs = dict(loss.params)
    if loss.reduction != "mean":
        kwargs["reduction"] = loss.reduction
    if loss.kind in _LOSS_CLASSES:
        return getattr(keras.losses, _LOSS_CLASSES[loss.kind])(from_logits=loss.from_logits, **kwargs)
    if kwargs:
        return getattr(keras.losses, _PARAM_LOSS_CLASSES[loss.kind])(**kwargs)
    return keras.losses.get(loss.kind)


def densify_embedding_gradients(optimizer) -> None:
    """Make a Keras optimizer apply an Embedding table's gradient as the dense tensor it is.

    Keras' TensorFlow backend receives an embedding table's gradient as ``tf.IndexedSlices``
    (one slice per token occurrence, repeats not summed) and its adaptive optimizers square
    the slices before they are summed: a token seen k times in a batch adds sum(g_i**2) to
    Adam's/RMSprop's/Adagrad's second moment where the true gradient gives (sum g_i)**2.
    torch (and the generated program) use the true gradient. Converting the slices to a
    dense tensor before ``apply_gradients`` gives the reference the true gradient too, so a
    comparison isolates the translation from that backend quirk. Verification only: the
    user's Keras program is not changed.
    """
    import tensorflow as tf

    apply_gradients = optimizer.apply_gradients

    def dense_apply_gradients(grads_and_vars, *args, **kwargs):
        pairs = [(tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g, v) for g, v in grads_and_vars]
        return apply_gradients(pairs, *args, **kwargs)

    optimizer.apply_gradients = dense_apply_gradients


def with_float32_betas(opt: T.Optimizer) -> T.Optimizer:
    """``opt`` with ``beta_1``/``beta_2`` rounded to the nearest float32.

    Keras' Adam-family optimizers (TensorFlow backend) compute the bias corrections
    ``1 - beta**t`` from ``ops.cast(self.beta, dtype)``, which turns the Python float into a
    float32 tensor first, while the moment updates use the Python float itself
    (``1 - self.beta``): in a float64 run, ``beta_2=0.999`` is 0.9990000128746 in one place
    and 0.999 in the other, a mix no single torch value reproduces (the first step's size
    differs by 6.4e-6 relative). With float32-representable betas on both sides the mix
    disappears. Verification only.
    """
    hyper = {k: float(np.float32(v)) if k in ("beta_1", "beta_2") and v is not None else v
             for k, v in opt.hyper.items()}
    return dataclasses.replace(opt, hyper=hyper)


def with_float32_hyperparameters(opt: T.Optimizer) -> T.Optimizer:
    """``opt`` with every float hyperparameter (learning rate, momentum, betas, rho,
    epsilon) rounded to the nearest float32.

    Keras keeps some of them as float32 variables or casts them through float32 tensors
    (``learning_rate=0.05`` is 0.0500000007 in the update), others as Python floats; in a
    float64 run that differs from the generated torch optimizer by about 1e-8 relative per
    step, which a chaotic model (resnet_small: SGD with momentum 0.9, learning rate 0.05,
    BatchNorm) amplifies to percent-level loss differences within 20 steps. float32 runs
    are unaffected. With float32-representable values on both sides the difference goes.
    Verification only.
    """
    hyper = {k: float(np.float32(v)) if isinstance(v, float) else v for k, v in opt.hyper.items()}
    return dataclasses.replace(opt, hyper=hyper)


def run_both(path: str, optimizer: T.Optimizer | None = None, steps: int = STEPS, sample_weights: bool = False,
             dense_embedding_gradients: bool = False, float32_betas: bool = False,
             float32_hyperparameters: bool = False, exact: bool = False, own_weights: bool = False):
    """Per-step losses (keras, torch) for ``path`` trained with its own compile config
    (or with ``optimizer`` instead of its own); ``sample_weights``: every batch carries
    random per-sample weights (as fit's sample_weight/class_weight produce);
    ``dense_embedding_gradients``: the Keras reference applies embedding gradients densely
    (see ``densify_embedding_gradients``); ``float32_betas``: both sides train with the
    optimizer's betas rounded to float32 (see ``with_float32_betas``); ``float32_hyperparameters``:
    all its float hyperparameters (see ``with_float32_hyperparameters``); ``exact``:
    the torch side is the program generated with ``--exact`` (its model, with KerasEmbedding,
    and its Keras optimizer classes; without it torch's own optimizers); ``own_weights``: the
    torch model starts from the weights its own code draws (seed 0), not Keras'."""
    result, ts, md, generated, kmodel, tmodel = prepare(path, exact, own_weights)
    config: T.Compile = ts.config
    opt = optimizer or config.optimizer
    if float32_betas:
        opt = with_float32_betas(opt)
    if float32_hyperparameters:
        opt = with_float32_hyperparameters(opt)
    if md.graph.from_keras.custom_step:
        return run_custom_step(result, md, generated, kmodel, tmodel, opt, steps)
    if opt is not config.optimizer or not getattr(kmodel, "compiled", False):
        keras.config.set_floatx("float64")  # the loss computes in float64 too
        try:
            kmodel.compile(optimizer=keras_optimizer(opt), loss=[keras_loss(l) for l in config.losses]
                           if len(config.losses) > 1 else keras_loss(config.losses[0]),
                           loss_weights=config.loss_weights)
        finally:
            keras.config.set_floatx("float32")
    # else: the builder compiled the model itself: Keras trains with the program's own objects
    if dense_embedding_gradients:
        densify_embedding_gradients(kmodel.optimizer)
    printer = TrainingPrinter(result.program)
    printer.run()
    namespace = dict(vars(generated))
    namespace.update(model=tmodel, math=__import__("math"), torch=torch)
    expr = printer.optimizer_expr("model", opt)
    for text in printer.optimizer_classes.values():  # classes the program would carry for it
        exec(text, namespace)
    topt = eval(expr, namespace)  # the generated optimizer code
    loss_fns = [eval(printer.loss_name(loss, i in md.graph.logits_outputs), namespace)
                for i, loss in enumerate(config.losses)]  # the generated loss expressions
    weights = config.loss_weights or [1.0] * len(loss_fns)
    step = getattr(generated, "train_step", None)
    custom_loop = step is None and not any(t.kind == "compile" for t in result.program.training)
    if custom_loop:
        step = loop_step
    elif step is None or opt.clip or sample_weights:  # the printer's train_step with what the
        from transpiler.printers import runtime_prune  # program's lacks

        features = ({"clip"} if opt.clip else set()) | ({"weights"} if sample_weights else set()) | \
            ({"regularization"} if hasattr(tmodel, "regularization_loss") else set()) | \
            ({"logits"} if md.graph.logits_outputs else set())
        exec(runtime_prune.specialise("torch.loop", "train_step", frozenset(features)), namespace)
        step = namespace["train_step"]
    rng = np.random.RandomState(7)
    k_losses, t_losses = [], []
    draws = SameUniformDraws(kmodel)
    with draws:
        for xs, ys in batches(md, config.losses, steps):
            k, t = _one_step(kmodel, tmodel, md, step, topt, loss_fns, weights, opt, xs, ys, rng, sample_weights)
            k_losses.append(k)
            t_losses.append(t)
    draws.check()
    return np.array(k_losses), np.array(t_losses)


def _one_step(kmodel, tmodel, md, step, topt, loss_fns, weights, opt, xs, ys, rng, sample_weights):
    """One batch through Keras' train_on_batch and the generated train_step: (keras, torch) losses."""
    xs = [x.astype("float64") if x.dtype.kind == "f" else x for x in xs]
    ys = [y.astype("float64") if y.dtype.kind == "f" else y for y in ys]
    w = rng.uniform(0.2, 3.0, size=len(xs[0])) if sample_weights else None
    k = kmodel.train_on_batch(xs if len(xs) > 1 else xs[0], ys if len(ys) > 1 else ys[0], sample_weight=w)
    t_in = [verify.torch_input(x, v.layout) for x, v in zip(xs, md.graph.inputs)]
    t_in = [t if isinstance(t, np.ndarray) else t.double() if t.is_floating_point() else t.long() for t in t_in]
    t_out = [torch.from_numpy(verify.to_target_layout(y, v.layout)) for y, v in zip(ys, md.graph.outputs)]
    extra = (torch.from_numpy(w),) if sample_weights else ()
    loss, _ = step(tmodel, topt, loss_fns, weights, t_in, t_out, *extra, **opt.clip)
    return float(np.asarray(k).reshape(-1)[0]), loss


class SameUniformDraws:
    """Random augmentation (RandomFlip, ...) draws the same numbers on both sides: the n-th
    uniform draw of Keras' backend (``random.uniform``) and the n-th ``torch.rand`` /
    ``torch.rand_like`` of the generated code are the n-th array of one stream (the two
    frameworks' generators cannot be seeded alike). Active only for a Keras model holding a
    random preprocessing layer; Keras then runs eagerly (a traced step would draw once, at
    trace time, and replay the same flips every step)."""

    def __init__(self, kmodel):
        self.active = any(type(layer).__name__.startswith("Random")
                          for layer in kmodel._flatten_layers(include_self=False, recursive=True))
        self.rng = np.random.RandomState(5)
        self.noise: list[np.ndarray] = []
        self.drawn = {"keras": 0, "torch": 0}
        if self.active:
            kmodel.run_eagerly = True

    def draw(self, side: str, shape) -> np.ndarray:
        shape = tuple(int(d) for d in shape)
        index = self.drawn[side]
        while len(self.noise) <= index:
            self.noise.append(self.rng.uniform(size=4096))
        self.drawn[side] += 1
        size = int(np.prod(shape))
        assert size <= 4096, shape
        return self.noise[index][:size].reshape(shape)

    def __enter__(self):
        if not self.active:
            return self
        from keras.src.backend.tensorflow import random as tf_random

        self.saved = tf_random.uniform, torch.rand, torch.rand_like

        def keras_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
            u = self.draw("keras", shape)
            return keras.ops.convert_to_tensor(minval + (maxval - minval) * u, dtype=dtype or "float32")

        def torch_rand(*size, dtype=None, device=None, **kwargs):
            shape = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else size
            return torch.from_numpy(self.draw("torch", shape)).to(dtype or torch.get_default_dtype())

        def torch_rand_like(t, dtype=None, **kwargs):
            return torch.from_numpy(self.draw("torch", tuple(t.shape))).to(dtype or t.dtype)

        tf_random.uniform, torch.rand, torch.rand_like = keras_uniform, torch_rand, torch_rand_like
        return self

    def __exit__(self, *exc):
        if self.active:
            from keras.src.backend.tensorflow import random as tf_random

            tf_random.uniform, torch.rand, torch.rand_like = self.saved
        return False

    def check(self) -> None:
        """Both sides drew as many arrays (else the draws paired up were not the same ones)."""
        assert self.drawn["keras"] == self.drawn["torch"], self.drawn


def run_custom_step(result, md, generated, kmodel, tmodel, opt: T.Optimizer, steps: int):
    """A model with its own train_step: Keras' fit and the generated module's train_step,
    one batch at a time (the metrics reset before each, so each logs its batch's loss).
    Random draws (``keras.random.normal`` / ``torch.randn_like``) take the same numbers on
    both sides: the n-th draw of each side is the n-th array of one stream."""
    import torch as _torch

    printer = TrainingPrinter(result.program)
    printer.run()
    namespace = dict(vars(generated))
    namespace.update(model=tmodel, math=__import__("math"), torch=_torch)
    for text in printer.optimizer_classes.values():
        exec(text, namespace)
    tmodel.optimizer = eval(printer.optimizer_expr("model", opt), namespace)
    kmodel.compile(optimizer=keras_optimizer(opt), run_eagerly=True)
    rng = np.random.RandomState(3)
    noise = [rng.standard_normal(4096) for _ in range(4 * steps)]
    drawn = {"keras": 0, "torch": 0}

    def draw(side: str, shape) -> np.ndarray:
        size = int(np.prod(shape))
        out = noise[drawn[side]][:size].reshape(shape)
        drawn[side] += 1
        return out

    def keras_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
        return keras.ops.convert_to_tensor(mean + stddev * draw("keras", tuple(int(d) for d in shape)),
                                           dtype="float64")

    def torch_randn_like(t, **kwargs):
        return _torch.from_numpy(draw("torch", tuple(t.shape))).to(t.dtype)

    graph = md.graph
    fits = [ts for ts in result.program.training if ts.kind == "fit" and ts.model_def is md]
    with_targets = bool(fits) and fits[0].config.y is not None  # train_step(data) gets (x, y)
    data = np.random.RandomState(0)
    batch = 8
    k_losses, t_losses = [], []
    saved = keras.random.normal, _torch.randn_like
    keras.random.normal, _torch.randn_like = keras_normal, torch_randn_like
    keras.config.set_floatx("float64")  # fit's data adapter casts the batches to floatx
    try:
        for _ in range(steps):
            xs = [data.uniform(0.0, 1.0, size=(batch, *verify._source_shape(v)[1:])) for v in graph.inputs]
            ys = [data.standard_normal((batch, *verify._source_shape(v)[1:])) for v in graph.outputs]
            y = (ys if len(ys) > 1 else ys[0]) if with_targets else None
            history = kmodel.fit(xs if len(xs) > 1 else xs[0], y, batch_size=batch, epochs=1, shuffle=False,
                                 verbose=0)
            k_losses.append(float(history.history["loss"][0]))
            for metric in tmodel.metrics:
                metric.reset_state()
            tmodel.train()
            t_in = [_torch.from_numpy(verify.to_target_layout(x, v.layout)) for x, v in zip(xs, graph.inputs)]
            if with_targets:
                t_in += [_torch.from_numpy(verify.to_target_layout(y, v.layout)) for y, v in zip(ys, graph.outputs)]
            logs = tmodel.train_step(t_in[0] if len(t_in) == 1 else tuple(t_in))
            t_losses.append(float(logs["loss"]))
    finally:
        keras.random.normal, _torch.randn_like = saved
        keras.config.set_floatx("float32")
    assert drawn["keras"] == drawn["torch"], drawn
    return np.array(k_losses), np.array(t_losses)


def loop_step(model, optimizer, loss_fns, weights, inputs, targets):
    """What a translated GradientTape loop body does (model.train, zero_grad, backward, step)."""
    model.train()
    optimizer.zero_grad()
    loss = loss_fns[0](model(*inputs), targets[0]).mean()
    loss.backward()
    optimizer.step()
    return loss.item(), None
