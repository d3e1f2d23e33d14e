"""torch training idioms in Keras, for generated Keras programs (PyTorch -> Keras):
learning-rate schedules stepped per batch or by the program, loss.backward()/optimizer.step()
on a GradientTape, parameter groups, state_dict copies, checkpoints of other objects
(save_object/load_object), worker processes.
"""

import math

import keras
import numpy as np
import tensorflow as tf


class BatchLearningRateScheduler(keras.callbacks.Callback):
    """LearningRateScheduler per optimizer step: the rate is schedule(step) for the
    step-th update (a torch scheduler stepped after every optimizer.step())."""

    def __init__(self, schedule):
        super().__init__()
        self.schedule = schedule
        self.step = 0

    def on_train_batch_begin(self, batch, logs=None):
        self.model.optimizer.learning_rate = self.schedule(self.step)
        self.step += 1


def one_cycle_rate(step, max_lr, total_steps, pct_start=0.3, anneal_strategy="cos", div_factor=25.0,
                   final_div_factor=1e4, three_phase=False):
    """torch's OneCycleLR rate at optimizer step ``step`` (0-based): from max_lr / div_factor
    up to max_lr over the first pct_start of the steps, then down to
    max_lr / div_factor / final_div_factor (three_phase: back to the start first), each
    phase annealed by cosine or linearly."""
    initial = max_lr / div_factor
    lowest = initial / final_div_factor
    rise = float(pct_start * total_steps) - 1
    if three_phase:
        phases = [(rise, initial, max_lr), (float(2 * pct_start * total_steps) - 2, max_lr, initial),
                  (total_steps - 1, initial, lowest)]
    else:
        phases = [(rise, initial, max_lr), (total_steps - 1, max_lr, lowest)]
    begin = 0
    for i, (end, first, last) in enumerate(phases):
        if step <= end or i == len(phases) - 1:
            pct = (step - begin) / (end - begin)
            if anneal_strategy == "cos":
                return last + (first - last) / 2.0 * (math.cos(math.pi * pct) + 1)
            return (last - first) * pct + first
        begin = end


class StepSchedule:
    """A torch learning-rate scheduler the program steps itself: after n calls of
    step() the optimizer's rate is schedule(n)."""

    def __init__(self, optimizer, schedule):
        self.optimizer = optimizer
        self.schedule = schedule
        self.steps = 0
        optimizer.learning_rate = schedule(0)

    def step(self):
        self.steps += 1
        self.optimizer.learning_rate = self.schedule(self.steps)

    def get_last_lr(self):
        return [float(self.optimizer.learning_rate)]

    def state_dict(self):
        """torch's scheduler.state_dict(): what restores the schedule (its step count)."""
        return {"last_epoch": self.steps}

    def load_state_dict(self, state):
        self.steps = int(state["last_epoch"])
        self.optimizer.learning_rate = self.schedule(self.steps)


def accumulate_gradients(tape, loss, model, gradients=None):
    """loss.backward() for model's weights: the gradient of loss adds to the gradients
    gathered since the model's zero_grad() (None), as torch accumulates them in .grad."""
    with tape.stop_recording():
        new = tape.gradient(loss, model.trainable_variables,
                            unconnected_gradients=tf.UnconnectedGradients.ZERO)
    if gradients is None:
        return new
    return [old + grad for old, grad in zip(gradients, new)]


def apply_gradients(tape, optimizer, model, gradients):
    """optimizer.step(): the gathered gradients update the model's weights."""
    with tape.stop_recording():
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))


def without_weight_decay(optimizer, variables):
    """torch's parameter group with weight_decay=0: the optimizer leaves these variables'
    weights undecayed (the other variables decay as the optimizer says)."""
    optimizer.exclude_from_weight_decay(var_list=variables)
    return optimizer


def with_learning_rates(optimizer, groups):
    """torch's parameter groups with their own learning rates: the variables of each
    (variables, scale) group step with scale times the optimizer's rate (a schedule
    scales every group alike, as torch's schedulers do)."""
    scales = {variable.path: scale for variables, scale in groups for variable in variables}
    update_step = optimizer.update_step

    def scaled_update_step(gradient, variable, learning_rate):
        # (the TensorFlow backend passes its own variable, named after the Keras path)
        path = variable.path if hasattr(variable, "path") else variable.name.split(":")[0]
        return update_step(gradient, variable, learning_rate * scales.get(path, 1.0))

    optimizer.update_step = scaled_update_step
    return optimizer


def read_weights(build, path):
    """torch.load of a state_dict: Keras reads a weights file through a model built for it,
    and the weights (a list of arrays) are held in memory as torch holds the state_dict."""
    model = build()
    model.load_weights(path)
    return model.get_weights()


def save_weights_copy(model, weights, path):
    """torch.save of a copied state_dict: Keras saves weights from a model, so the model
    holds the copy while it is written (and gets its own weights back)."""
    current = model.get_weights()
    model.set_weights(weights)
    model.save_weights(path)
    model.set_weights(current)


class Device:
    """torch.device(...) of the PyTorch program, for its own checks and prints
    (``device.type == "cuda"``, ``print(f"Using {device}")``): Keras places the computation on
    a device itself, nothing is moved to it."""

    def __init__(self, type, index=None):
        if isinstance(type, Device):
            type, index = type.type, type.index
        type = str(type)
        if ":" in type:
            type, index = type.split(":")[0], int(type.split(":")[1])
        self.type = type
        self.index = index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


class Process:
    """torch.multiprocessing.Process run in this process: ``start()`` calls the target with
    its arguments there and then, ``join()`` has nothing to wait for. Workers that trained one
    shared model at once (Hogwild) train it one after the other: as many updates, in order."""

    def __init__(self, target=None, args=(), kwargs=None, name=None, daemon=None):
        self.target = target
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.name = name
        self.daemon = daemon
        self.exitcode = None

    def start(self):
        if self.target is not None:
            self.target(*self.args, **self.kwargs)
        self.exitcode = 0

    def join(self, timeout=None):
        return None

    def is_alive(self):
        return False


def _plain(obj):
    """``obj`` with tensors and variables as numpy arrays (what pickle writes for them)."""
    if isinstance(obj, dict):
        return {key: _plain(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(_plain(value) for value in obj)
    if hasattr(obj, "numpy") and not isinstance(obj, np.ndarray):
        return np.asarray(obj.numpy())
    return obj


def save_object(obj, file):
    """torch.save of what is not a model (a checkpoint dict with the epoch and the optimizer's
    state, arrays, lists): pickled to ``file`` (a path or an open file), tensors and variables
    as numpy arrays. ``load_object`` reads it back."""
    import pickle

    if hasattr(file, "write"):
        pickle.dump(_plain(obj), file)
        file.flush()  # (as torch.save does: the file may never be closed)
        return
    with open(file, "wb") as f:
        pickle.dump(_plain(obj), f)


def load_object(file):
    """torch.load of what ``save_object`` wrote. A file PyTorch itself wrote (torch.save's
    zip archive) is refused with a message: the Keras program has no reader for it."""
    import pickle

    if hasattr(file, "read"):
        data = file.read()
    else:
        with open(file, "rb") as f:
            data = f.read()
    if data[:4] == b"PK\x03\x04":
        raise ValueError(f"{getattr(file, 'name', file)}: a zip archive, a file PyTorch wrote (torch.save) or a "
                         "Keras model (keras.models.load_model reads those); the Keras program reads what its own "
                         "torch.save (save_object) wrote: run the translated program that makes it, or convert it")
    return pickle.loads(data)


def optimizer_state(optimizer):
    """optimizer.state_dict(): the values of the optimizer's variables (step count, learning
    rate, moments), in the optimizer's order."""
    return [np.array(variable.numpy()) for variable in optimizer.variables]


def load_optimizer_state(optimizer, model, state):
    """optimizer.load_state_dict(state) of an ``optimizer_state``: the optimizer is built for
    the model's trainable variables first (as its first step would), then set."""
    if not optimizer.built:
        optimizer.build(model.trainable_variables)
    if len(state) != len(optimizer.variables):
        raise ValueError(f"optimizer state of {len(state)} values for an optimizer of "
                         f"{len(optimizer.variables)} variables")
    for variable, value in zip(optimizer.variables, state):
        variable.assign(value)


def load_model_state(model, state):
    """model.load_state_dict(state) of a state the Keras program saved (``model.get_weights()``,
    a list of arrays); a PyTorch state_dict (names to tensors) is refused with a message."""
    if isinstance(state, dict):
        raise ValueError("a PyTorch state_dict (parameter names to tensors): the Keras model takes the list "
                         "its own get_weights() made; convert the checkpoint (transpile --weights)")
    model.set_weights(state)
