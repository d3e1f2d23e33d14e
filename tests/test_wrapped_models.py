"""Keras models that wrap other models and train them with their own compile() and
train_step() (issue 18 item 3: keras.io's WGAN-GP, CycleGAN, distillation, DDPM, SimSiam):
the wrapper becomes a torch class holding the wrapped modules, its compile() binds each
optimizer to the parameters its step updates, and its step is zero_grad/backward/step per
optimizer. tests/programs/wrapped_models_gan_distiller.py has a GAN with two optimizers and
a distiller; its first training step in torch equals Keras' from the same weights."""

from __future__ import annotations

import ast
import os

import numpy as np
import pytest

from transpiler.translate import translate

ROOT = os.path.dirname(os.path.dirname(__file__))
PROGRAM = os.path.join(ROOT, "tests", "programs", "wrapped_models_gan_distiller.py")
RTOL = 1e-4


def _source() -> str:
    with open(PROGRAM, encoding="utf-8") as fh:
        return fh.read()


@pytest.fixture(scope="module")
def translated():
    return translate(_source(), PROGRAM)


def test_wrapper_classes_translate_without_stubs(translated):
    assert not translated.stubs, [d.message for d in translated.stubs]
    text = translated.text
    assert "class PairedGAN(nn.Module):" in text and "class Distiller(nn.Module):" in text
    # each optimizer the class's compile() stores is made over the parameters its step updates
    assert "self.d_optimizer = d_optimizer(self.discriminator.parameters())" in text
    assert "self.g_optimizer = g_optimizer(self.generator.parameters())" in text
    assert "self.optimizer = optimizer(self.student.parameters())" in text  # super().compile(optimizer=)
    assert "functools.partial(torch.optim.SGD, lr=0.02, momentum=0.5)" in text
    # the second tape of the GAN's step clears and steps the generator's optimizer, not the first one's
    step = text[text.index("class PairedGAN"):text.index("class Distiller")]
    order = [line.strip().split("  #")[0] for line in step.splitlines()
             if line.strip().endswith(("zero_grad()  # the tape's gradients start from zero", ".backward()", ".step()"))]
    assert order == ["self.d_optimizer.zero_grad()", "d_loss.backward()", "self.d_optimizer.step()",
                     "self.g_optimizer.zero_grad()", "g_loss.backward()", "self.g_optimizer.step()"]
    assert "fit_train_step(gan, points, noise, epochs=2, batch_size=16)" in text
    assert "evaluate_test_step(distiller, points, labels, batch_size=16)" in text
    ast.parse(text)


def test_untranslatable_step_is_a_marked_stub_and_fit_too():
    source = _source().replace("grads = tape.gradient(loss, self.student.trainable_variables)",
                               "grads = tape.gradient(loss, self.student.trainable_variables)\n"
                               "        grads = [tf.clip_by_norm(g, 1.0) for g in grads]")
    result = translate(source, PROGRAM)
    messages = [d.message for d in result.stubs]
    assert any("Distiller.train_step()" in m for m in messages), messages
    assert any("distiller.fit()" in m for m in messages), messages
    assert "raise NotImplementedError" in result.text and "fit_train_step(distiller" not in result.text
    assert "fit_train_step(gan, points, noise" in result.text  # the other wrapper still trains


def test_gradient_penalty_and_watch_become_autograd():
    source = _source().replace(
        "            d_loss = self.loss_fn(ops.ones_like(real_logits), real_logits) + self.loss_fn(\n"
        "                ops.zeros_like(fake_logits), fake_logits)\n",
        "            d_loss = self.loss_fn(ops.ones_like(real_logits), real_logits) + self.loss_fn(\n"
        "                ops.zeros_like(fake_logits), fake_logits) + self.penalty(real)\n")
    source = source.replace("    def train_step(self, data):\n        real, noise = data", '''    def penalty(self, real):
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(real)
            pred = self.discriminator(real, training=True)
        grads = gp_tape.gradient(pred, [real])[0]
        return tf.reduce_mean(tf.square(grads))

    def train_step(self, data):
        real, noise = data''', 1)
    result = translate(source, PROGRAM)
    assert not result.stubs, [d.message for d in result.stubs]
    assert "real.requires_grad_(True)" in result.text
    assert "grads = torch.autograd.grad(pred.sum(), [real], create_graph=True)[0]" in result.text


def _compile_args(namespace: dict, text: str, var: str) -> dict:
    """The keyword arguments of ``<var>.compile(...)`` in a program's main(), evaluated there."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == var:
            return {kw.arg: eval(compile(ast.Expression(kw.value), "<args>", "eval"), namespace)  # noqa: S307
                    for kw in node.keywords}
    raise AssertionError(f"no {var}.compile(...)")


def _copy_weights(kmodel, tmodel) -> None:
    import torch

    weights = kmodel.get_weights()
    state = tmodel.state_dict()
    assert len(weights) == len(state)
    for w, key in zip(weights, state):
        state[key] = torch.from_numpy(np.ascontiguousarray(w.T if w.ndim == 2 else w))
    tmodel.load_state_dict(state)


def _torch_weights(tmodel) -> list:
    return [v.detach().numpy().T if v.ndim == 2 else v.detach().numpy() for v in tmodel.state_dict().values()]


def test_first_steps_equal_keras(translated):
    import torch  # (before TensorFlow)
    import tensorflow as tf

    k_ns = {"__name__": "keras_program"}
    exec(compile(_source(), PROGRAM, "exec"), k_ns)  # noqa: S102
    t_ns = {"__name__": "torch_program"}
    exec(compile(translated.text, "translated.py", "exec"), t_ns)  # noqa: S102
    points, labels, noise = k_ns["make_data"]()
    batch = slice(0, 16)

    for wrapper, parts, var, data in (
            ("PairedGAN", ("build_generator", "build_discriminator"), "gan", (points, noise)),
            ("Distiller", ("build_student", "build_teacher"), "distiller", (points, labels))):
        kmodels = [k_ns[p]() for p in parts]
        tmodels = [t_ns[p]() for p in parts]
        for km, tm in zip(kmodels, tmodels):
            _copy_weights(km, tm)
        kwrap, twrap = k_ns[wrapper](*kmodels), t_ns[wrapper](*tmodels)
        kwrap.compile(**_compile_args(k_ns, _source(), var))
        twrap.compile(**_compile_args(t_ns, translated.text, var))
        twrap.train()
        for step in range(2):  # the second step: the optimizers' state (momentum) too
            klogs = kwrap.train_step(tuple(tf.constant(d[batch]) for d in data))
            tlogs = twrap.train_step(tuple(torch.as_tensor(d[batch]) for d in data))
            assert sorted(klogs) == sorted(tlogs)
            for key in klogs:
                k, t = float(klogs[key]), float(tlogs[key])
                assert abs(k - t) <= RTOL * max(abs(k), 1e-6), (wrapper, step, key, k, t)
            batch = slice(16, 32)
        for km, tm in zip(kmodels, tmodels):
            for kw, tw in zip(km.get_weights(), _torch_weights(tm)):
                np.testing.assert_allclose(tw, kw, rtol=RTOL, atol=1e-6)


SHARED_TRAINER = '''
import numpy as np
import tensorflow as tf
import keras


class Trainer(keras.Model):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.loss_tracker = keras.metrics.Mean(name="loss")

    @property
    def metrics(self):
        return [self.loss_tracker]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = keras.ops.mean(keras.ops.square(self.model(x, training=True) - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    def call(self, x):
        return self.model(x)


small = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(2)])
inputs = keras.Input(shape=(4,))
large = keras.Model(inputs, keras.layers.Dense(2)(keras.layers.Dense(8, activation="relu")(inputs)))
x = np.zeros((32, 4), "float32")
y = np.ones((32, 2), "float32")
trainer_small = Trainer(small)
trainer_large = Trainer(large)
trainer_small.compile(optimizer=keras.optimizers.SGD())
trainer_small.fit(x, y, epochs=1)
trainer_large.compile(optimizer="adam")
trainer_large.fit(x, y, epochs=1)
'''


def test_trainer_shared_by_two_models_is_one_class_holding_each():
    """keras.io's trainer_pattern: one Trainer class wrapping two different models gave two
    torch classes both named like it, each with a fresh copy of its model's layers."""
    result = translate(SHARED_TRAINER, "shared_trainer.py")
    assert not result.stubs, [d.message for d in result.stubs]
    text = result.text
    assert text.count("class Trainer(nn.Module):") == 1
    assert "trainer_small = Trainer(small)" in text and "trainer_large = Trainer(large)" in text
    namespace = {"__name__": "shared_trainer"}
    exec(compile(text, "shared_trainer_t.py", "exec"), namespace)  # noqa: S102 - runs both fits
    trainer = namespace["trainer_small"]
    assert trainer.model is namespace["small"]  # the model handed in, not a copy: its weights train
