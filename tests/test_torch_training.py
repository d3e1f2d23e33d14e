"""The PyTorch training program → ir.training → Keras: what is recognised (IR facts), how
it prints, and what is left as a stub with its line. No framework is imported here; the
numbers are checked in test_training_torch_to_keras.py."""

from __future__ import annotations

import ast
import textwrap

import pytest

from transpiler.ir import training as T
from transpiler.translate import translate

HEAD = textwrap.dedent('''
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader, TensorDataset

    INPUT_SHAPE = (4,)


    def build_model():
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


    def main():
        x = torch.from_numpy(np.zeros((40, 4), dtype="float32"))
        y = torch.zeros(40, dtype=torch.long)
        loader = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
        model = build_model()
''')
LOOP = '''
    for epoch in range(3):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
'''


def program(body: str, loop: str = LOOP, exact: bool = False):
    src = HEAD + textwrap.indent(textwrap.dedent(body), "    ") + loop
    return src, translate(src, "t.py", "keras", exact=exact)


def assigned(tr, name: str) -> str:
    """The (normalised) expression the output assigns to ``name`` first."""
    for node in ast.walk(ast.parse(tr.text)):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.unparse(node.value)
    raise AssertionError(f"{name} is not assigned in the output")


def norm(code: str) -> str:
    return ast.unparse(ast.parse(code))


def has(tr, code: str) -> bool:
    """``code`` (one statement or expression) appears in the output, whatever black did to it."""
    want = norm(code)
    return any(ast.unparse(n) == want for n in ast.walk(ast.parse(tr.text)) if isinstance(n, (ast.stmt, ast.expr)))


def facts(tr, kind):
    return [ts for ts in tr.program.training if ts.kind == kind]


def one(tr, kind):
    found = facts(tr, kind)
    assert len(found) == 1, [str(d) for d in tr.diagnostics]
    return found[0].config


# -- optimizers ------------------------------------------------------------------------
OPTIMIZERS = [
    ("torch.optim.Adam(model.parameters(), lr=1e-3)", "adam",
     {"learning_rate": 1e-3, "epsilon": 1e-8, "beta_1": 0.9, "beta_2": 0.999, "amsgrad": False},
     {"l2": 0.0, "epsilon_after_bias_correction": True}, ("keras.optimizers.Adam(learning_rate=0.001, epsilon=1e-08)", "TorchAdam(learning_rate=0.001, epsilon=1e-08)")),
    ("torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.5, 0.9), weight_decay=1e-4, amsgrad=True)", "adam",
     {"beta_1": 0.5, "beta_2": 0.9, "weight_decay": None, "amsgrad": True}, {"l2": 1e-4},
     2 * ("TorchAdam(learning_rate=0.01, beta_1=0.5, beta_2=0.9, epsilon=1e-08, amsgrad=True, l2=0.0001)",)),
    ("torch.optim.AdamW(model.parameters())", "adamw", {"weight_decay": 0.01, "learning_rate": 0.001},
     {"l2": 0.0}, ("keras.optimizers.AdamW(learning_rate=0.001, epsilon=1e-08, weight_decay=0.01)",
                     "TorchAdamW(learning_rate=0.001, epsilon=1e-08, weight_decay=0.01)")),
    ("torch.optim.SGD(model.parameters(), lr=0.1)", "sgd", {"momentum": 0.0, "nesterov": False},
     {"momentum_on_gradients": False}, 2 * ("keras.optimizers.SGD(learning_rate=0.1)",)),
    ("torch.optim.SGD(model.parameters(), 0.1, 0.9, nesterov=True, weight_decay=5e-4)", "sgd",
     {"momentum": 0.9, "nesterov": True, "weight_decay": None}, {"l2": 5e-4, "momentum_on_gradients": True},
     2 * ("TorchSGD(learning_rate=0.1, momentum=0.9, nesterov=True, l2=0.0005)",)),
    ("torch.optim.RMSprop(model.parameters())", "rmsprop", {"rho": 0.99, "epsilon": 1e-8, "learning_rate": 0.01},
     {"epsilon_outside_sqrt": True}, ("keras.optimizers.RMSprop(learning_rate=0.01, rho=0.99, epsilon=1e-08)",
                                       "TorchRMSprop(learning_rate=0.01, rho=0.99, epsilon=1e-08)")),
    ("torch.optim.RMSprop(model.parameters(), weight_decay=0.1, momentum=0.5)", "rmsprop", {"momentum": 0.5},
     {"l2": 0.1, "momentum_on_gradients": True},
     2 * ("TorchRMSprop(learning_rate=0.01, rho=0.99, momentum=0.5, epsilon=1e-08, l2=0.1)",)),
    ("torch.optim.Adagrad(model.parameters(), lr=0.1)", "adagrad",
     {"initial_accumulator_value": 0.0, "epsilon": 1e-10}, {"epsilon_outside_sqrt": True},
     ("keras.optimizers.Adagrad(learning_rate=0.1, initial_accumulator_value=0.0, epsilon=1e-10)",
      "TorchAdagrad(learning_rate=0.1, initial_accumulator_value=0.0, epsilon=1e-10)")),
]


@pytest.mark.parametrize("call, kind, hyper, variant, printed", OPTIMIZERS, ids=[o[0].split("(")[0] + f"-{i}"
                                                                                for i, o in enumerate(OPTIMIZERS)])
def test_optimizer_mapped_with_torch_defaults_and_variants(call, kind, hyper, variant, printed):
    """``printed``: (Keras' own optimizer where it computes what the program means, the
    idiomatic default; torch's arithmetic, --exact)."""
    _, tr = program(f"criterion = nn.CrossEntropyLoss()\noptimizer = {call}\n")
    _, exact = program(f"criterion = nn.CrossEntropyLoss()\noptimizer = {call}\n", exact=True)
    assert assigned(exact, "optimizer") == norm(printed[1])
    opt: T.Optimizer = one(tr, "optimizer_object")
    assert opt.kind == kind
    for key, value in hyper.items():
        assert opt.hyper[key] == value, key
    for key, value in variant.items():
        assert getattr(opt, key) == value, key
    assert assigned(tr, "optimizer") == norm(printed[0])


@pytest.mark.parametrize("call, message", [
    ("torch.optim.LBFGS(model.parameters())", "torch.optim.LBFGS"),
    ("torch.optim.SGD([{'params': [p for n, p in model.named_parameters() if n.endswith('bias')], 'momentum': 0.9}, "
     "{'params': [p for n, p in model.named_parameters() if not n.endswith('bias')]}], lr=0.01)",
     "parameter groups with different momentum values (0.9, 0.0)"),
    ("torch.optim.AdamW([{'params': [model[0].weight]}, {'params': [model[0].bias, model[2].weight, model[2].bias], "
     "'lr': 0.1}], lr=0.01)", "different learning rates and weight decay"),
    ("torch.optim.SGD([{'params': [model[0].weight]}], lr=0.01)", "do not hold every parameter"),
    ("torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, dampening=0.1)", "torch refuses it"),
    ("torch.optim.NAdam(model.parameters(), decoupled_weight_decay=True)", "decoupled_weight_decay"),
    ("torch.optim.Adam(model.parameters(), maximize=True)", "maximize"),
])
def test_untranslated_optimizer_is_a_stub_with_its_line(call, message):
    src, tr = program(f"optimizer = {call}\ncriterion = nn.CrossEntropyLoss()\n")
    stub = next(d for d in tr.stubs if message in d.message)
    assert src.splitlines()[stub.span.line - 1].strip().startswith("optimizer = ")


def test_one_parameter_group_is_the_optimizer_setting():
    _, tr = program("optimizer = torch.optim.SGD([{'params': model.parameters(), 'lr': 0.1}], lr=0.01)\n"
                    "criterion = nn.CrossEntropyLoss()\n")
    assert assigned(tr, "optimizer") == norm("keras.optimizers.SGD(learning_rate=0.1)")
    assert not tr.stubs


GROUPS = """
decay, no_decay = [], []
for name, param in model.named_parameters():
    (no_decay if name.endswith("bias") else decay).append(param)
optimizer = torch.optim.AdamW([{"params": decay}, {"params": no_decay, "weight_decay": 0.0}], lr=0.1)
criterion = nn.CrossEntropyLoss()
"""


def test_groups_with_their_own_learning_rate_scale_it_per_variable():
    """A group's lr is a fixed multiple of the optimizer's for its variables (Adam's step is
    linear in the rate): with_learning_rates wraps the optimizer's update_step."""
    _, tr = program("others = [p for n, p in model.named_parameters() if n != '2.bias']\n"
                    "optimizer = torch.optim.Adam([{'params': others}, {'params': [model[2].bias], 'lr': 1e-3}], "
                    "lr=1e-2)\ncriterion = nn.CrossEntropyLoss()\n")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert assigned(tr, "others") == norm('[model.get_layer("linear_0").weights[0], '
                                          'model.get_layer("linear_0").weights[1], model.get_layer("linear_2").weights[0]]')
    assert assigned(tr, "optimizer") == norm('with_learning_rates(keras.optimizers.Adam(learning_rate=0.01, epsilon=1e-08), '
                                             '[([model.get_layer("linear_2").weights[1]], 0.1)])')
    assert "def with_learning_rates(optimizer, groups):" in tr.text


def test_adamw_groups_without_weight_decay_are_excluded_from_it():
    """torch's groups {weight_decay: W} / {weight_decay: 0}, built by a loop over
    named_parameters(), are the lists of Keras variables they hold (read statically: the
    names are state_dict keys), and the zero-decay one is excluded from Keras' decay."""
    _, tr = program(GROUPS)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert assigned(tr, "no_decay") == norm(
        '[model.get_layer("linear_0").weights[1], model.get_layer("linear_2").weights[1]]')
    assert assigned(tr, "decay") == norm(
        '[model.get_layer("linear_0").weights[0], model.get_layer("linear_2").weights[0]]')
    assert assigned(tr, "optimizer") == norm(
        "without_weight_decay(keras.optimizers.AdamW(learning_rate=0.1, epsilon=1e-08, weight_decay=0.01), no_decay)")
    opt: T.Optimizer = one(tr, "optimizer_object")
    assert opt.no_weight_decay.text == "no_decay" and len(opt.no_weight_decay.variables) == 2


NET = '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("mean", torch.zeros(4))

    def forward(self, x):
        return self.fc(x - self.mean)


def build_model():
    return Net()
'''


def test_a_model_parameter_read_and_written_by_the_program():
    src = HEAD.replace("\n\ndef build_model():\n    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n",
                       NET)
    src += "    model.mean.copy_(x.mean(dim=0))\n    print(model.mean.sum().item())\n"
    tr = translate(src, "t.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert 'model.get_layer("mean").weights[0].assign(x.mean(axis=0))' in tr.text
    assert 'keras.ops.convert_to_numpy(model.get_layer("mean").weights[0]).sum()' in tr.text


# -- losses ----------------------------------------------------------------------------
LOSSES = [
    ("nn.CrossEntropyLoss()", "sparse_categorical_crossentropy", True, {}, "mean",
     "keras.losses.SparseCategoricalCrossentropy(from_logits=True)"),
    ("nn.CrossEntropyLoss(label_smoothing=0.1)", "sparse_categorical_crossentropy", True,
     {"label_smoothing": 0.1}, "mean", "SparseCategoricalCrossentropyWithSmoothing(label_smoothing=0.1)"),
    ("nn.CrossEntropyLoss(reduction='sum')", "sparse_categorical_crossentropy", True, {}, "sum",
     'keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")'),
    ("nn.BCEWithLogitsLoss()", "binary_crossentropy", True, {}, "mean",
     "keras.losses.BinaryCrossentropy(from_logits=True)"),
    ("nn.BCELoss()", "binary_crossentropy", False, {}, "mean", "keras.losses.BinaryCrossentropy()"),
    ("nn.MSELoss()", "mean_squared_error", False, {}, "mean", "keras.losses.MeanSquaredError()"),
    ("nn.L1Loss()", "mean_absolute_error", False, {}, "mean", "keras.losses.MeanAbsoluteError()"),
    ("nn.HuberLoss(delta=2.0)", "huber", False, {"delta": 2.0}, "mean", "keras.losses.Huber(delta=2.0)"),
    ("nn.SmoothL1Loss()", "huber", False, {"delta": 1.0}, "mean", "keras.losses.Huber(delta=1.0)"),
    ("nn.NLLLoss()", "nll", False, {}, "mean", "NLLLoss()"),
    ("nn.KLDivLoss(reduction='batchmean')", "kl_divergence", False, {"log_input": True}, "mean",
     "KLDivergenceFromLogProbabilities()"),
]


@pytest.mark.parametrize("call, kind, logits, params, reduction, printed", LOSSES, ids=[lo[0] for lo in LOSSES])
def test_loss_mapped_with_reduction(call, kind, logits, params, reduction, printed):
    _, tr = program(f"criterion = {call}\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n")
    loss: T.Loss = one(tr, "loss_object")
    assert (loss.kind, loss.from_logits, loss.params, loss.reduction) == (kind, logits, params, reduction)
    assert assigned(tr, "criterion") == norm(printed)


@pytest.mark.parametrize("call, message", [
    ("nn.SmoothL1Loss(beta=0.5)", "beta"),
    ("nn.KLDivLoss()", "batchmean"),
    ("nn.MSELoss(reduction='sum')", "sums every element"),
    ("nn.CrossEntropyLoss(weight=torch.ones(3))", "weight"),
    ("nn.NLLLoss(ignore_index=0)", "ignore_index"),  # (CrossEntropyLoss(ignore_index) → ignore_class)
    ("nn.BCEWithLogitsLoss(pos_weight=torch.ones(1))", "pos_weight"),
    ("nn.MSELoss(reduction='none')", "reduction"),
])
def test_untranslated_loss_is_a_stub(call, message):
    _, tr = program(f"criterion = {call}\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n")
    assert any(message in d.message for d in tr.stubs), [str(d) for d in tr.stubs]


# -- the usual loop ------------------------------------------------------------------------
def test_usual_loop_is_compile_and_fit():
    src, tr = program("criterion = nn.CrossEntropyLoss()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n")
    loop: T.TrainingLoop = one(tr, "training_loop")
    assert (loop.model, loop.optimizer, loop.loss) == ("model", "optimizer", "criterion")
    assert (loop.fit.x.text, loop.fit.y.text, loop.fit.batch_size, loop.fit.epochs, loop.fit.shuffle) == \
        ("x[:32]", "y[:32]", 8, 3, True)
    assert loop.validation is None and not tr.stubs
    assert has(tr, "model.compile(optimizer=optimizer, loss=criterion)")
    assert has(tr, "model.fit(x[:32], y[:32], batch_size=8, epochs=3, shuffle=True, verbose=2)")
    assert "loader = " not in tr.text  # fit batches the arrays: the DataLoader is gone
    names = {n.id for n in ast.walk(ast.parse(tr.text)) if isinstance(n, ast.Name)}
    assert not names & {"torch", "nn", "F", "DataLoader", "TensorDataset"}


def test_loop_with_validation_scheduler_clip_and_metrics():
    body = '''
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    '''
    loop_src = '''
    for epoch in range(3):
        model.train()
        correct = 0
        for i, (xb, yb) in enumerate(loader):
            optimizer.zero_grad()
            out = model(xb)
            loss = criterion(out, yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            correct += (out.argmax(1) == yb).sum().item()
        scheduler.step()
        model.eval()
        with torch.no_grad():
            val_loss = criterion(model(x[32:]), y[32:]).item()
        print(epoch, correct, val_loss)
'''
    _, tr = program(body, loop_src)
    loop: T.TrainingLoop = one(tr, "training_loop")
    assert (loop.validation[0].text, loop.validation[1].text) == ("x[32:]", "y[32:]")
    assert loop.compile.metrics == [["accuracy"]]
    assert loop.compile.optimizer.clip == {"global_clipnorm": 0.5}
    assert loop.callbacks == ["scheduler"]
    sched: T.Schedule = one(tr, "schedule_object")
    assert (sched.kind, sched.per, sched.params["decay_steps"], sched.params["decay_rate"]) == \
        ("exponential_decay", "epoch", 2, 0.5)
    assert assigned(tr, "scheduler") == norm("keras.callbacks.LearningRateScheduler(lambda epoch: 0.001 * 0.5 ** "
                                             "(epoch // 2))")
    assert has(tr, "model.fit(x[:32], y[:32], batch_size=8, epochs=3, shuffle=True, "
                   "validation_data=(x[32:], y[32:]), callbacks=[scheduler], verbose=2)")
    assert has(tr, 'model.compile(optimizer=optimizer, loss=criterion, metrics=["accuracy"])')
    assert "global_clipnorm=0.5" in assigned(tr, "optimizer")


@pytest.mark.parametrize("sched, kind, per, extra", [
    ("torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 4], gamma=0.1)", "piecewise_constant_decay",
     "epoch", {"boundaries": [1, 3]}),
    ("torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)", "exponential_decay", "epoch",
     {"decay_steps": 1, "staircase": False}),
    ("torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10, eta_min=1e-4)", "cosine_annealing", "epoch",
     {"t_max": 10, "eta_min": 1e-4}),
])
def test_schedulers_stepped_per_epoch(sched, kind, per, extra):
    body = f"criterion = nn.CrossEntropyLoss()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n" \
           f"scheduler = {sched}\n"
    _, tr = program(body, LOOP + "        scheduler.step()\n")
    s: T.Schedule = one(tr, "schedule_object")
    assert (s.kind, s.per) == (kind, per)
    for key, value in extra.items():
        assert s.params[key] == value
    assert "keras.callbacks.LearningRateScheduler(" in tr.text


def test_lambda_scheduler_stepped_per_batch_keeps_the_user_function():
    body = "criterion = nn.CrossEntropyLoss()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n" \
           "warmup = len(loader)\n" \
           "scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))\n"
    _, tr = program(body, LOOP + "            scheduler.step()\n")
    s: T.Schedule = one(tr, "schedule_object")
    assert (s.kind, s.per) == ("lambda", "step")
    assert assigned(tr, "scheduler") == norm("BatchLearningRateScheduler(lambda s: 0.1 * min(1.0, (s + 1) / warmup))")
    assert assigned(tr, "warmup") == "math.ceil(len(x[:32]) / 8)"  # len(loader) from the arrays


def test_plateau_patience_is_one_more_in_keras():
    body = "criterion = nn.CrossEntropyLoss()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n" \
           "scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)\n"
    loop = LOOP + "        with torch.no_grad():\n            v = criterion(model(x[32:]), y[32:]).item()\n" \
                  "        scheduler.step(v)\n"
    _, tr = program(body, loop)
    cb: T.Callback = one(tr, "callback_object")
    assert (cb.kind, cb.params["patience"], cb.params["min_delta"], cb.params["relative_min_delta"]) == \
        ("reduce_lr_on_plateau", 3, 1e-4, True)
    assert any("relative threshold" in d.message for d in tr.diagnostics)
    assert assigned(tr, "scheduler") == norm(
        'keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=3, mode="min", '
        'min_delta=0.0001, cooldown=0, min_lr=0.0)')


def test_early_stopping_idiom_is_a_callback_and_its_variables_survive():
    body = "criterion = nn.MSELoss()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n" \
           "best, state, bad = float('inf'), None, 0\n"
    loop = '''
    for epoch in range(50):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            val = criterion(model(x[32:]), y[32:]).item()
        if val < best:
            best, state, bad = val, copy.deepcopy(model.state_dict()), 0
        else:
            bad += 1
            if bad >= 4:
                break
    model.load_state_dict(state)
    print(best)
'''
    _, tr = program(body, loop)
    loop_ir: T.TrainingLoop = one(tr, "training_loop")
    assert loop_ir.early_stopping.params["patience"] == 4
    assert loop_ir.early_stopping.params["restore_best_weights"] is True
    assert loop_ir.after == {"best": "best_val_loss", "state": "best_weights"}
    assert 'best = min(history.history["val_loss"])' in tr.text
    assert "model.set_weights(state)" in tr.text


def test_single_pass_autoencoder_and_functional_loss():
    head = HEAD.replace("TensorDataset(x[:32], y[:32])", "TensorDataset(x)")
    src = head + textwrap.indent(textwrap.dedent('''
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for (batch,) in loader:
            optimizer.zero_grad()
            loss = F.mse_loss(model(batch), batch)
            loss.backward()
            optimizer.step()
    '''), "    ")
    src = src.replace("nn.Linear(8, 3)", "nn.Linear(8, 4)")
    tr = translate(src, "t.py", "keras")
    loop: T.TrainingLoop = one(tr, "training_loop")
    assert (loop.fit.x.text, loop.fit.y.text, loop.fit.epochs, loop.loss) == ("x", "x", 1, None)
    assert has(tr, "model.compile(optimizer=optimizer, loss=keras.losses.MeanSquaredError())")


# -- loops of another shape ---------------------------------------------------------------
def test_two_models_make_a_custom_step_under_a_gradient_tape():
    src = HEAD.replace("def main():", textwrap.dedent('''
        def build_critic():
            return nn.Sequential(nn.Linear(3, 1))


        def main():''').strip("\n")) + textwrap.indent(textwrap.dedent('''
        critic = build_critic()
        opt_m = torch.optim.Adam(model.parameters())
        opt_c = torch.optim.Adam(critic.parameters())
        for xb, yb in loader:
            opt_c.zero_grad()
            loss_c = critic(model(xb).detach()).mean()
            loss_c.backward()
            opt_c.step()
            opt_m.zero_grad()
            loss_m = -critic(model(xb)).mean()
            loss_m.backward()
            opt_m.step()
    '''), "    ")
    src = src.replace("INPUT_SHAPE = (4,)", "INPUT_SHAPE = (4,)\nCRITIC_INPUT_SHAPE = (3,)")
    tr = translate(src, "t.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert [ts.config["models"] for ts in facts(tr, "backward")] == [[("critic", "critic_grads")],
                                                                      [("model", "model_grads")]]
    assert "with tf.GradientTape(persistent=True) as tape:" in tr.text
    assert has(tr, "keras.ops.stop_gradient(model(xb, training=True))")
    assert has(tr, "critic_grads = accumulate_gradients(tape, loss_c, critic, critic_grads)")
    assert has(tr, "apply_gradients(tape, opt_m, model, model_grads)")
    assert "import tensorflow as tf" in tr.text
    ast.parse(tr.text)


def test_gradient_accumulation_is_not_translated():
    body = "criterion = nn.CrossEntropyLoss()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    loop = '''
    for xb, yb in loader:
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
'''
    src, tr = program(body, loop)
    stub = next(d for d in tr.stubs if "never zeroed" in d.message)
    assert src.splitlines()[stub.span.line - 1].strip() == "for xb, yb in loader:"


# -- data code, saving, loading ------------------------------------------------------------
def test_data_code_becomes_numpy_and_model_calls_predict():
    body = '''
        model.eval()
        with torch.no_grad():
            preds = model(x[:4]).argmax(dim=1)
        stats = x.std(dim=0), x.mean(0, keepdim=True), x.size(0), y.float().sum().item()
        torch.manual_seed(3)
        print(model)
        print(sum(p.numel() for p in model.parameters()))
    '''
    _, tr = program(body, "")
    text = tr.text
    assert assigned(tr, "preds") == "model.predict(x[:4], verbose=0).argmax(axis=1)"
    assert assigned(tr, "stats") == norm('(x.std(axis=0, ddof=1), x.mean(axis=0, keepdims=True), x.shape[0], '
                                         'y.astype("float32").sum().item())')
    assert has(tr, "keras.utils.set_random_seed(3)") and has(tr, "model.summary()")
    assert has(tr, "print(sum(int(np.prod(p.shape)) for p in model.trainable_weights))")
    assert "with torch" not in text and "model.eval()" not in text
    assert assigned(tr, "y") == norm('np.zeros((40,), dtype="int64")')
    assert assigned(tr, "x") == norm('np.zeros((40, 4), dtype="float32")')


def test_reductions_keep_numpy_spelled_axes():
    """torch takes ``axis=``/``keepdims=`` for ``dim=``/``keepdim=``: they are not dropped."""
    _, tr = program("preds = x.argmax(axis=1)\nmeans = x.mean(axis=0, keepdims=True)\n", "")
    assert assigned(tr, "preds") == "x.argmax(axis=1)"
    assert assigned(tr, "means") == "x.mean(axis=0, keepdims=True)"


def test_size_of_the_floating_state_becomes_count_params():
    """Keras' count_params() counts the non-trainable weights (BatchNorm statistics) too: the
    sizes of torch's floating state, not of parameters() (num_batches_tracked is an int)."""
    _, tr = program("print(sum(t.numel() for t in model.state_dict().values() if t.is_floating_point()))\n", "")
    assert has(tr, "print(model.count_params())") and not tr.stubs
    _, tr = program("print(sum(t.numel() for t in model.state_dict().values()))\n", "")
    assert "count_params" not in tr.text and len(tr.stubs) == 1


def test_checkpoints_become_weights_files():
    body = '''
        torch.save(model.state_dict(), "model.pt")
        model.load_state_dict(torch.load("model.pt", weights_only=True))
        path = "other.pth"
        torch.save(model.state_dict(), path)
        state = torch.load(path)
        model.load_state_dict(state)
    '''
    _, tr = program(body, "")
    assert has(tr, 'model.save_weights("model.weights.h5")')
    assert has(tr, 'model.load_weights("model.weights.h5")')
    assert assigned(tr, "path") == "'other.weights.h5'"
    assert assigned(tr, "state") == "read_weights(build_model, path)" and has(tr, "model.set_weights(state)")


def test_leftover_torch_is_a_stub_and_module_level_stubs_do_not_raise_on_import():
    src = HEAD.replace("def main():", "threads = torch.get_num_threads()\n\n\ndef main():") + \
        "    print(x.device)\n"
    tr = translate(src, "t.py", "keras")
    lines = src.splitlines()
    spans = sorted(d.span.line for d in tr.stubs)
    assert [lines[n - 1].strip() for n in spans] == ["threads = torch.get_num_threads()", "print(x.device)"]
    tree = ast.parse(tr.text)
    top = [n for n in tree.body if isinstance(n, ast.Raise)]
    assert not top  # importing the script raises nothing
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    assert isinstance(main.body[-1], ast.Raise)


def test_translation_of_the_training_program_imports_no_framework():
    import subprocess
    import sys

    code = ("import sys; from transpiler.translate import translate; "
            f"translate({HEAD + LOOP!r}, 't.py', 'keras'); "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'tensorflow', 'keras')); "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_training_table_in_the_docs_matches_the_printer():
    import os

    from transpiler.training_doc import render_training_table

    root = os.path.dirname(os.path.dirname(__file__))
    with open(os.path.join(root, "docs", "torch_to_keras.md"), encoding="utf-8") as fh:
        text = fh.read()
    marker = "<!-- generated: python -m transpiler.training_doc -->\n"
    assert text.split(marker, 1)[1].split("<!-- end of generated table -->", 1)[0] == render_training_table()


def test_lstm_biases_step_at_twice_the_rate():
    """torch's two LSTM biases move their sum (Keras' one bias) twice as far per step: under
    --exact the Keras optimizer steps the LSTM biases at twice the rate, and says why; with
    weight decay (which treats the two biases apart) it does not; without --exact Keras' one
    bias steps at its own rate and the report lists the difference."""
    import os

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "corpus", "torch", "lstm_classifier.py")
    with open(path) as fh:
        source = fh.read()
    text = translate(source, path, "keras", exact=True).text
    assert "the LSTM biases step at twice the rate" in text
    assert 'model.get_layer("lstm_l0").weights[2]' in text and "2.0," in text
    decayed = translate(source.replace("lr=3e-3)", "lr=3e-3, weight_decay=1e-4)"), path, "keras", exact=True).text
    assert "twice the rate" not in decayed
    idiomatic = translate(source, path, "keras")
    assert "twice the rate" not in idiomatic.text and "with_learning_rates" not in idiomatic.text
    assert any(d.startswith("LSTM biases: torch's two biases") for d in idiomatic.differences)


def test_an_import_only_translated_code_used_goes_an_unused_one_stays():
    """``copy`` served ``copy.deepcopy(model.state_dict())`` (now ``get_weights()``): it goes;
    ``import os``, which the source never used, stays as the user wrote it."""
    src, _ = program("criterion = nn.CrossEntropyLoss()\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n")
    src = src.replace("import numpy as np", "import copy\nimport os\n\nimport numpy as np", 1) + \
        "    state = copy.deepcopy(model.state_dict())\n    model.load_state_dict(state)\n"
    tr = translate(src, "t.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "model.get_weights()" in tr.text
    tree = ast.parse(tr.text)
    imported = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    assert "copy" not in imported and "os" in imported


NET_AND_BUILDER = textwrap.dedent('''
    import torch
    import torch.nn as nn

    INPUT_SHAPE = (4,)


    class Net(nn.Module):
        def __init__(self, n=3):
            super().__init__()
            self.fc = nn.Linear(4, n)

        def forward(self, x):
            return self.fc(x)


    def build_model():
        return Net()


    def main():
        net = build_model()
        torch.save(net.state_dict(), "net.pth")
        net = Net()
        net.load_state_dict(torch.load("net.pth"))
''')


def test_model_class_called_by_the_program_besides_its_builder():
    """``net = Net()`` where ``build_model()`` is ``return Net()``: the same model (the class is
    printed as the builder, so ``Net`` was left undefined: a NameError at run time); a builder
    giving arguments makes ``Net`` a stub."""
    tr = translate(NET_AND_BUILDER, "net.py", "keras")
    assert not tr.stubs, tr.stubs
    assert has(tr, 'net.load_weights("net.weights.h5")')
    tree = ast.parse(tr.text)
    net = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "Net")
    assert ast.unparse(net.body[-1]) == "return build_model()"
    tr = translate(NET_AND_BUILDER.replace("return Net()", "return Net(n=5)"), "net.py", "keras")
    assert [d.message.split(":")[0] for d in tr.stubs][:1] == ["Net"], tr.stubs
    assert "def Net(*args, **kwargs):" in tr.text


TUTORIAL = '''
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (3, 12, 12)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(6 * 4 * 4, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = torch.flatten(x, 1)
        return self.fc1(x)


def build_model():
    return Net()


def main():
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(48, 3, 12, 12).astype("float32"))
    y = torch.from_numpy(rng.randint(0, 10, size=48))
    trainloader = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=8, shuffle=True)
    testloader = DataLoader(TensorDataset(x[32:], y[32:]), batch_size=8)
    net = build_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    for epoch in range(2):
        running_loss = 0.0
        for i, data in enumerate(trainloader, 0):
            inputs, labels = data
            optimizer.zero_grad()
            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            if i % 2000 == 1999:
                print(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 2000:.3f}")
                running_loss = 0.0
    correct = 0
    total = 0
    with torch.no_grad():
        for data in testloader:
            images, labels = data
            outputs = net(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
            assert torch.equal(torch.max(outputs, outputs), outputs)
    return correct, total
'''


def test_the_pytorch_tutorial_loop_is_fit_and_its_evaluation_runs():
    """The official CIFAR-10 tutorial's loop: the batch unpacked in the loop's first statement,
    ``enumerate(loader, 0)``, a print-and-reset every N batches, ``data`` reused by the
    evaluation loop; ``_, predicted = torch.max(outputs.data, 1)`` and elementwise
    ``torch.max(a, b)`` in the evaluation (both were stubs)."""
    tr = translate(TUTORIAL, "tutorial.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    loop: T.TrainingLoop = one(tr, "training_loop")
    assert (loop.fit.batch_size, loop.fit.epochs, loop.fit.x.text, loop.fit.y.text) == (8, 2, "x[:32]", "y[:32]")
    assert has(tr, "_, predicted = (outputs.max(axis=1), outputs.argmax(axis=1))")
    assert has(tr, "np.maximum(outputs, outputs)")
    from transpiler import verify

    module = verify.load_generated(tr.text, "tutorial_keras")
    correct, total = module.main()
    assert total == 16 and 0 <= correct <= 16


SEGMENTATION = '''
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (3, 8, 8)


def build_model():
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 2, 1))


def dice_loss(logits, target, eps=1.0):
    probs = F.softmax(logits, dim=1)[:, 1]
    inter = (probs * target).sum()
    return 1 - (2 * inter + eps) / (probs.sum() + target.sum() + eps)


def main():
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(16, 3, 8, 8).astype("float32"))
    y = torch.from_numpy((rng.rand(16, 8, 8) > 0.5).astype("int64"))
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    model = build_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for xb, yb in loader:
            optimizer.zero_grad()
            logits = model(xb)
            loss = LOSS
            loss.backward()
            optimizer.step()
'''


def test_a_feature_map_handed_to_a_user_function_is_permuted_back():
    """A user loss function indexes torch's channels-first layout: the step hands it the Keras
    model's channels-last logits permuted back (frontend_ast/torch/layout_boundary.py)."""
    tr = translate(SEGMENTATION.replace("LOSS", "criterion(logits, yb) + dice_loss(logits, yb.float())"),
                   "seg.py", "keras")
    # (its body's F.softmax(logits, dim=1) on a step tensor is a stub of its own, as it is for a
    # model whose output has no channels: not about the layout)
    assert not [d for d in tr.stubs if "channels" in d.message], [str(d) for d in tr.stubs]
    assert "dice_loss(keras.ops.transpose(logits,(0,3,1,2))," in "".join(tr.text.split())


@pytest.mark.parametrize("loss", ["criterion(logits, yb) + torch.sum(logits, dim=1).mean()",
                                  "criterion(logits, yb) + F.softmax(logits, dim=1).mean()"])
def test_a_feature_map_output_in_a_custom_step_is_not_indexed_in_torch_layout(loss):
    """The Keras model returns the segmentation logits channels-last: code of the step that
    takes dims or indices of torch's channels-first layout (a user loss function, a reduction
    over dim=1, a softmax over dim=1) is a stub, not an operation on the wrong axis (the
    output's layout was read before the passes had decided it: every such step translated)."""
    tr = translate(SEGMENTATION.replace("LOSS", loss), "seg.py", "keras")
    assert any("channels-last" in d.message for d in tr.stubs), [str(d) for d in tr.stubs]


@pytest.mark.parametrize("predicted", ["_, predicted = outputs.max(1)", "_, predicted = torch.max(outputs.data, 1)",
                                       "predicted = outputs.max(dim=1).indices", "predicted = outputs.argmax(1)"])
def test_accuracy_counted_in_the_loop_is_fits_accuracy_metric(predicted):
    body = '''
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
'''
    loop = '''
    for epoch in range(3):
        correct = 0
        for xb, yb in loader:
            optimizer.zero_grad()
            outputs = model(xb)
            loss = criterion(outputs, yb)
            loss.backward()
            optimizer.step()
            PREDICTED
            correct += predicted.eq(yb).sum().item()
        print(correct)
'''.replace("PREDICTED", predicted)
    _, tr = program(body, loop)
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert has(tr, 'model.compile(optimizer=optimizer, loss=criterion, metrics=["accuracy"])')


def test_manual_batching_over_a_random_permutation():
    """``perm = torch.randperm(n)`` then ``x[perm[i:i + b]]`` batches: numpy's permutation
    (was a stub); the loop is a custom step over those batches and runs."""
    src = HEAD + textwrap.indent(textwrap.dedent('''
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            perm = torch.randperm(x.size(0))
            for i in range(0, x.size(0), 8):
                idx = perm[i:i + 8]
                xb, yb = x[idx], y[idx]
                optimizer.zero_grad()
                loss = criterion(model(xb), yb)
                loss.backward()
                optimizer.step()
        return sorted(perm.tolist())
    '''), "    ")
    tr = translate(src, "perm.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert has(tr, "perm = np.random.permutation(x.shape[0])")
    from transpiler import verify

    assert verify.load_generated(tr.text, "perm_keras").main() == list(range(40))



TRAIN_ONE_EPOCH = """
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (5,)


def build_model():
    return nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))


def train_one_epoch(model, loader, criterion, optimizer, scheduler):
    model.train()
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss.item() * xb.size(0)
    return total / len(loader.dataset)


@torch.no_grad()
def evaluate(model, loader, criterion):
    model.eval()
    total, correct = 0.0, 0
    for xb, yb in loader:
        out = model(xb)
        total += criterion(out, yb).item() * xb.size(0)
        correct += (out.argmax(1) == yb).sum().item()
    return total / len(loader.dataset), correct / len(loader.dataset)


def main():
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(64, 5).astype("float32"))
    y = torch.from_numpy(rng.randint(0, 3, size=64))
    train_loader = DataLoader(TensorDataset(x[:48], y[:48]), batch_size=16, shuffle=True)
    val_loader = DataLoader(TensorDataset(x[48:], y[48:]), batch_size=16)
    model = build_model()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=30)
    for epoch in range(10):
        train_loss = train_one_epoch(model, train_loader, criterion, optimizer, scheduler)
        val_loss, val_acc = evaluate(model, val_loader, criterion)
        print(f"{epoch}: {train_loss:.3f} {val_loss:.3f} {val_acc:.3f}")


if __name__ == "__main__":
    main()
"""


def test_train_one_epoch_function_with_a_scheduler_stepped_per_batch():
    """The common ``train_one_epoch(model, loader, criterion, optimizer, scheduler)``: the
    scheduler stepped in the batch loop keeps its ``scheduler.step()`` on a StepSchedule (was
    a stub of the whole loop), and ``len(loader.dataset)`` in a function given the loader
    stays so (it was the array of the first call's loader, a name the function does not
    see: a NameError when run)."""
    tr = translate(TRAIN_ONE_EPOCH, "fn.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    assert "scheduler.step()" in tr.text and "StepSchedule(" in tr.text
    assert tr.text.count("len(loader.dataset)") == 3
    from transpiler import verify

    module = verify.load_generated(tr.text.replace("range(10)", "range(2)"), "fn_keras")
    module.main()


LOADER_GIVEN = """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

INPUT_SHAPE = (6,)


def build_model():
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def train(model, loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        print("epoch", epoch, loss.item())


def train_epoch(model, loader, optimizer, criterion):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * x.size(0)
    return total / len(loader.dataset)


def main():
    torch.manual_seed(0)
    x = torch.randn(40, 6)
    y = (torch.sin(x[:, 0]) > 0).long()
    batch = 10
    loader = DataLoader(TensorDataset(x, y), batch_size=batch)
    model = build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, loader, optimizer, nn.CrossEntropyLoss(), epochs=2)
    print(train_epoch(model, loader, optimizer, nn.CrossEntropyLoss()))


if __name__ == "__main__":
    main()
"""


def test_a_function_given_the_loader_reads_its_arrays_through_it():
    """``train(model, loader, ...)`` called from ``main()``, where the arrays are main's ``x``
    and ``y`` and the batch loop binds the same names: fit reads the arrays and the batch size
    through the loader (it read main's ``x``, ``y``, ``batch``: a NameError when run), and
    ``len(loader.dataset)`` stays so (it was ``len(x)``, the batch: a number 4x off).
    ``torch.sin`` on the data is ``np.sin`` (was a stub)."""
    tr = translate(LOADER_GIVEN, "given.py", "keras")
    assert not tr.stubs, [str(d) for d in tr.stubs]
    flat = "".join(tr.text.split())
    assert "model.fit(loader.dataset.arrays[0],loader.dataset.arrays[1],batch_size=loader.batch_size," in flat
    assert "returntotal/len(loader.dataset)" in flat
    assert "np.sin(x[:,0])" in flat
    from transpiler import verify

    verify.load_generated(tr.text, "given_keras").main()


def test_a_layer_building_helper_is_not_called_weight_initialisation():
    """A VGG-style ``make_layers(cfg)`` that the builder returns: the model is found (no model
    was, as the builder mentions no nn class itself), and the helper is left as a stub whose
    text says why: its layers are in the Keras builder (it said "weight initialisation is not
    translated", which the helper never did)."""
    src = textwrap.dedent('''
        import torch.nn as nn

        INPUT_SHAPE = (3, 8, 8)


        def make_layers(cfg, in_channels=3):
            layers = []
            for v in cfg:
                layers += [nn.Conv2d(in_channels, v, 3, padding=1), nn.ReLU()]
                in_channels = v
            return nn.Sequential(*layers)


        def build_model():
            return make_layers([4, 8])
    ''')
    tr = translate(src, "vgg.py", "keras")
    assert tr.program.models and not tr.stubs, [str(d) for d in tr.stubs]  # (no model was found)
    helper = tr.text.split("def make_layers", 1)[1].split("\n\n\n", 1)[0]
    assert "make_layers only serves the model's construction (the layers it makes are written out in" in helper
    assert "initialis" not in helper


def test_a_training_mode_known_only_at_run_time_is_a_stub():
    """``model.train(flag)`` with a flag the program computes: the calls after it would run in
    training mode whatever the flag (``model(x, training=True)`` for an evaluation: dropout and
    batch statistics on); now a stub that says why."""
    src = textwrap.dedent('''
        import torch
        import torch.nn as nn

        INPUT_SHAPE = (4,)


        def build_model():
            return nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 1))


        def predict(model, x, training):
            model.train(training)
            return model(x)


        def main():
            model = build_model()
            out = predict(model, torch.randn(8, 4), False)
            print(out.shape)


        if __name__ == "__main__":
            main()
    ''')
    tr = translate(src, "mode.py", "keras")
    stub = next(d for d in tr.stubs if "model.train(training)" in d.message)
    assert "known only when the program runs" in stub.message
    predict = tr.text.split("def predict", 1)[1].split("def main", 1)[0]
    assert predict.index("raise NotImplementedError") < predict.index("model(x, training=True)")
