"""Keras/TensorFlow patches of a real-world run (imported by this folder's sitecustomize)."""

import functools
import inspect
import os

from sitecustomize import RECORD, _NEUTRALISE, _STEPS, _event, _planted, _scalar, _write_record, after_import

_SAVE = os.environ.get("RW_SAVE_WEIGHTS")
_NOISE = {"Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianDropout",
          "GaussianNoise", "AlphaDropout", "ActivityRegularization_"}
_state = {"fits": 0}


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
            if self.fit_index == 0 and _SAVE and RECORD["weights_saved"] is None:
                try:
                    self.model.save_weights(_SAVE)
                    RECORD["weights_saved"] = {"path": _SAVE, "model": type(self.model).__name__,
                                               "class_module": type(self.model).__module__}
                except Exception as exc:
                    RECORD["weights_saved"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                _write_record()

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

    trainer.fit, trainer.evaluate = capped_fit, capped_evaluate

    real_tob = trainer.train_on_batch

    @functools.wraps(real_tob)
    def train_on_batch(self, *args, **kwargs):
        if _SAVE and RECORD["weights_saved"] is None and self.built:
            try:
                self.save_weights(_SAVE)
                RECORD["weights_saved"] = {"path": _SAVE, "model": type(self).__name__}
            except Exception as exc:
                RECORD["weights_saved"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        out = real_tob(self, *args, **kwargs)
        value = _scalar(out[0] if isinstance(out, (list, tuple)) and out else out)
        if value is not None and len(RECORD["losses"]) < 50:
            RECORD["losses"].append(value)
            _write_record()
        return out

    trainer.train_on_batch = train_on_batch


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

        has_training = "training" in inspect.signature(call).parameters

        @functools.wraps(call)
        def inference_call(self, *args, __call=call, __has=has_training, **kwargs):
            if __has:
                kwargs["training"] = False
            return __call(self, *args, **kwargs)

        inference_call._rw_inference = True
        cls.call = inference_call

    def no_dropout(inputs, rate, noise_shape=None, seed=None):
        return inputs

    keras.random.dropout = no_dropout


@after_import("tensorflow.python.data.ops.dataset_ops")
def _no_dataset_shuffle(mod):
    if not _NEUTRALISE:
        return

    def shuffle(self, *args, **kwargs):
        return self

    mod.DatasetV2.shuffle = shuffle


@after_import("tensorflow.python.eager.backprop")
def _record_tape_losses(mod):
    tape = mod.GradientTape
    real = tape.gradient

    @functools.wraps(real)
    def gradient(self, target, sources, *args, **kwargs):
        if len(RECORD["losses"]) < 50 and hasattr(target, "numpy"):
            value = _scalar(target.numpy())
            if value is not None:
                RECORD["losses"].append(value)
                _write_record()
        return real(self, target, sources, *args, **kwargs)

    tape.gradient = gradient


@after_import("tensorflow_datasets")
def _tfds_mock_data(tfds):
    """tfds.load's stand-in: tensorflow_datasets' own mock_data, random examples of the dataset's
    feature spec (its shapes, dtypes and class counts), nothing downloaded."""
    from tensorflow_datasets.testing import mocking

    ctx = mocking.mock_data(num_examples=int(os.environ.get("RW_TFDS_EXAMPLES", "64")))
    ctx.__enter__()
    _state["tfds_mock"] = ctx  # held for the process's life (a collected context manager exits)
    _event("tfds.load served by tfds.testing.mock_data")
