"""The table of torch training objects and their Keras forms in docs/torch_to_keras.md.

``python -m transpiler.training_doc`` prints it; a test fails when the doc drifts. A docs tool
on top of the layers (it translates small scripts and asks the Keras training printer how it
renders each object), so it sits beside the drivers, not in ``printers/``.
"""

from __future__ import annotations

from transpiler.printers.keras.training import ProgramPrinter
from transpiler.translate import translate

OBJECT_SCRIPT = """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (4,)


def build_model():
    return nn.Sequential(nn.Linear(4, 3))


def main(x, y):
    model = build_model()
    loader = DataLoader(TensorDataset(x, y), batch_size=4)
    criterion = LOSS
    optimizer = OPTIMIZER
    scheduler = SCHEDULER
    for epoch in range(2):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            PER_BATCH
        PER_EPOCH
"""


def object_script(loss: str = "nn.MSELoss()", optimizer: str = "torch.optim.SGD(model.parameters(), lr=0.1)",
                  scheduler: str = "None", per_batch: str = "", per_epoch: str = "") -> str:
    """A small torch script with these training objects in the usual loop (the doc table's
    and the tests' way of seeing how one object translates). ``per_epoch`` lines are
    indented for the epoch loop's body."""
    per_epoch = "\n".join(("" if i == 0 else " " * 8) + line for i, line in enumerate(per_epoch.split("\n")))
    return (OBJECT_SCRIPT.replace("LOSS", loss).replace("OPTIMIZER", optimizer).replace("SCHEDULER", scheduler)
            .replace("PER_BATCH", per_batch or "pass").replace("PER_EPOCH", per_epoch or "pass"))


DOC_OPTIMIZERS = ("SGD(model.parameters(), lr=0.1)", "SGD(model.parameters(), lr=0.1, momentum=0.9)",
                  "Adam(model.parameters())", "AdamW(model.parameters())", "RMSprop(model.parameters())",
                  "Adagrad(model.parameters())", "Adadelta(model.parameters())", "Adamax(model.parameters())",
                  "NAdam(model.parameters())")
DOC_LOSSES = ("CrossEntropyLoss()", "CrossEntropyLoss(label_smoothing=0.1)", "BCEWithLogitsLoss()", "BCELoss()",
              "MSELoss()", "L1Loss()", "HuberLoss(delta=2.0)", "SmoothL1Loss()", "NLLLoss()",
              "KLDivLoss(reduction='batchmean')")
DOC_SCHEDULERS = ("StepLR(optimizer, step_size=10)", "MultiStepLR(optimizer, milestones=[5, 8])",
                  "ExponentialLR(optimizer, gamma=0.9)", "CosineAnnealingLR(optimizer, T_max=10)",
                  "LambdaLR(optimizer, lambda e: 0.95 ** e)", "ReduceLROnPlateau(optimizer, patience=2)",
                  "LinearLR(optimizer, start_factor=0.1, total_iters=5)",
                  "ConstantLR(optimizer, factor=0.5, total_iters=3)")


def render_training_table() -> str:
    """The Markdown table of the training objects and their Keras forms (as printed), by
    default and with ``--exact``."""
    def printed(loss="nn.MSELoss()", optimizer="torch.optim.SGD(model.parameters(), lr=0.1)",
                scheduler="None", step="pass", kind="optimizer_object", exact=False):
        src = object_script(loss, optimizer, scheduler, per_epoch=step)
        tr = translate(src, "doc.py", "keras", exact=exact)
        printer: ProgramPrinter = tr.training_printer
        ts = next(t for t in tr.program.training if t.kind == kind)
        if kind == "optimizer_object":
            return printer.optimizer_expr(ts.config)
        if kind == "loss_object":
            return printer.loss_expr(ts.config)
        if kind == "schedule_object":
            return printer.schedule_expr(ts.config)
        return printer.plateau_expr(ts.config)

    rows = ["| PyTorch | Keras (as printed) | with `--exact` |", "| --- | --- | --- |"]
    for call in DOC_OPTIMIZERS:
        args = dict(optimizer="torch.optim." + call)
        rows.append(f"| `torch.optim.{call}` | `{printed(**args)}` | `{printed(**args, exact=True)}` |")
    for call in DOC_LOSSES:
        args = dict(loss="nn." + call, kind="loss_object")
        rows.append(f"| `nn.{call}` | `{printed(**args)}` | `{printed(**args, exact=True)}` |")
    for call in DOC_SCHEDULERS:
        plateau = call.startswith("ReduceLROnPlateau")
        step = "scheduler.step(loss.item())" if plateau else "scheduler.step()"
        kind = "callback_object" if plateau else "schedule_object"
        args = dict(scheduler="torch.optim.lr_scheduler." + call, step=step, kind=kind)
        rows.append(f"| `lr_scheduler.{call}` (stepped per epoch) | `{printed(**args)}` | "
                    f"`{printed(**args, exact=True)}` |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover - regenerates the doc's table
    print(render_training_table(), end="")
