"""Keras' Model.fit / evaluate as a PyTorch loop, for generated PyTorch programs (Keras -> PyTorch).

``make_loader`` (arrays to a DataLoader), ``train_step`` (one optimizer step), ``evaluate``
and ``fit`` (the epoch loop: running-mean metrics printed per epoch, validation, callbacks).

A program uses a few of the options these helpers support, so the printer copies them
*specialised* (printers/runtime_prune.py): the code under ``if FEATURE:`` stays when the
program uses the feature (the ``if`` line goes) and goes otherwise; ``a if FEATURE else b``
becomes ``a`` or ``b``; ``loop_code("...")`` marks where the program's callbacks run as loop
code; parameters nothing reads any more, ``enumerate`` indices nothing reads, and docstring
paragraphs about removed parameters are dropped. Here every feature is on (``LOGITS``: the
model returns what the loss takes), so the module runs each path and tests call it as it is.
"""

from types import SimpleNamespace

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset, default_collate

from transpiler.runtime.torch.timeseries import BatchLoader
from transpiler.runtime.torch.training import EpochBatches

WEIGHTS = MAP = CLIP = REGULARIZATION = VALIDATION = VALIDATION_OPTIONS = CLASS_WEIGHT = True
INITIAL_EPOCH = STEPS = CALLBACK_OBJECTS = SCHEDULER = STOP = STATEFUL = EVAL_STEPS = True
LAYOUT_AFTER_MAP = True  # tf.data's .map() on channels-last images for a channels-first model
DROP_LAST = True  # tf.data's batch(n, drop_remainder=True)
LOADER_INPUT = True  # fit/evaluate handed a translated tf.data pipeline's DataLoader
TEXT = True  # strings in the arrays a tf.data .map() vectorizes (Keras' text/lookup layers)
FILE_PATHS = True  # file paths (str) a tf.data .map() reads (tf.io.read_file), batched as tf.data does
TAKE = True  # the program calls tf.data's .take(n) (on a loader: BatchLoader has it)
SINGLE = True  # a tf.data pipeline over one array (from_tensor_slices(x).batch(n)): batches of it alone
LOGITS = False  # the model's forward(return_logits=True) skips a final activation the loss absorbs


def loop_code(where):
    """Where the program's callbacks run as loop code ("setup", "epoch_begin", "batch_end",
    "epoch_end"): the printer puts their statements here."""


def text_loader(arrays, batch_size=32, shuffle=False, element_map=None, batch_map=None, drop_last=False,
                layout=None):
    """``make_loader`` of arrays some of which hold strings (text a tf.data ``.map()`` turns into
    numbers with Keras' text layers; torch has no string tensors): in each batch the strings
    are a numpy array of str (as Keras' text layers take a string tensor), the numbers
    float32 / int64 tensors.

    File paths a ``.map()`` reads are such strings too; ``drop_last`` and ``layout`` as in
    ``make_loader``.
    """
    columns = []
    for array in arrays:
        array = np.asarray(array)
        if array.dtype.kind in "USO":
            columns.append(array.astype(object))
            continue
        tensor = torch.as_tensor(array)
        floating = tensor.is_floating_point() or tensor.dtype == torch.bool
        columns.append(tensor.float() if floating else tensor.long())
    dataset = list(zip(*columns))
    if element_map is not None:
        dataset = [element_map(*element) for element in dataset]
        if FILE_PATHS:  # (a map returning one tensor or a dict: one part per element)
            dataset = [element if isinstance(element, tuple) else (element,) for element in dataset]

    def collate(batch):
        parts = tuple(np.asarray(items, dtype=object) if isinstance(items[0], str) or
                      getattr(items[0], "dtype", None) == object else default_collate(list(items))
                      for items in zip(*batch))
        if batch_map is not None:
            return batch_map(*parts)
        return parts[0] if len(parts) == 1 else parts  # (a dataset of strings alone gives their batches)

    if FILE_PATHS:
        if layout is not None:  # channels-last images a map made: the model's layout now
            unpermuted = collate

            def permuted(x):  # (a map giving a dict of named inputs: its images, float of the layout's rank)
                if isinstance(x, dict):
                    return {k: permuted(v) if isinstance(v, torch.Tensor) and v.is_floating_point()
                            and v.dim() == len(layout) else v for k, v in x.items()}
                return x.permute(*layout)

            def collate(batch):
                parts = unpermuted(batch)
                if isinstance(parts, (tuple, list)):
                    return (permuted(parts[0]), *parts[1:])
                return permuted(parts)

    if FILE_PATHS:
        return (BatchLoader if TAKE else DataLoader)(dataset, batch_size=batch_size, shuffle=shuffle,
                                                     collate_fn=collate, drop_last=drop_last)
    return (BatchLoader if TAKE else DataLoader)(dataset, batch_size=batch_size, shuffle=shuffle, collate_fn=collate)


def make_loader(inputs, targets=None, batch_size=32, shuffle=False, sample_weight=None,
                element_map=None, batch_map=None, drop_last=False, layout=None):
    """Arrays (already in the model's layout) → a DataLoader of float32 / int64 batches.

    ``element_map`` (tf.data's .map() before .batch()) runs on each element's tensors,
    ``batch_map`` (.map() after .batch()) on each batch's.
    """
    arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if FILE_PATHS:
        if arrays and all(isinstance(item, str) for item in arrays):
            arrays = [inputs]  # (a list of strings, file paths: one array of them)
    if LOADER_INPUT:
        # a tf.data pipeline's loader (fit(ds)): its batches are already (x, y)
        if len(arrays) == 1 and isinstance(arrays[0], DataLoader):
            return arrays[0]
    if targets is not None:
        arrays += list(targets) if isinstance(targets, (list, tuple)) else [targets]
    if WEIGHTS:
        if sample_weight is not None:
            arrays.append(sample_weight)
    if TEXT:
        if isinstance(inputs, list) and inputs and all(isinstance(item, (str, bytes)) for item in inputs) \
                and isinstance(arrays[0], (str, bytes)):
            # a list of strings (from_tensor_slices(samples)): one array of them, as tf.data reads it
            arrays = [inputs] + arrays[len(inputs):]
        if any(np.asarray(array).dtype.kind in "USO" for array in arrays):  # strings: text a .map() vectorizes
            if FILE_PATHS:
                return text_loader(arrays, batch_size, shuffle, element_map, batch_map, drop_last=drop_last,
                                   layout=layout)
            else:
                return text_loader(arrays, batch_size, shuffle, element_map, batch_map)
    tensors = []
    for array in arrays:
        tensor = torch.as_tensor(np.asarray(array))
        # booleans (a one-hot ``y == k``) are numbers to Keras (float32), integers are indices
        floating = tensor.is_floating_point() or tensor.dtype == torch.bool
        tensors.append(tensor.float() if floating else tensor.long())
    if MAP:
        dataset = TensorDataset(*tensors)
        if SINGLE:
            if targets is None and not isinstance(inputs, (list, tuple)) and element_map is None and batch_map is None:
                dataset = tensors[0]  # tf.data's from_tensor_slices(x).batch(n): batches of x, not 1-tuples
        if element_map is not None:
            dataset = [element_map(*element) for element in dataset]
        collate = None
        if batch_map is not None:
            def collate(batch):
                return batch_map(*default_collate(batch))
        if LAYOUT_AFTER_MAP:
            if layout is not None:  # the maps ran on channels-last elements; the model's layout now
                mapped = collate or default_collate

                def collate(batch):
                    first, *rest = mapped(batch)
                    return (first.permute(*layout), *rest)
        if DROP_LAST:
            if drop_last:  # tf.data's batch(n, drop_remainder=True): no last, smaller batch
                return (BatchLoader if TAKE else DataLoader)(dataset, batch_size=batch_size, shuffle=shuffle, collate_fn=collate,
                                  drop_last=True)
        return (BatchLoader if TAKE else DataLoader)(dataset, batch_size=batch_size, shuffle=shuffle, collate_fn=collate)
    else:
        if SINGLE:
            if targets is None and not isinstance(inputs, (list, tuple)):
                # tf.data's from_tensor_slices(x).batch(n): batches of x, not 1-tuples
                return (BatchLoader if TAKE else DataLoader)(tensors[0], batch_size=batch_size, shuffle=shuffle,
                                                             drop_last=drop_last)
        if DROP_LAST:
            if drop_last:  # tf.data's batch(n, drop_remainder=True): no last, smaller batch
                return (BatchLoader if TAKE else DataLoader)(TensorDataset(*tensors), batch_size=batch_size,
                                                             shuffle=shuffle, drop_last=True)
        return (BatchLoader if TAKE else DataLoader)(TensorDataset(*tensors), batch_size=batch_size, shuffle=shuffle)


def train_step(model, optimizer, loss_fns, loss_weights, inputs, targets, sample_weight=None,
               clipnorm=None, clipvalue=None, global_clipnorm=None):
    """One optimizer step on a batch; returns the batch loss and the (detached) outputs."""
    model.train()
    optimizer.zero_grad()
    outputs = model(*inputs, return_logits=True) if LOGITS else model(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    loss = 0.0
    for loss_fn, weight, output, target in zip(loss_fns, loss_weights, outputs, targets):
        per_sample = loss_fn(output, target)
        if WEIGHTS:
            if sample_weight is not None:
                per_sample = per_sample * sample_weight.view(-1, *[1] * (per_sample.dim() - 1))
        loss = loss + weight * per_sample.mean()  # Keras' sum_over_batch_size
    if REGULARIZATION:
        loss = loss + model.regularization_loss()  # Keras adds the layers' regularizers
    loss.backward()
    if CLIP:
        if clipvalue is not None:
            torch.nn.utils.clip_grad_value_(model.parameters(), clipvalue)
        if clipnorm is not None:  # Keras clips each variable's gradient on its own
            for parameter in model.parameters():
                torch.nn.utils.clip_grad_norm_(parameter, clipnorm)
        if global_clipnorm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), global_clipnorm)
    optimizer.step()
    return loss.item(), tuple(output.detach() for output in outputs)


def reset_metrics(metrics):
    """The running sums and counts of ``metrics`` ((name, output index, metric) triples) at
    the start of an epoch or evaluation; a stateful metric object is reset."""
    if STATEFUL:
        for _, _, metric in metrics:
            if hasattr(metric, "reset_state"):
                metric.reset_state()
    return {name: 0.0 for name, _, _ in metrics}, {name: 0 for name, _, _ in metrics}


def update_metrics(metrics, outputs, targets, sums, counts):
    """Add one batch's metric values to the running ``sums`` and ``counts`` (their means are
    what Keras reports); a stateful metric object keeps its own result so far."""
    for name, index, metric in metrics:
        if STATEFUL:
            if hasattr(metric, "update_state"):
                metric.update_state(outputs[index], targets[index])
                sums[name], counts[name] = metric.result(), 1
                continue
        values = metric(outputs[index], targets[index])
        sums[name] += values.sum().item()
        counts[name] += values.numel()


@torch.no_grad()
def evaluate(model, loss_fns, x, y, batch_size=32, steps=None, metrics=(), loss_weights=None,
             return_dict=False, callbacks=()):
    """Keras' Model.evaluate: the mean loss (and metrics) over the data, in inference mode (the
    model's mode restored after)."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    was_training = model.training
    model.eval()
    total, seen = 0.0, 0
    sums, counts = reset_metrics(metrics)
    if CALLBACK_OBJECTS:
        for callback in callbacks:  # (fit's validation: the test hooks, with running means as logs)
            callback.on_test_begin({})
    for step, batch in enumerate(make_loader(inputs, targets, batch_size)):
        if EVAL_STEPS:
            if steps is not None and step >= steps:  # Keras' evaluate(steps=...)
                break
        if CALLBACK_OBJECTS:
            for callback in callbacks:
                callback.on_test_batch_begin(step, logs={})
        batch_inputs, batch_targets = batch[: len(inputs)], batch[len(inputs):]
        outputs = model(*batch_inputs, return_logits=True) if LOGITS else model(*batch_inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        loss = sum(w * fn(out, t).mean() for fn, w, out, t in zip(loss_fns, loss_weights, outputs, batch_targets))
        if REGULARIZATION:
            loss = loss + model.regularization_loss()  # Keras' evaluate adds them too
        total += loss.item() * len(batch_inputs[0])
        seen += len(batch_inputs[0])
        update_metrics(metrics, outputs, batch_targets, sums, counts)
        if CALLBACK_OBJECTS:
            batch_logs = {"loss": total / seen, **{name: sums[name] / counts[name] for name in sums}}
            for callback in callbacks:
                callback.on_test_batch_end(step, logs=dict(sorted(batch_logs.items())))
    # Keras sets the mode per call: the model trains after this as it did before
    model.train(was_training)
    results = {"loss": total / seen, **{name: sums[name] / counts[name] for name in sums}}
    if CALLBACK_OBJECTS:
        for callback in callbacks:
            callback.on_test_end(dict(sorted(results.items())))
    if return_dict:
        return results
    return results["loss"] if len(results) == 1 else list(results.values())


# long: Keras' fit loop with every option it translates (the printer prunes the unused ones)
def fit(model, optimizer, loss_fns, x, y, epochs=1, batch_size=32, verbose="auto", metrics=(),
        validation_split=0.0, validation_data=None, class_weight=None, sample_weight=None, initial_epoch=0,
        steps_per_epoch=None, repeat=False, validation_steps=None, validation_batch_size=None,
        validation_freq=1, callbacks=(), scheduler=None, loss_weights=None, shuffle=True, **clip):
    """Keras' Model.fit as a loop: running means per epoch, printed per epoch."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    if VALIDATION:
        if validation_split:
            # Keras holds out the LAST fraction of the arrays, before any shuffling
            split = int(len(inputs[0]) * (1 - validation_split))
            validation_data = ([a[split:] for a in inputs], [a[split:] for a in targets])
            inputs, targets = [a[:split] for a in inputs], [a[:split] for a in targets]
    if CLASS_WEIGHT:
        if class_weight is not None:
            labels = np.asarray(targets[0])
            labels = labels.argmax(-1) if labels.ndim > 1 and labels.shape[-1] > 1 else labels.reshape(-1)
            sample_weight = np.array([class_weight[int(c)] for c in labels], dtype="float32")
    if WEIGHTS:
        loader = make_loader(inputs, targets, batch_size, shuffle=shuffle, sample_weight=sample_weight)
    else:
        loader = make_loader(inputs, targets, batch_size, shuffle=shuffle)
    if STEPS:
        batches = EpochBatches(loader, steps_per_epoch, repeat)
    n_in, n_out = len(inputs), len(targets)
    history = {}
    if CALLBACK_OBJECTS:
        # callbacks reach the optimizer as self.model.optimizer, as in Keras
        model.optimizer = optimizer
        for callback in callbacks:
            callback.set_model(model)
            callback.params = {"epochs": epochs, "steps": len(loader), "verbose": verbose}
    if STOP:
        model.stop_training = False
    if CALLBACK_OBJECTS:
        training_logs = {}
        for callback in callbacks:
            callback.on_train_begin({})
    loop_code("setup")
    for epoch in range(initial_epoch, epochs) if INITIAL_EPOCH else range(epochs):
        if CALLBACK_OBJECTS:
            for callback in callbacks:
                callback.on_epoch_begin(epoch, {})
        loop_code("epoch_begin")
        total, seen = 0.0, 0
        sums, counts = reset_metrics(metrics)
        for step, batch in batches.epoch() if STEPS else enumerate(loader):
            if CALLBACK_OBJECTS:
                for callback in callbacks:
                    callback.on_train_batch_begin(step, logs={})
            batch_inputs, batch_targets = batch[:n_in], batch[n_in:n_in + n_out]
            if WEIGHTS:
                weights = batch[-1] if sample_weight is not None else None
            if WEIGHTS and CLIP:
                loss, outputs = train_step(model, optimizer, loss_fns, loss_weights, batch_inputs, batch_targets,
                                           weights, **clip)
            elif WEIGHTS:
                loss, outputs = train_step(model, optimizer, loss_fns, loss_weights, batch_inputs, batch_targets,
                                           weights)
            elif CLIP:
                loss, outputs = train_step(model, optimizer, loss_fns, loss_weights, batch_inputs, batch_targets,
                                           **clip)
            else:
                loss, outputs = train_step(model, optimizer, loss_fns, loss_weights, batch_inputs, batch_targets)
            if SCHEDULER:
                if scheduler is not None:
                    scheduler.step()
            total += loss * len(batch_inputs[0])
            seen += len(batch_inputs[0])
            update_metrics(metrics, outputs, batch_targets, sums, counts)
            if CALLBACK_OBJECTS:
                batch_logs = {"loss": total / seen, **{name: sums[name] / counts[name] for name in sums}}
                batch_logs = dict(sorted(batch_logs.items()))  # as Keras hands them to callbacks
                for callback in callbacks:
                    callback.on_train_batch_end(step, logs=batch_logs)
            loop_code("batch_end")
            if STOP:
                if model.stop_training:
                    break
        logs = {"loss": total / seen, **{name: sums[name] / counts[name] for name in sums}}
        if VALIDATION_OPTIONS:
            # Keras validates every validation_freq epochs, or in the (1-based) epochs listed
            if isinstance(validation_freq, int):
                due = (epoch + 1) % validation_freq == 0
            else:
                due = epoch + 1 in validation_freq
            if validation_data is not None and due:
                if CALLBACK_OBJECTS:
                    results = evaluate(model, loss_fns, *validation_data,
                                       batch_size=validation_batch_size or batch_size, steps=validation_steps,
                                       metrics=metrics, loss_weights=loss_weights, return_dict=True,
                                       callbacks=callbacks)
                else:
                    results = evaluate(model, loss_fns, *validation_data,
                                       batch_size=validation_batch_size or batch_size, steps=validation_steps,
                                       metrics=metrics, loss_weights=loss_weights, return_dict=True)
                logs.update({f"val_{key}": value for key, value in results.items()})
        elif VALIDATION:
            if validation_data is not None:
                if CALLBACK_OBJECTS:
                    results = evaluate(model, loss_fns, *validation_data, batch_size=batch_size,
                                       metrics=metrics, loss_weights=loss_weights, return_dict=True,
                                       callbacks=callbacks)
                else:
                    results = evaluate(model, loss_fns, *validation_data, batch_size=batch_size,
                                       metrics=metrics, loss_weights=loss_weights, return_dict=True)
                logs.update({f"val_{key}": value for key, value in results.items()})
        if CALLBACK_OBJECTS:
            # Keras hands the callbacks (History too) a copy sorted by key; on_train_end another one
            training_logs, logs = logs, dict(sorted(logs.items()))
            for callback in callbacks:  # before History and the progress line, as in Keras
                callback.on_epoch_end(epoch, logs)
        for key, value in logs.items():
            history.setdefault(key, []).append(value)
        if verbose:
            print(f"Epoch {epoch + 1}/{epochs} - " + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        loop_code("epoch_end")
        if STOP:
            if model.stop_training:
                break
    if CALLBACK_OBJECTS:
        for callback in callbacks:
            callback.on_train_end(dict(sorted(training_logs.items())))
    return SimpleNamespace(history=history)
