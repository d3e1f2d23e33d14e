"""The numbers of the translated training objects, torch against the Keras the printer writes:
every loss (≤ 1e-6), every optimizer step by step on the same gradients (float64, ≤ 1e-9,
with a learning-rate change and tiny gradients where the frameworks' formulas part),
every scheduler's learning rates per epoch or step, and the plateau / early-stopping
callbacks on scripted validation losses.

Each case writes the torch construction, translates a small script holding it, and
evaluates the expression the printer produced in the generated module's namespace.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow)

import keras

from torch_keras_harness import assert_same_steps
from transpiler import verify
from transpiler.training_doc import object_script
from transpiler.translate import translate

def translated(loss="nn.CrossEntropyLoss()", optimizer="torch.optim.SGD(model.parameters(), lr=0.1)",
               scheduler="None", per_batch="", per_epoch="", exact=False):
    tr = translate(object_script(loss, optimizer, scheduler, per_batch, per_epoch), "objects.py", "keras",
                   exact=exact)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    module = verify.load_generated(tr.text, "objects_keras")
    printer = tr.training_printer
    return tr, module, printer


def _fact(tr, kind):
    return next(ts for ts in tr.program.training if ts.kind == kind).config


# -- losses ----------------------------------------------------------------------------
def _targets(kind, rng, n, c):
    if kind in ("class", "class_smooth"):
        return rng.randint(0, c, size=n).astype("int64")
    if kind == "binary":
        return rng.randint(0, 2, size=(n, c)).astype("float64")
    if kind == "probs":
        p = rng.rand(n, c)
        p[0, 0] = 0.0  # a zero target contributes nothing
        return p / p.sum(axis=1, keepdims=True)
    return rng.standard_normal((n, c))


LOSS_CASES = [
    ("nn.CrossEntropyLoss()", "class", None),
    ("nn.CrossEntropyLoss(reduction='sum')", "class", None),
    ("nn.CrossEntropyLoss(label_smoothing=0.1)", "class", None),
    ("nn.CrossEntropyLoss(ignore_index=1)", "class", None),  # (the mean over the other targets)
    ("nn.CrossEntropyLoss(ignore_index=2, reduction='sum')", "class", None),
    ("nn.BCEWithLogitsLoss()", "binary", None),
    ("nn.BCELoss()", "binary", "sigmoid"),
    ("nn.MSELoss()", "values", None),
    ("nn.L1Loss()", "values", None),
    ("nn.HuberLoss(delta=0.5)", "values", None),
    ("nn.SmoothL1Loss()", "values", None),
    ("nn.NLLLoss()", "class", "log_softmax"),
    ("nn.NLLLoss(reduction='sum')", "class", "log_softmax"),
    ("nn.KLDivLoss(reduction='batchmean')", "probs", "log_softmax"),
]


@pytest.mark.parametrize("call, targets, activation", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_loss_values_match(call, targets, activation):
    tr, module, printer = translated(loss=call)
    kloss = eval(printer.loss_expr(_fact(tr, "loss_object")), vars(module))
    tloss = eval(call, {"nn": torch.nn})
    rng = np.random.RandomState(0)
    out = rng.standard_normal((6, 3)) * 2
    if activation == "sigmoid":
        out = 1 / (1 + np.exp(-out))
    elif activation == "log_softmax":
        out = out - np.log(np.exp(out).sum(axis=1, keepdims=True))
    y = _targets(targets, rng, 6, 3)
    expected = tloss(torch.from_numpy(out), torch.from_numpy(y)).item()
    got = float(keras.ops.convert_to_numpy(kloss(y, out)))
    assert abs(got - expected) <= 1e-6 * max(1.0, abs(expected)), (got, expected)


# -- optimizers: the same gradients, step by step ------------------------------------------
OPTIMIZER_CASES = [
    "torch.optim.SGD(model.parameters(), lr=0.1)",
    "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)",
    "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)",
    "torch.optim.Adam(model.parameters(), lr=0.01)",
    "torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.5, 0.9), weight_decay=0.01)",
    "torch.optim.Adam(model.parameters(), lr=0.01, amsgrad=True)",
    "torch.optim.AdamW(model.parameters(), lr=0.01)",
    "torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1, eps=1e-6)",
    "torch.optim.RMSprop(model.parameters(), lr=0.01)",
    "torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5, centered=True, weight_decay=0.01)",
    "torch.optim.Adagrad(model.parameters(), lr=0.1)",
    "torch.optim.Adagrad(model.parameters(), lr=0.1, lr_decay=0.05, weight_decay=0.01)",
    "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, dampening=0.3)",
    "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.01)",
    "torch.optim.Adadelta(model.parameters(), lr=1.0, weight_decay=0.01)",
    "torch.optim.Adamax(model.parameters(), lr=0.01)",
    "torch.optim.Adamax(model.parameters(), lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.01)",
    "torch.optim.NAdam(model.parameters(), lr=0.01)",
    "torch.optim.NAdam(model.parameters(), lr=0.01, betas=(0.8, 0.99), momentum_decay=0.01, weight_decay=0.01)",
]


#: (by default each optimizer call and each gradient size once, tests/corpus_sample.py each_value;
#: the rest under ``-m matrix_all``)
@pytest.mark.each_value("matrix_all")
@pytest.mark.parametrize("tiny", [False, True], ids=["gradients", "tiny-gradients"])
@pytest.mark.parametrize("call", OPTIMIZER_CASES)
def test_optimizer_steps_match(call, tiny):
    """Both optimizers get the same gradients for 8 steps; the rate halves after step 4
    (where SGD's two momentum formulations part); tiny gradients (1e-9) expose where
    epsilon sits. Each step's update must agree to 2e-5 of its size: Keras' Adam casts
    its Python-float betas through float32 for the bias correction (keras.ops.cast(0.999,
    "float64") is 0.9990000128746033), which alone moves a float64 step by ~7e-6."""
    tr, module, printer = translated(optimizer=call, exact=True)  # (step-for-step torch arithmetic: --exact)
    rng = np.random.RandomState(1)
    start = rng.standard_normal((3, 4))
    tparam = torch.nn.Parameter(torch.from_numpy(start.copy()))
    topt = eval(call.replace("model.parameters()", "[tparam]"), {"torch": torch, "tparam": tparam})
    keras.config.set_floatx("float64")
    try:
        kvar = keras.Variable(start.copy(), dtype="float64")
        kopt = eval(printer.optimizer_expr(_fact(tr, "optimizer_object")), vars(module))
        kopt.build([kvar])

        def halve_the_rate(step):
            if step == 4:
                for group in topt.param_groups:
                    group["lr"] *= 0.5
                kopt.learning_rate = float(kopt.learning_rate) * 0.5

        grads = [rng.standard_normal((3, 4)) * (1e-9 if tiny else 1.0) for _ in range(8)]
        assert_same_steps(tparam, topt, kvar, kopt, grads, halve_the_rate)
    finally:
        keras.config.set_floatx("float32")


@pytest.mark.parametrize("name", ["LBFGS", "Rprop", "ASGD", "SparseAdam", "RAdam"])
def test_optimizers_keras_lacks_are_stubs_naming_them(name):
    tr = translate(object_script("nn.MSELoss()", f"torch.optim.{name}(model.parameters())", "None"), "o.py", "keras")
    assert any(f"torch.optim.{name} (" in str(d) and "has no Keras optimizer" in str(d) for d in tr.stubs), \
        [str(d) for d in tr.stubs]


def test_a_stub_naming_a_computed_argument_shows_its_source_not_an_object_id():
    """A message must not change from run to run (it is in the output): the argument's text.
    (CrossEntropyLoss(ignore_index=...) translates now, as ignore_class: NLLLoss's does not.)"""
    tr = translate(object_script("nn.NLLLoss(ignore_index=symbols['<pad>'])"), "o.py", "keras")
    messages = [str(d) for d in tr.stubs]
    assert any("NLLLoss(ignore_index=symbols['<pad>'])" in m for m in messages), messages
    assert "ref=" not in tr.text


# -- schedulers: the learning rate at every epoch or step ----------------------------------
class _Host:
    """What a callback needs of a model: an optimizer (and stop_training)."""

    def __init__(self, lr):
        self.optimizer = keras.optimizers.SGD(learning_rate=lr)
        self.stop_training = False


SCHEDULER_CASES = [
    ("torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)", "epoch"),
    ("torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 5], gamma=0.1)", "epoch"),
    ("torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8)", "epoch"),
    ("torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)", "epoch"),  # periodic past T_max
    ("torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=5, eta_min=0.01)", "epoch"),
    ("torch.optim.lr_scheduler.LambdaLR(optimizer, lambda e: 1.0 / (e + 1))", "epoch"),
    ("torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 4))", "step"),
    ("torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)", "step"),
    ("torch.optim.lr_scheduler.LinearLR(optimizer)", "epoch"),
    ("torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.2, total_iters=7)", "step"),
    ("torch.optim.lr_scheduler.ConstantLR(optimizer, factor=0.5, total_iters=4)", "epoch"),
    ("torch.optim.lr_scheduler.SequentialLR(optimizer, [torch.optim.lr_scheduler.LinearLR(optimizer, "
     "start_factor=0.1, total_iters=3), torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.8)], "
     "milestones=[3])", "epoch"),
    ("torch.optim.lr_scheduler.SequentialLR(optimizer, schedulers=[torch.optim.lr_scheduler.ConstantLR("
     "optimizer, factor=0.3, total_iters=2), torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5), "
     "torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=3)], milestones=[2, 7])", "step"),
    ("torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=12, cycle_momentum=False)", "step"),
    ("torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, epochs=3, steps_per_epoch=4, pct_start=0.25, "
     "anneal_strategy='linear', div_factor=10.0, final_div_factor=100.0, cycle_momentum=False)", "step"),
    ("torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=12, three_phase=True, "
     "cycle_momentum=False)", "step"),
]


@pytest.mark.parametrize("call, per", SCHEDULER_CASES, ids=[f"{c[0].split('(')[0].split('.')[-1]}-{c[1]}-{i}"
                                                             for i, c in enumerate(SCHEDULER_CASES)])
def test_scheduler_learning_rates_match(call, per):
    step = "scheduler.step()"
    tr, module, printer = translated(scheduler=call, per_batch=step if per == "step" else "",
                                     per_epoch=step if per == "epoch" else "")
    tparam = torch.nn.Parameter(torch.zeros(1))
    topt = torch.optim.SGD([tparam], lr=0.1)
    tsched = eval(call, {"torch": torch, "optimizer": topt})
    expected = []
    for _ in range(12):
        expected.append(topt.param_groups[0]["lr"])
        topt.step()
        tsched.step()
    cb = eval(printer.schedule_expr(_fact(tr, "schedule_object")), vars(module))
    host = _Host(0.1)
    cb.set_model(host)
    got = []
    for i in range(12):
        if per == "epoch":
            cb.on_epoch_begin(i)
        else:
            cb.on_train_batch_begin(i)
        got.append(float(host.optimizer.learning_rate))
    np.testing.assert_allclose(got, expected, rtol=1e-6)


HAND_STEPPED = """
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (4,)


def build_model():
    return nn.Sequential(nn.Linear(4, 3))


def main():
    x = torch.from_numpy(np.random.RandomState(0).randn(16, 4).astype("float32"))
    y = torch.from_numpy(np.arange(16) % 3)
    model = build_model()
    loader = DataLoader(TensorDataset(x, y), batch_size=8)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = SCHEDULER
    best = float("inf")
    for epoch in range(3):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
        scheduler.step()
        if loss.item() < best:  # not the usual loop for fit: a custom loop
            best = loss.item()
    return best
"""


@pytest.mark.parametrize("call", [c for c, per in SCHEDULER_CASES if per == "epoch"],
                         ids=lambda c: c.split("(")[0].split(".")[-1])
def test_scheduler_stepped_by_the_program_sets_the_same_rates(call):
    """A custom loop stepping a torch scheduler itself: the Keras program keeps the
    ``scheduler.step()`` calls, on a StepSchedule that sets the optimizer's rate as torch's
    scheduler does after as many steps."""
    tr = translate(HAND_STEPPED.replace("SCHEDULER", call), "hand.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "scheduler.step()" in tr.text and "=StepSchedule(optimizer," in "".join(tr.text.split())
    module = verify.load_generated(tr.text, "hand_keras")
    assert np.isfinite(module.main())  # the program runs
    printer = tr.training_printer
    schedule = _fact(tr, "schedule_object")
    assert schedule.per == "manual"
    tparam = torch.nn.Parameter(torch.zeros(1))
    topt = torch.optim.SGD([tparam], lr=0.1)
    tsched = eval(call, {"torch": torch, "optimizer": topt})
    kopt = keras.optimizers.SGD(learning_rate=0.1)
    ksched = eval(printer.schedule_expr(schedule), {**vars(module), "optimizer": kopt})
    expected, got = [], []
    for _ in range(12):
        expected.append(topt.param_groups[0]["lr"])
        got.append(float(kopt.learning_rate))
        topt.step()
        tsched.step()
        ksched.step()
    np.testing.assert_allclose(got, expected, rtol=1e-6)


PLATEAU_LOSSES = [1.0, 0.8, 0.85, 0.9, 0.7, 0.71, 0.72, 0.73, 0.5, 0.6, 0.6, 0.6, 0.6, 0.4]


def _plateau_rates(call: str, losses: list[float]) -> list[tuple[float, float]]:
    """(torch, Keras) learning rate after each epoch's validation loss."""
    tr, module, printer = translated(scheduler=f"torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, {call})",
                                     per_epoch="with torch.no_grad():\n    val = criterion(model(x), y).item()\n"
                                               "scheduler.step(val)")
    tparam = torch.nn.Parameter(torch.zeros(1))
    topt = torch.optim.SGD([tparam], lr=0.1)
    tsched = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **eval(f"dict({call})"))
    cb = eval(printer.plateau_expr(_fact(tr, "callback_object")), vars(module))
    host = _Host(0.1)
    cb.set_model(host)
    cb.on_train_begin()
    rates = []
    for epoch, value in enumerate(losses):
        tsched.step(value)
        cb.on_epoch_end(epoch, {"val_loss": value})
        rates.append((topt.param_groups[0]["lr"], float(host.optimizer.learning_rate)))
    return rates


@pytest.mark.parametrize("args", ["factor=0.5, patience=1", "factor=0.5, patience=2, cooldown=1",
                                  "mode='min', factor=0.2, patience=0, min_lr=0.005"])
def test_reduce_on_plateau_matches(args):
    for epoch, (t, k) in enumerate(_plateau_rates(args, PLATEAU_LOSSES)):
        assert k == pytest.approx(t, rel=1e-6), epoch


@pytest.mark.xfail(strict=True, reason="torch's ReduceLROnPlateau threshold is relative (0.7 < 0.7 * (1 - 1e-4) "
                                       "is no improvement), Keras' min_delta absolute: a tiny improvement counts "
                                       "in one and not the other (reported as a warning when translated)")
def test_reduce_on_plateau_relative_threshold_deviation():
    # 5% better each epoch: torch's relative 10% threshold says no, Keras' absolute 0.1 says yes
    for epoch, (t, k) in enumerate(_plateau_rates("factor=0.5, patience=0, threshold=0.1", [10.0, 9.5, 9.0])):
        assert k == pytest.approx(t, rel=1e-6), epoch


@pytest.mark.parametrize("patience", [1, 2, 3])
def test_early_stopping_stops_at_the_same_epoch(patience):
    losses = [1.0, 0.9, 0.95, 0.92, 0.91, 0.85, 0.9, 0.95, 0.97, 0.99, 1.0]
    stop_torch, best, bad = None, float("inf"), 0
    for epoch, value in enumerate(losses):  # the idiom the frontend recognises
        if value < best:
            best, bad = value, 0
        else:
            bad += 1
            if bad >= patience:
                stop_torch = epoch
                break
    cb = keras.callbacks.EarlyStopping(monitor="val_loss", patience=patience)  # as printed
    host = _Host(0.1)
    cb.set_model(host)
    cb.on_train_begin()
    stop_keras = None
    for epoch, value in enumerate(losses):
        cb.on_epoch_end(epoch, {"val_loss": value})
        if host.stop_training:
            stop_keras = epoch
            break
    assert stop_keras == stop_torch


@pytest.mark.parametrize("call", [
    "F.binary_cross_entropy_with_logits(out, target, reduction='sum')",
    "F.binary_cross_entropy_with_logits(out, target)",
    "F.mse_loss(out, target)",
    "F.mse_loss(out, target, reduction='sum')",
    "F.l1_loss(out, target, reduction='none')",
    "F.cross_entropy(out, labels)",
    "F.nll_loss(out, labels)",
    "F.nll_loss(out, labels, reduction='none')",
    "F.smooth_l1_loss(out, target)",  # (was a stub of the whole loop)
    "F.huber_loss(out, target, delta=0.5)",
])
def test_losses_written_in_a_custom_step_match(call):
    """``F.<loss>`` on the step's tensors (a loss written in the loop) → keras.ops."""
    src = object_script(optimizer="torch.optim.Adam(model.parameters())").replace(
        "loss = criterion(model(xb), yb)",
        f"out = model(xb)\n            loss = {call.replace('target', 'yb').replace('labels', 'yb')}.mean()").replace(
        "import torch.nn as nn", "import torch.nn as nn\nimport torch.nn.functional as F").replace(
        "optimizer.step()", "optimizer.step()\n            other.step()")  # two optimizers: a custom step
    src = src.replace("    optimizer = ", "    other = torch.optim.SGD(model.parameters(), lr=0.1)\n    optimizer = ")
    tr = translate(src, "steps.py", "keras")
    # (the step's tensor math as the Keras printer spells it: ir/tensor_functions.py marks)
    from transpiler.printers.keras.array_spelling import array_text

    ts = next(t for t in tr.program.training if t.kind == "array_expr" and t.config.tensors and
              any(k in t.config.template for k in ("crossentropy", "square", "abs", "take_along_axis", "huber")))
    rng = np.random.RandomState(0)
    out = rng.standard_normal((5, 3))
    target = rng.rand(5, 3) if "binary" in call else rng.standard_normal((5, 3))
    labels = rng.randint(0, 3, size=5)
    if "nll" in call:  # log-probabilities, as nll_loss expects
        out = out - np.log(np.exp(out).sum(axis=1, keepdims=True))
    second = "labels" if "labels" in call else "target"
    expected = eval(call, {"F": torch.nn.functional, "out": torch.from_numpy(out),
                           "target": torch.from_numpy(target), "labels": torch.from_numpy(labels)}).numpy()
    got = eval(array_text(ts.config).format("out", second), {"keras": keras, "out": out, "target": target,
                                                           "labels": labels})
    np.testing.assert_allclose(keras.ops.convert_to_numpy(got), expected, rtol=1e-6, atol=1e-9)
