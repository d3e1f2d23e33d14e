"""The generated epoch loop of Keras → PyTorch programs: ``make_loader``, ``train_step``,
``fit`` and ``evaluate``, specialised per program, and Keras callbacks as loop code.

These four helpers vary with the features a program uses (sample weights, clipping,
validation, steps per epoch, callback objects, ...): they are still templates whose lines
carry ``#@feature`` tags (``specialise``), with the callbacks' loop code spliced at marked
lines (``fit_text``). Issue 17 item 5 moves them to transpiler/runtime/torch/ as real code
specialised by pruning, as the other helpers already are.
"""

from __future__ import annotations

from transpiler.ir import training as T
from transpiler.printers.code import lit


def specialise(template: str, features: set[str]) -> str:
    """Keep a template's lines tagged ``#@f`` (``#@!f`` = without f, ``&`` = and) as the
    program's features say; untagged lines always stay."""
    out = []
    for line in template.split("\n"):
        code, sep, tag = line.partition("  #@")
        if not sep:
            out.append(line)
            continue
        wanted = all((t[1:] not in features) if t.startswith("!") else (t in features)
                     for t in tag.strip().split("&"))
        if wanted:
            out.append(code.rstrip())
    return "\n".join(out)


def _ident(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


HELPER_LOADER = '''
def make_loader(inputs, targets=None, batch_size=32, shuffle=False, sample_weight=None,  #@weights&map
                element_map=None, batch_map=None):  #@weights&map
def make_loader(inputs, targets=None, batch_size=32, shuffle=False, sample_weight=None):  #@weights&!map
def make_loader(inputs, targets=None, batch_size=32, shuffle=False, element_map=None, batch_map=None):  #@!weights&map
def make_loader(inputs, targets=None, batch_size=32, shuffle=False):  #@!weights&!map
    """Arrays (already in the model's layout) → a DataLoader of float32 / int64 batches."""  #@!map
    """Arrays (already in the model's layout) → a DataLoader of float32 / int64 batches.  #@map
  #@map
    ``element_map`` (tf.data's .map() before .batch()) runs on each element's tensors,  #@map
    ``batch_map`` (.map() after .batch()) on each batch's.  #@map
    """  #@map
    arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if targets is not None:
        arrays += list(targets) if isinstance(targets, (list, tuple)) else [targets]
    if sample_weight is not None:  #@weights
        arrays.append(sample_weight)  #@weights
    tensors = []
    for array in arrays:
        tensor = torch.as_tensor(np.asarray(array))
        tensors.append(tensor.float() if tensor.is_floating_point() else tensor.long())
    return DataLoader(TensorDataset(*tensors), batch_size=batch_size, shuffle=shuffle)  #@!map
    dataset = TensorDataset(*tensors)  #@map
    if element_map is not None:  #@map
        dataset = [element_map(*element) for element in dataset]  #@map
    collate = None  #@map
    if batch_map is not None:  #@map
        def collate(batch):  #@map
            return batch_map(*default_collate(batch))  #@map
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, collate_fn=collate)  #@map
'''

HELPER_TRAIN_STEP = '''
def train_step(model, optimizer, loss_fns, loss_weights, inputs, targets, sample_weight=None,  #@weights&clip
def train_step(model, optimizer, loss_fns, loss_weights, inputs, targets,  #@!weights&clip
               clipnorm=None, clipvalue=None, global_clipnorm=None):  #@clip
def train_step(model, optimizer, loss_fns, loss_weights, inputs, targets, sample_weight=None):  #@weights&!clip
def train_step(model, optimizer, loss_fns, loss_weights, inputs, targets):  #@!weights&!clip
    """One optimizer step on a batch; returns the batch loss and the (detached) outputs."""
    model.train()
    optimizer.zero_grad()
    outputs = MODEL_CALL
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    loss = 0.0
    for loss_fn, weight, output, target in zip(loss_fns, loss_weights, outputs, targets):
        per_sample = loss_fn(output, target)
        if sample_weight is not None:  #@weights
            per_sample = per_sample * sample_weight.view(-1, *[1] * (per_sample.dim() - 1))  #@weights
        loss = loss + weight * per_sample.mean()  # Keras' sum_over_batch_size
    loss = loss + model.regularization_loss()  # Keras adds the layers' regularizers  #@regularization
    loss.backward()
    if clipvalue is not None:  #@clip
        torch.nn.utils.clip_grad_value_(model.parameters(), clipvalue)  #@clip
    if clipnorm is not None:  # Keras clips each variable's gradient on its own  #@clip
        for parameter in model.parameters():  #@clip
            torch.nn.utils.clip_grad_norm_(parameter, clipnorm)  #@clip
    if global_clipnorm is not None:  #@clip
        torch.nn.utils.clip_grad_norm_(model.parameters(), global_clipnorm)  #@clip
    optimizer.step()
    return loss.item(), tuple(output.detach() for output in outputs)
'''

HELPER_FIT = '''
def fit(model, optimizer, loss_fns, x, y, epochs=1, batch_size=32, verbose="auto", metrics=(),
        validation_split=0.0, validation_data=None,  #@validation
        class_weight=None,  #@class_weight
        sample_weight=None,  #@weights
        initial_epoch=0,  #@initial_epoch
        steps_per_epoch=None, repeat=False,  #@steps
        validation_steps=None, validation_batch_size=None, validation_freq=1,  #@validation_options
        callbacks=(),  #@callback_objects
        scheduler=None,  #@scheduler
        loss_weights=None, shuffle=True, **clip):  #@clip
        loss_weights=None, shuffle=True):  #@!clip
    """Keras' Model.fit as a loop: running means per epoch, printed per epoch."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    if validation_split:  #@validation
        # Keras holds out the LAST fraction of the arrays, before any shuffling  #@validation
        split = int(len(inputs[0]) * (1 - validation_split))  #@validation
        validation_data = ([a[split:] for a in inputs], [a[split:] for a in targets])  #@validation
        inputs, targets = [a[:split] for a in inputs], [a[:split] for a in targets]  #@validation
    if class_weight is not None:  #@class_weight
        labels = np.asarray(targets[0])  #@class_weight
        labels = labels.argmax(-1) if labels.ndim > 1 and labels.shape[-1] > 1 else labels.reshape(-1)  #@class_weight
        sample_weight = np.array([class_weight[int(c)] for c in labels], dtype="float32")  #@class_weight
    loader = make_loader(inputs, targets, batch_size, shuffle=shuffle, sample_weight=sample_weight)  #@weights
    loader = make_loader(inputs, targets, batch_size, shuffle=shuffle)  #@!weights
    batches = EpochBatches(loader, steps_per_epoch, repeat)  #@steps
    n_in, n_out = len(inputs), len(targets)
    history = {}
    # callbacks reach the optimizer as self.model.optimizer, as in Keras  #@callback_objects
    model.optimizer = optimizer  #@callback_objects
    for callback in callbacks:  #@callback_objects
        callback.set_model(model)  #@callback_objects
        callback.params = {"epochs": epochs, "steps": len(loader), "verbose": verbose}  #@callback_objects
    model.stop_training = False  #@stop
    training_logs = {}  #@callback_objects
    for callback in callbacks:  #@callback_objects
        callback.on_train_begin({})  #@callback_objects
    # SETUP
    for epoch in range(initial_epoch, epochs):  #@initial_epoch
    for epoch in range(epochs):  #@!initial_epoch
        for callback in callbacks:  #@callback_objects
            callback.on_epoch_begin(epoch, {})  #@callback_objects
        # EPOCH_BEGIN
        total, seen = 0.0, 0
        sums = {name: 0.0 for name, _, _ in metrics}
        counts = {name: 0 for name, _, _ in metrics}
        for _, _, metric in metrics:  #@stateful
            if hasattr(metric, "reset_state"):  #@stateful
                metric.reset_state()  #@stateful
        for step, batch in batches.epoch():  #@steps
        for step, batch in enumerate(loader):  #@!steps&stop
        for batch in loader:  #@!steps&!stop
            for callback in callbacks:  #@callback_objects
                callback.on_train_batch_begin(step, logs={})  #@callback_objects
            batch_inputs, batch_targets = batch[:n_in], batch[n_in:n_in + n_out]
            weights = batch[-1] if sample_weight is not None else None  #@weights
            loss, outputs = train_step(model, optimizer, loss_fns, loss_weights, batch_inputs,  #@weights
                                       batch_targets, weights, **clip)  #@weights&clip
                                       batch_targets, weights)  #@weights&!clip
            loss, outputs = train_step(model, optimizer, loss_fns, loss_weights, batch_inputs,  #@!weights
                                       batch_targets, **clip)  #@!weights&clip
                                       batch_targets)  #@!weights&!clip
            if scheduler is not None:  #@scheduler
                scheduler.step()  #@scheduler
            total += loss * len(batch_inputs[0])
            seen += len(batch_inputs[0])
            for name, index, metric in metrics:
                if hasattr(metric, "update_state"):  # a stateful metric: its result so far  #@stateful
                    metric.update_state(outputs[index], batch_targets[index])  #@stateful
                    sums[name], counts[name] = metric.result(), 1  #@stateful
                    continue  #@stateful
                values = metric(outputs[index], batch_targets[index])
                sums[name] += values.sum().item()
                counts[name] += values.numel()
            batch_logs = {"loss": total / seen, **{name: sums[name] / counts[name] for name in sums}}  #@callback_objects
            batch_logs = dict(sorted(batch_logs.items()))  # as Keras hands them to callbacks  #@callback_objects
            for callback in callbacks:  #@callback_objects
                callback.on_train_batch_end(step, logs=batch_logs)  #@callback_objects
            # BATCH_END
            if model.stop_training:  #@stop
                break  #@stop
        logs = {"loss": total / seen, **{name: sums[name] / counts[name] for name in sums}}
        if validation_data is not None:  #@validation&!validation_options
        # Keras validates every validation_freq epochs, or in the (1-based) epochs listed  #@validation_options
        if isinstance(validation_freq, int):  #@validation_options
            due = (epoch + 1) % validation_freq == 0  #@validation_options
        else:  #@validation_options
            due = epoch + 1 in validation_freq  #@validation_options
        if validation_data is not None and due:  #@validation_options
            results = evaluate(model, loss_fns, *validation_data, batch_size=batch_size,  #@validation&!validation_options
            results = evaluate(model, loss_fns, *validation_data, batch_size=validation_batch_size or batch_size,  #@validation_options
                               steps=validation_steps,  #@validation_options
                               metrics=metrics, loss_weights=loss_weights, return_dict=True)  #@validation
            logs.update({f"val_{key}": value for key, value in results.items()})  #@validation
        # Keras hands the callbacks (History too) a copy sorted by key; on_train_end another one  #@callback_objects
        training_logs, logs = logs, dict(sorted(logs.items()))  #@callback_objects
        for callback in callbacks:  # before History and the progress line, as in Keras  #@callback_objects
            callback.on_epoch_end(epoch, logs)  #@callback_objects
        for key, value in logs.items():
            history.setdefault(key, []).append(value)
        if verbose:
            print(f"Epoch {epoch + 1}/{epochs} - " + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        # CALLBACKS
        if model.stop_training:  #@stop
            break  #@stop
    for callback in callbacks:  #@callback_objects
        callback.on_train_end(dict(sorted(training_logs.items())))  #@callback_objects
    return SimpleNamespace(history=history)
'''

HELPER_EVALUATE = '''
@torch.no_grad()
def evaluate(model, loss_fns, x, y, batch_size=32, metrics=(), loss_weights=None, return_dict=False):  #@!eval_steps
def evaluate(model, loss_fns, x, y, batch_size=32, steps=None, metrics=(), loss_weights=None,  #@eval_steps
             return_dict=False):  #@eval_steps
    """Keras' Model.evaluate: the mean loss (and metrics) over the data, in inference mode."""
    loss_fns = list(loss_fns) if isinstance(loss_fns, (list, tuple)) else [loss_fns]
    loss_weights = loss_weights or [1.0] * len(loss_fns)
    inputs = list(x) if isinstance(x, (list, tuple)) else [x]
    targets = list(y) if isinstance(y, (list, tuple)) else [y]
    model.eval()
    total, seen = 0.0, 0
    sums = {name: 0.0 for name, _, _ in metrics}
    counts = {name: 0 for name, _, _ in metrics}
    for _, _, metric in metrics:  #@stateful
        if hasattr(metric, "reset_state"):  #@stateful
            metric.reset_state()  #@stateful
    for batch in make_loader(inputs, targets, batch_size):  #@!eval_steps
    for step, batch in enumerate(make_loader(inputs, targets, batch_size)):  #@eval_steps
        if steps is not None and step >= steps:  # Keras' evaluate(steps=...)  #@eval_steps
            break  #@eval_steps
        batch_inputs, batch_targets = batch[: len(inputs)], batch[len(inputs):]
        outputs = MODEL_CALL_BATCH
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        loss = sum(w * fn(out, t).mean() for fn, w, out, t in zip(loss_fns, loss_weights, outputs, batch_targets))
        loss = loss + model.regularization_loss()  # Keras' evaluate adds them too  #@regularization
        total += loss.item() * len(batch_inputs[0])
        seen += len(batch_inputs[0])
        for name, index, metric in metrics:
            if hasattr(metric, "update_state"):  # a stateful metric: its result so far  #@stateful
                metric.update_state(outputs[index], batch_targets[index])  #@stateful
                sums[name], counts[name] = metric.result(), 1  #@stateful
                continue  #@stateful
            values = metric(outputs[index], batch_targets[index])
            sums[name] += values.sum().item()
            counts[name] += values.numel()
    results = {"loss": total / seen, **{name: sums[name] / counts[name] for name in sums}}
    if return_dict:
        return results
    return results["loss"] if len(results) == 1 else list(results.values())
'''


def callback_code(cb: T.Callback) -> tuple[list[str], list[str]]:
    """(set-up lines, end-of-epoch lines) of one Keras callback, as loop code."""
    p = cb.params
    monitor = p.get("monitor", "val_loss")
    mode = p.get("mode", "auto")
    better = "<" if mode == "min" or (mode == "auto" and "acc" not in monitor) else ">"
    sign = "-" if better == "<" else "+"
    worst = 'float("inf")' if better == "<" else 'float("-inf")'
    if cb.kind == "early_stopping":
        setup = [f"best_{_ident(monitor)}, wait = {worst}, 0", "best_state = None"]
        lines = [
            f"# EarlyStopping(monitor={monitor!r}, patience={p['patience']})",
            f"if logs[{lit(monitor)}] {better} best_{_ident(monitor)} {sign} {lit(float(p['min_delta']))}:",
            f"    best_{_ident(monitor)}, wait = logs[{lit(monitor)}], 0",
        ]
        if p.get("restore_best_weights"):
            lines.append("    best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}")
        lines += ["else:", "    wait += 1", f"    if wait >= {p['patience']} and epoch >= {p.get('start_from_epoch', 0)}:"]
        if p.get("restore_best_weights"):
            lines += ["        if best_state is not None:", "            model.load_state_dict(best_state)"]
        lines += ["        break"]
        return setup, lines
    if cb.kind == "model_checkpoint":
        path = str(p["filepath"])
        for ext in (".weights.h5", ".keras", ".h5"):
            if path.endswith(ext):
                path = path[: -len(ext)] + ".pt"
        path_code = f"{lit(path)}.format(epoch=epoch + 1, **logs)"
        if p.get("save_best_only"):
            setup = [f"best_checkpoint = {worst}"]
            lines = [f"# ModelCheckpoint({path!r}, monitor={monitor!r}, save_best_only=True)",
                     f"if logs[{lit(monitor)}] {better} best_checkpoint:",
                     f"    best_checkpoint = logs[{lit(monitor)}]",
                     f"    torch.save(model.state_dict(), {path_code})"]
            return setup, lines
        return [], [f"torch.save(model.state_dict(), {path_code})  # ModelCheckpoint"]
    if cb.kind == "reduce_lr_on_plateau":
        torch_mode = "min" if better == "<" else "max"
        setup = [f"plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode={lit(torch_mode)}, "
                 f"factor={lit(float(p['factor']))}, patience={p['patience']}, "
                 f"threshold={lit(float(p['min_delta']))}, threshold_mode=\"abs\", "
                 f"cooldown={p['cooldown']}, min_lr={lit(float(p['min_lr']))})"]
        return setup, [f"plateau.step(logs[{lit(monitor)}])  # ReduceLROnPlateau"]
    if cb.kind == "learning_rate_scheduler":
        # Keras calls schedule(epoch, lr) when each epoch begins
        return [], ["#BEGIN for group in optimizer.param_groups:",
                    f"#BEGIN     group[\"lr\"] = {p['schedule']}(epoch, group[\"lr\"])  # LearningRateScheduler"]
    if cb.kind == "csv_logger":
        setup = [f"csv_file = open({lit(p['filename'])}, {lit('a' if p.get('append') else 'w')}, newline=\"\")",
                 "csv_writer = None"]
        lines = ["# CSVLogger",
                 "if csv_writer is None:",
                 f"    csv_writer = csv.DictWriter(csv_file, fieldnames=[\"epoch\", *logs], "
                 f"delimiter={lit(p.get('separator', ','))})",
                 "    csv_writer.writeheader()",
                 "csv_writer.writerow({\"epoch\": epoch, **logs})",
                 "csv_file.flush()"]
        return setup, lines
    if cb.kind == "tensorboard":
        setup = ["try:  # TensorBoard: torch's SummaryWriter needs the tensorboard package",
                 "    from torch.utils.tensorboard import SummaryWriter",
                 f"    writer = SummaryWriter({lit(str(p.get('log_dir', 'logs')))})",
                 "except ImportError:",
                 "    writer = None",
                 "    print(\"TensorBoard logging skipped: pip install tensorboard\")"]
        lines = ["if writer is not None:  # TensorBoard",
                 "    for key, value in logs.items():",
                 "        writer.add_scalar(f\"epoch_{key}\", value, epoch)",
                 "    writer.flush()"]
        return setup, lines
    if cb.kind == "terminate_on_nan":
        return [], ["#BATCH if not math.isfinite(loss):  # TerminateOnNaN",
                    "#BATCH     print(f\"Batch {step}: Invalid loss, terminating training\")",
                    "#BATCH     model.stop_training = True"]
    if cb.kind in ("progbar_logger", "history"):
        return [], []  # the epoch line and the returned history are always there
    raise NotImplementedError(f"callback {cb.kind}")


def fit_text(name: str, callbacks: list[T.Callback], features: set[str], imports: set[str]) -> str:
    """The generated ``fit`` named ``name``: the template specialised for the program's features,
    with these callbacks as loop code (their imports added to ``imports``)."""
    setup, epoch_end, epoch_begin, batch_end = [], [], [], []
    for cb in callbacks:
        s, e = callback_code(cb)
        setup += s
        epoch_begin += [ln[len("#BEGIN "):] for ln in e if ln.startswith("#BEGIN ")]
        batch_end += [ln[len("#BATCH "):] for ln in e if ln.startswith("#BATCH ")]
        epoch_end += [ln for ln in e if not ln.startswith(("#BEGIN ", "#BATCH "))]
    if "stop" in features:  # other callbacks still see this epoch's end, as in Keras
        epoch_end = [ln.replace("break", "model.stop_training = True") if ln.strip() == "break" else ln
                     for ln in epoch_end]
    text = specialise(HELPER_FIT, features).replace("def fit(", f"def {name}(")
    text = text.replace("            # BATCH_END\n", "".join(f"            {ln}\n" for ln in batch_end))
    text = text.replace("        # CALLBACKS\n", "".join(f"        {ln}\n" for ln in epoch_end))
    text = text.replace("        # EPOCH_BEGIN\n", "".join(f"        {ln}\n" for ln in epoch_begin))
    text = text.replace("    # SETUP\n", "".join(f"    {ln}\n" for ln in setup))
    if any(cb.kind == "csv_logger" for cb in callbacks):
        imports.add("import csv")
    if any(cb.kind == "terminate_on_nan" for cb in callbacks):
        imports.add("import math")
    return text
