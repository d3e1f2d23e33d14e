"""A wrapper model's own method calling a Keras Model method on what it holds (keras.io
ddpm: ``self.ema_network.predict([samples, tt], verbose=0)`` in ``generate_images``): the
held model is a torch module in the output, which has no ``predict``; the method was printed
as is and would fail when run with no stub (it was hidden behind a ``tf.fill`` stub until
``tf.fill`` translated). Now such a method is a marked stub naming the call; ``summary()``
becomes ``print(module)``; a method of the script's own object held by the wrapper (a helper
class with its own ``predict``) is left alone; ``tf.fill`` becomes ``torch.full``."""

import os

import pytest
import torch

from transpiler.translate import translate

ROOT = os.path.dirname(os.path.dirname(__file__))
PROGRAM = os.path.join(ROOT, "tests", "programs", "wrapped_models_gan_distiller.py")

EXTRA = '''
    def sample(self, n):
        steps = tf.fill(n, 3)
        return self.generator.predict(tf.random.normal((n, 4)), verbose=0), steps

    def describe(self):
        self.generator.summary()
        return self.scheduler.predict(2)
'''

HELPER = '''
class Scheduler:
    def predict(self, k):
        return k + 1


'''


def _source() -> str:
    with open(PROGRAM, encoding="utf-8") as fh:
        text = fh.read()
    text = text.replace("    @property\n    def metrics(self):", EXTRA.lstrip("\n") + "\n    @property\n    def metrics(self):", 1)
    text = text.replace("        self.discriminator = discriminator\n",
                        "        self.discriminator = discriminator\n        self.scheduler = Scheduler()\n", 1)
    return text.replace("class PairedGAN(keras.Model):", HELPER.lstrip("\n") + "class PairedGAN(keras.Model):", 1)


@pytest.fixture(scope="module")
def translated():
    source = _source()
    assert "self.scheduler = Scheduler()" in source and "def sample(self, n):" in source
    return translate(source, PROGRAM)


def test_keras_model_method_on_a_held_model_is_a_marked_stub(translated):
    messages = [d.message for d in translated.stubs]
    assert any("PairedGAN.sample()" in m and "self.generator.predict()" in m for m in messages), messages
    assert len(messages) == 1, messages  # (describe() translates; training still does)
    assert "fit_train_step(gan" in translated.text


def test_summary_of_a_held_model_prints_it_and_own_objects_keep_their_methods(translated):
    text = translated.text
    describe = text[text.index("    def describe(self):"):]
    describe = describe[:describe.index("\n\n")]
    assert "print(self.generator)" in describe and ".summary()" not in describe
    assert "return self.scheduler.predict(2)" in describe


@pytest.mark.parametrize("dims, want", [("3", (3,)), ("(2, 3)", (2, 3)), ("n", (4,)), ("shape", (2, 2))])
def test_tf_fill_is_torch_full(dims, want):
    import libcst as cst

    from transpiler.printers.torch import loss_functions

    source = f"import tensorflow as tf\n\ndef f(n, shape):\n    return tf.fill({dims}, 7)\n"
    module = cst.parse_module(source)
    new, _ = loss_functions.translate_function(module.body[1], loss_functions.module_aliases(module), None)
    namespace = {"torch": torch}
    exec(cst.Module([new]).code, namespace)
    got = namespace["f"](4, [2, 2])
    assert tuple(got.shape) == want and bool((got == 7).all())
