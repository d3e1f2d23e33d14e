"""The generated epoch loop of Keras → PyTorch programs, and Keras callbacks as loop code.

``make_loader``, ``train_step``, ``fit`` and ``evaluate`` are real code in
transpiler/runtime/torch/loop.py, copied specialised for the features a program uses
(printers/runtime_prune.py); ``fit_text`` also puts the program's callbacks (EarlyStopping,
ModelCheckpoint, ...) into its loop as statements (``callback_code``).
"""

from __future__ import annotations

from transpiler.ir import training as T
from transpiler.printers import runtime_prune
from transpiler.printers.code import lit

#: the runtime module holding make_loader, train_step, fit and evaluate
LOOP = "torch.loop"


def _ident(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


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
        for ext in (".weights.h5", ".keras", ".h5"):  # (a literal: every use of it is renamed the same way)
            if path.endswith(ext) and not p.get("path_as_written"):
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
    """The generated ``fit`` named ``name``: runtime/torch/loop.py's, specialised for the
    program's features, with these callbacks as loop code (their imports added to ``imports``)."""
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
    splices = (("setup", tuple(setup)), ("epoch_begin", tuple(epoch_begin)), ("batch_end", tuple(batch_end)),
               ("epoch_end", tuple(epoch_end)))
    text = runtime_prune.specialise(LOOP, "fit", frozenset(features), splices, name_as=name)
    if any(cb.kind == "csv_logger" for cb in callbacks):
        imports.add("import csv")
    if any(cb.kind == "terminate_on_nan" for cb in callbacks):
        imports.add("import math")
    return text
