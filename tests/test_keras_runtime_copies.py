"""A PyTorch program the transpiler wrote, read back to Keras: the definitions of the project's
torch runtime it holds (``one_channel_layout``, copied from transpiler/runtime/torch/) go when
the translation left them no caller, and stay otherwise (printers/keras/runtime_copies.py).
The round trip of corpus/keras/unet_small converging as a whole guards it too
(tests/test_roundtrip_fixpoint.py, WHOLE_SCRIPT_CONVERGES)."""

from __future__ import annotations

import re
import textwrap

import libcst as cst

from transpiler.printers import runtime_source
from transpiler.printers.formatter import format_python
from transpiler.printers.keras import runtime_copies
from transpiler.translate import translate

#: a Keras program whose one-channel input makes the PyTorch program call one_channel_layout
KERAS_ONE_CHANNEL = '''
    import numpy as np
    import keras
    from keras import layers


    def build_model():
        inputs = keras.Input(shape=(8, 8, 1))
        x = layers.Conv2D(4, 3, activation="relu")(inputs)
        x = layers.GlobalAveragePooling2D()(x)
        return keras.Model(inputs, layers.Dense(2, activation="softmax")(x))


    x = np.random.rand(32, 8, 8).astype("float32")
    y = np.random.randint(0, 2, size=(32,))
    model = build_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    print(model.predict(x[:2], verbose=0).shape)
    '''


def _defined(text: str) -> set[str]:
    return {n.name.value for n in cst.parse_module(text).body if isinstance(n, (cst.FunctionDef, cst.ClassDef))}


def test_a_runtime_definition_is_known_as_copied_and_black_formatted():
    text = runtime_source.source("torch.layouts", "one_channel_layout")
    for copy in (text, format_python(text)):
        assert runtime_copies.is_runtime_copy(cst.parse_statement(copy))
    changed = text.replace("len(perm) - 1", "len(perm) - 2")
    assert not runtime_copies.is_runtime_copy(cst.parse_statement(changed))
    renamed = text.replace("def one_channel_layout(", "def my_layout(")
    assert not runtime_copies.is_runtime_copy(cst.parse_statement(renamed))


def test_the_runtime_helper_whose_calls_are_undone_goes():
    t1 = translate(textwrap.dedent(KERAS_ONE_CHANNEL), "one.py", "pytorch")
    assert "one_channel_layout" in _defined(t1.text) and re.search(r"\bone_channel_layout\(x", t1.text)
    k1 = translate(t1.text, "one_torch.py", "keras")
    assert len(k1.program.models) == 1 and not k1.stubs
    assert "one_channel_layout" not in k1.text, k1.text
    assert re.search(r"model\.fit\(\s*x,\s*y,", k1.text), k1.text
    compile(k1.text, "<output>", "exec")


def test_a_runtime_helper_still_called_or_never_called_stays():
    helper = runtime_source.source("torch.layouts", "one_channel_layout")
    called = ("import numpy as np\n\n\n" + helper +
              "\n\nprint(one_channel_layout(np.zeros((2, 4, 4)), (0, 3, 1, 2)).shape)\n")
    uncalled = "import numpy as np\n\n\n" + helper + "\n\nprint(np.zeros(3).shape)\n"
    for source in (called, uncalled):
        result = translate("import torch\n" + source, "lib.py", "keras")
        assert "one_channel_layout" in _defined(result.text), result.text
