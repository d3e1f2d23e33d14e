"""Keras/TensorFlow patches of a real-world run (imported by this folder's sitecustomize).

Records the per-batch logs of the first ``fit``, ``train_on_batch`` losses and every
``GradientTape.gradient`` target outside Keras' own train step (eager or inside a
``tf.function``: there through a ``tf.py_function`` that reads the value as the step runs);
saves the initial weights of the trained model (``RW_SAVE_WEIGHTS``: at the first fit,
train_on_batch or gradient) and loads converted ones (``RW_LOAD_WEIGHTS``, the PyTorch -> Keras
direction's translations) into the first model they fit, before its first call.
"""

import functools
import inspect
import os
import sys
import weakref

from sitecustomize import (RECORD, _NEUTRALISE, _PREDICT_STEPS, _STEPS, _event, _planted, _scalar, _write_record,
                           after_import)

_SAVE = os.environ.get("RW_SAVE_WEIGHTS")
_LOAD = os.environ.get("RW_LOAD_WEIGHTS")
_models = {"top": [], "depth": 0, "tried": set()}  # outermost models called (weak references, latest last)


def _save_model(model, how, unbuilt_ok=False):
    """Save ``model``'s weights as the run's initial weights. A model ``fit`` has not built (a
    subclassed wrapper with its own train_step) is left for the first gradient (``unbuilt_ok``:
    its layers hold their variables by then, still untrained, and are saved)."""
    if not _SAVE or RECORD["weights_saved"] is not None or str(os.getpid()) != os.environ.get("RW_ROOT_PID"):
        return  # (a worker process never overwrites the run's initial weights)
    if not model.built and not unbuilt_ok:
        _models["pending"] = weakref.ref(model)
        return
    try:
        import tensorflow as tf

        was = model.built
        with tf.init_scope():  # inside a tf.function's trace: the variables' values, eagerly
            model.built = True
            try:
                model.save_weights(_SAVE)
            finally:
                model.built = was
        RECORD["weights_saved"] = {"path": _SAVE, "model": type(model).__name__,
                                   "class_module": type(model).__module__, "at": how}
    except Exception as exc:
        RECORD["weights_saved"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    _write_record()


def _load_into(model, when):
    """Load the converted initial weights into ``model`` if they fit it (once per model)."""
    if not _LOAD or RECORD["weights_loaded"] is not None or id(model) in _models["tried"] or not model.built:
        return
    _models["tried"].add(id(model))
    try:
        import tensorflow as tf

        with tf.init_scope():
            model.load_weights(_LOAD)
        RECORD["weights_loaded"] = {"module": type(model).__name__, "at": when,
                                    "after_losses": len(RECORD["tape"]) + len(RECORD["losses"]) + len(RECORD["logs"])}
    except Exception as exc:
        _event(f"initial weights do not fit {type(model).__name__}: {type(exc).__name__}: {exc}"[:300])
    _write_record()
_NOISE = {"Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianDropout",
          "GaussianNoise", "AlphaDropout", "ActivityRegularization_"}
_state = {"fits": 0, "inference": set()}
#: a hand-written loop over an unbatched tf.data dataset of at most this many elements (known
#: cardinality) is not capped: a few-shot program reads every example of a small stand-in into
#: its own tables (a loop over batches, a training loop, stays capped)
_SMALL_DATASET = 256


@after_import("keras.src.utils.file_utils")
def _waive_hashes_of_standins(mod):
    real = mod.validate_file
    planted = _planted()

    @functools.wraps(real)
    def validate_file(fpath, file_hash, *args, **kwargs):
        if os.path.realpath(fpath) in planted:
            _event(f"hash check waived for stand-in {os.path.basename(fpath)}")
            return True
        return real(fpath, file_hash, *args, **kwargs)

    mod.validate_file = validate_file


@after_import("keras")
def _path_fnames_as_earlier_keras(keras):
    """``get_file(fname=<a path>)``: Keras 3 refuses a path ("Paths are no longer accepted as the
    `fname` argument"), earlier Keras saved the download there. Programs written then (the path's
    folder is where they read the data) get its file name, ``cache_dir`` unchanged; the run's
    record says so."""
    from keras.src.utils import file_utils

    real = file_utils.get_file
    sig = inspect.signature(real)

    @functools.wraps(real)
    def get_file(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        fname = bound.arguments.get("fname")
        if isinstance(fname, (str, os.PathLike)) and os.sep in os.fspath(fname):
            bound.arguments["fname"] = os.path.basename(os.fspath(fname))
            _event(f"get_file: the path fname {os.fspath(fname)!r} given as its name "
                   f"{bound.arguments['fname']!r} (refused by Keras 3)")
        return real(*bound.args, **bound.kwargs)

    for mod in (file_utils, sys.modules.get("keras.utils"), sys.modules.get("keras.src.utils")):
        if mod is not None and getattr(mod, "get_file", None) is real:
            mod.get_file = get_file


def _make_recorder(keras):
    class _Recorder(keras.callbacks.Callback):
        """Per-batch logs of the first fit (Keras logs running means over the epoch)."""

        def __init__(self, fit_index):
            super().__init__()
            self.fit_index = fit_index

        def on_train_begin(self, logs=None):
            if self.fit_index == 0:
                owner = next(c for c in type(self.model).__mro__ if "train_step" in vars(c))
                RECORD["custom_train_step"] = owner.__module__.startswith("keras.") is False
                RECORD["fit_model"] = type(self.model).__name__
                _write_record()
            if self.fit_index == 0:
                _load_into(self.model, "fit")
                _save_model(self.model, "fit")

        def on_train_batch_end(self, batch, logs=None):
            if self.fit_index == 0 and batch < _STEPS:
                RECORD["logs"].append({k: _scalar(v) for k, v in (logs or {}).items()})
                _write_record()

    return _Recorder


@after_import("keras.src.backend.tensorflow.trainer")
def _cap_fit(mod):
    import keras

    trainer = mod.TensorFlowTrainer
    fit, evaluate = trainer.fit, trainer.evaluate
    fit_sig, eval_sig = inspect.signature(fit), inspect.signature(evaluate)
    recorders = []

    def recorder(index):
        if not recorders:
            recorders.append(_make_recorder(keras))
        return recorders[0](index)

    @functools.wraps(fit)
    def capped_fit(self, *args, **kwargs):
        bound = fit_sig.bind(self, *args, **kwargs)
        a = bound.arguments
        a["epochs"] = min(int(a.get("epochs", 1) or 1), 1)
        a["initial_epoch"] = 0
        steps = a.get("steps_per_epoch")
        a["steps_per_epoch"] = _STEPS if steps is None else min(int(steps), _STEPS)
        if a.get("validation_data") is not None or a.get("validation_split"):
            vsteps = a.get("validation_steps")
            a["validation_steps"] = _STEPS if vsteps is None else min(int(vsteps), _STEPS)
        if _NEUTRALISE:
            a["shuffle"] = False
        callbacks = list(a.get("callbacks") or [])
        callbacks.append(recorder(_state["fits"]))
        a["callbacks"] = callbacks
        _state["fits"] += 1
        _event(f"fit #{_state['fits']}: epochs 1, steps_per_epoch {a['steps_per_epoch']}")
        return fit(*bound.args, **bound.kwargs)

    @functools.wraps(evaluate)
    def capped_evaluate(self, *args, **kwargs):
        bound = eval_sig.bind(self, *args, **kwargs)
        steps = bound.arguments.get("steps")
        bound.arguments["steps"] = _STEPS if steps is None else min(int(steps), _STEPS)
        return evaluate(*bound.args, **bound.kwargs)

    predict = trainer.predict
    predict_sig = inspect.signature(predict)

    @functools.wraps(predict)
    def capped_predict(self, *args, **kwargs):
        bound = predict_sig.bind(self, *args, **kwargs)
        a = bound.arguments
        x, steps = a.get("x"), a.get("steps")
        n = getattr(x, "shape", None)
        batches = None
        if n is not None and len(n):
            batches = -(-int(n[0]) // int(a.get("batch_size") or 32))
        if steps is not None:
            a["steps"] = min(int(steps), _PREDICT_STEPS)
        elif batches is None:  # a dataset or generator (an array's output keeps its length)
            a["steps"] = _PREDICT_STEPS
            _event(f"predict capped at {_PREDICT_STEPS} batches")
        return predict(*bound.args, **bound.kwargs)

    trainer.fit, trainer.evaluate, trainer.predict = capped_fit, capped_evaluate, capped_predict

    real_tob = trainer.train_on_batch

    @functools.wraps(real_tob)
    def train_on_batch(self, *args, **kwargs):
        if self.built:
            _load_into(self, "train_on_batch")
            _save_model(self, "train_on_batch")
        out = real_tob(self, *args, **kwargs)
        value = _scalar(out[0] if isinstance(out, (list, tuple)) and out else out)
        if value is not None and len(RECORD["losses"]) < 50:
            RECORD["losses"].append(value)
            _write_record()
        return out

    trainer.train_on_batch = train_on_batch


def _centre_crop_call(keras, real_call):
    """RandomCrop's inference behaviour as Keras documents it (and as the translations write it):
    the centred box of the target's aspect ratio, resized (bilinear) to the target size. Keras 3's
    own inference path returns the image uncropped, so a model cropping 52 -> 48 in training would
    see 52 x 52 images and fail (shiftvit): not a neutral form of the crop."""
    ops = keras.ops

    @functools.wraps(real_call)
    def call(self, data, training=True):
        if isinstance(data, dict) or getattr(self, "data_format", "channels_last") != "channels_last":
            return real_call(self, data, training=False)
        if "RandomCrop" not in _state["inference"]:
            _state["inference"].add("RandomCrop")
            _event("RandomCrop in inference behaviour (random augmentation/noise neutralised: centred crop, resized)")
        shape = data.shape
        h_in, w_in = int(shape[-3]), int(shape[-2])
        ch = max(min(h_in, int(float(w_in * self.height) / self.width)), 1)
        cw = max(min(w_in, int(float(h_in * self.width) / self.height)), 1)
        hs, ws = int(float(h_in - ch) / 2), int(float(w_in - cw) / 2)
        images = ops.cast(data, self.compute_dtype)
        images = images[..., hs:hs + ch, ws:ws + cw, :]
        if (ch, cw) != (self.height, self.width):
            images = ops.cast(ops.image.resize(images, (self.height, self.width), interpolation="bilinear"),
                              self.compute_dtype)
        return images

    call._rw_inference = True
    return call


@after_import("keras")
def _neutralise_noise(keras):
    if not _NEUTRALISE:
        return
    for name, cls in list(vars(keras.layers).items()):
        if not isinstance(cls, type) or not (name in _NOISE or name.startswith("Random")):
            continue
        call = cls.call
        if getattr(call, "_rw_inference", False):
            continue

        if name == "RandomCrop":
            cls.call = _centre_crop_call(keras, call)
            continue
        has_training = "training" in inspect.signature(call).parameters

        @functools.wraps(call)
        def inference_call(self, *args, __call=call, __has=has_training, __name=name, **kwargs):
            if __has:
                kwargs["training"] = False
            if __name not in _state["inference"]:
                _state["inference"].add(__name)
                _event(f"{__name} in inference behaviour (random augmentation/noise neutralised)")
            return __call(self, *args, **kwargs)

        inference_call._rw_inference = True
        cls.call = inference_call

    def no_dropout(inputs, rate, noise_shape=None, seed=None):
        return inputs

    keras.random.dropout = no_dropout


#: packages whose Layer subclasses are the framework's own (their training flag is left alone)
_FRAMEWORK_PACKAGES = ("keras", "tensorflow", "tf_keras", "keras_hub", "keras_nlp", "keras_cv")


def _program_layer_in_inference(cls, model_cls):
    """A Layer subclass the program defines (not a Model) whose ``call`` takes ``training``: its
    own ``if training:`` branches (stochastic depth, a hand-written noise or dropout: draws a
    torch run cannot share) take the inference path; the layers it calls keep the call context's
    mode (BatchNormalization keeps batch statistics). The same as the torch side, where each module
    of the program runs its forward with its own flag off and torch's modules keep theirs."""
    call = vars(cls).get("call")
    if call is None or getattr(call, "_rw_inference", False) or issubclass(cls, model_cls) or \
            (cls.__module__ or "").split(".")[0] in _FRAMEWORK_PACKAGES:
        return
    try:
        if "training" not in inspect.signature(call).parameters:
            return
    except (TypeError, ValueError):
        return

    @functools.wraps(call)
    def inference_call(self, *args, __call=call, __name=cls.__name__, **kwargs):
        kwargs["training"] = False
        if __name not in _state["inference"]:
            _state["inference"].add(__name)
            _event(f"{__name} (the program's layer): its own training branches in inference behaviour "
                   "(random augmentation/noise neutralised)")
        return __call(self, *args, **kwargs)

    inference_call._rw_inference = True
    cls.call = inference_call


@after_import("keras.src.models.model")
def _neutralise_program_layers(mod):
    if not _NEUTRALISE:
        return
    from keras.src.layers.layer import Layer

    model_cls = mod.Model
    previous = Layer.__dict__.get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if previous is not None:
            previous.__func__(cls, **kwargs)
        else:
            super(Layer, cls).__init_subclass__(**kwargs)
        _program_layer_in_inference(cls, model_cls)

    Layer.__init_subclass__ = classmethod(__init_subclass__)


@after_import("keras.src.models.model")
def _track_models(mod):
    """The outermost models called (the candidates for the initial weights, saved or loaded)."""
    model_cls = mod.Model
    real = model_cls.__call__

    @functools.wraps(real)
    def __call__(self, *args, **kwargs):
        outer = _models["depth"] == 0
        if outer:
            top = _models["top"]
            if not top or top[-1]() is not self:
                top.append(weakref.ref(self))
                del top[:-8]
            _load_into(self, "first call")
        _models["depth"] += 1
        try:
            out = real(self, *args, **kwargs)
        finally:
            _models["depth"] -= 1
        if outer and _LOAD and RECORD["weights_loaded"] is None and id(self) not in _models["tried"]:
            _load_into(self, "after its first call (built by it)")
        return out

    model_cls.__call__ = __call__


def _model_of(sources):
    """The called model holding the most of ``sources`` (the variables a gradient is taken for)."""
    ids = {id(v) for v in _flat(sources)}
    best, best_n = None, 0
    for ref in reversed(_models["top"]):
        m = ref()
        if m is None:
            continue
        n = sum(1 for v in m.trainable_variables if id(v) in ids or id(getattr(v, "value", None)) in ids)
        if n > best_n:
            best, best_n = m, n
    return best


def _flat(x):
    if isinstance(x, (list, tuple)):
        for item in x:
            yield from _flat(item)
    elif isinstance(x, dict):
        for item in x.values():
            yield from _flat(item)
    elif x is not None:
        yield x


@after_import("tensorflow.python.data.ops.dataset_ops")
def _datasets(mod):
    if _NEUTRALISE:
        def shuffle(self, *args, **kwargs):
            return self

        mod.DatasetV2.shuffle = shuffle

    real_iter = mod.DatasetV2.__iter__

    def capped_iter(self):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith(("keras", "tensorflow", "tf_keras")):  # adapt, fit, predict: their own caps
            return real_iter(self)
        try:  # a small unbatched dataset of known size (examples read into tables) is read whole
            n = int(self.cardinality())
        except Exception:
            n = -1
        if 0 <= n <= _SMALL_DATASET and not _batched(self):
            return real_iter(self)
        return _capped(real_iter(self))

    def _batched(ds):
        seen = 0
        while ds is not None and seen < 100:
            if "Batch" in type(ds).__name__:
                return True
            ds, seen = getattr(ds, "_input_dataset", None), seen + 1
        return False

    def _capped(it):
        for i, item in enumerate(it):
            if i >= _PREDICT_STEPS:
                _event(f"a loop over a tf.data dataset capped at {_PREDICT_STEPS} batches")
                return
            yield item

    mod.DatasetV2.__iter__ = capped_iter


@after_import("tensorflow.python.eager.backprop")
def _record_tape_losses(mod):
    """Each gradient's target outside Keras' own train step (a custom loop or train_step)."""
    tape = mod.GradientTape
    real = tape.gradient

    def record(value):
        v = _scalar(value)
        if v is not None and len(RECORD["tape"]) < 50:
            RECORD["tape"].append(v)
            _write_record()

    @functools.wraps(real)
    def gradient(self, target, sources, *args, **kwargs):
        _state["gradients"] = _state.get("gradients", 0) + 1  # (a training pass of a loader: _cap_loader)
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith("keras.src.backend.tensorflow.trainer") or len(RECORD["tape"]) >= 50:
            return real(self, target, sources, *args, **kwargs)
        if RECORD["weights_saved"] is None and _SAVE:
            pending = _models.get("pending")
            model = (pending() if pending else None) or _model_of(sources)
            if model is not None:
                _save_model(model, "first gradient" + (" (fit's model)" if pending else ""), unbuilt_ok=True)
        import tensorflow as tf

        if hasattr(target, "numpy"):
            record(target.numpy())
        elif isinstance(target, tf.Tensor) and target.shape.num_elements() == 1:
            try:  # inside a tf.function: read the value as the graph runs (stateful: always runs)
                tf.py_function(lambda t: record(t.numpy()), [tf.stop_gradient(target)], [])
            except Exception as exc:
                _event(f"a traced gradient's loss not recorded: {type(exc).__name__}: {exc}"[:200])
        return real(self, target, sources, *args, **kwargs)

    tape.gradient = gradient


@after_import("numpy.random")
def _generated_loaders_in_order(mod):
    """The translations' DataLoader stand-ins (transpiler/runtime/keras/data.py: ``ArrayLoader``,
    ``DatasetLoader``, copied into the program) draw their order with ``np.random.permutation``
    in ``__iter__`` when shuffle is set: in order, as the original's DataLoader is made to be."""
    if not _NEUTRALISE:
        return
    real = mod.permutation

    @functools.wraps(real)
    def permutation(x, *args, **kwargs):
        frame = sys._getframe(1)
        owner = frame.f_locals.get("self") if frame.f_code.co_name == "__iter__" else None
        if owner is not None and type(owner).__name__.endswith("Loader") and getattr(owner, "shuffle", False) \
                and isinstance(x, int):
            if not _state.get("loader_order"):
                _state["loader_order"] = True
                _event(f"{type(owner).__name__} shuffle=True set to False")
            import numpy as np

            return np.arange(x)
        return real(x, *args, **kwargs)

    mod.permutation = permutation


def _cap_loader(cls):
    """A translation's DataLoader stand-in (``ArrayLoader``/``DatasetLoader`` of
    transpiler/runtime/keras/data.py, copied into the program) capped as the original's
    DataLoader is (sitecustomize's torch patch): a training pass (a gradient taken while it
    runs) stops after RW_STEPS batches; an inference pass over arrays (ArrayLoader, torch's
    TensorDataset) is whole, over a map-style dataset it stops after RW_PREDICT_STEPS."""
    real_iter = cls.__dict__.get("__iter__")
    if real_iter is None:
        return

    def capped_iter(self):
        start = _state.get("gradients", 0)
        whole = type(self).__name__ == "ArrayLoader"
        for i, batch in enumerate(real_iter(self)):
            if i >= _STEPS and _state.get("gradients", 0) > start:
                _event(f"{type(self).__name__}: a training pass capped at {_STEPS} batches")
                return
            if i >= _PREDICT_STEPS and not whole:
                _event(f"{type(self).__name__}: an inference pass capped at {_PREDICT_STEPS} batches")
                return
            yield batch

    cls.__iter__ = capped_iter


def _generated_loaders_capped():
    import builtins

    real = builtins.__build_class__

    def build_class(func, name, *bases, **kwargs):
        cls = real(func, name, *bases, **kwargs)
        if name.endswith("Loader") and (getattr(cls, "__doc__", None) or "").startswith("torch's DataLoader"):
            _cap_loader(cls)
        return cls

    builtins.__build_class__ = build_class


_generated_loaders_capped()


@after_import("keras.src.random.seed_generator")
def _keras_seeds_off_pythons_random(mod):
    """Keras draws a default seed for each unseeded initializer or random layer from Python's
    ``random`` (``make_default_seed``), torch from its own generator: a program's own
    ``random`` draws (a Dataset's random pairs) would follow different streams in the two runs.
    Keras' seeds come from a generator of their own here (fixed: the run stays deterministic)."""
    if not _NEUTRALISE:
        return
    import random

    mod.python_random = random.Random(0)
