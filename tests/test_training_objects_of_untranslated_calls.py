"""An optimizer, callback or callback list the script hands to a compile()/fit() call that
is not translated (its own stub says why; keras.io's perceiver_image_classification,
tabtransformer, fixres, transformer_asr): the object's statement is a comment naming that call,
not a second stub per object ("an optimizer neither given to a translated compile() ...",
"a callback not passed to a translated fit()"); objects given to no call at all stay stubs."""

from __future__ import annotations

from transpiler.translate import translate

PROGRAM = '''
import numpy as np
import keras
from keras import layers


def build_model():
    inputs = keras.Input(shape=(4,))
    return keras.Model(inputs, layers.Dense(2)(inputs))


x = np.zeros((8, 4), "float32")
y = np.zeros((8, 2), "float32")
model = build_model()
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
early_stopping = keras.callbacks.EarlyStopping(patience=2)
callbacks = [early_stopping, keras.callbacks.ReduceLROnPlateau(patience=1)]
model.compile(optimizer=optimizer, loss=keras.losses.CTC())
model.fit(x, y, epochs=1, callbacks=callbacks)
'''


def _stub_lines(result) -> set[int]:
    return {d.span.line for d in result.stubs}


def test_objects_given_to_an_untranslated_compile_or_fit_are_comments_not_stubs():
    result = translate(PROGRAM, "objects.py")
    lines = PROGRAM.splitlines()
    compile_line = next(i for i, t in enumerate(lines, 1) if t.startswith("model.compile("))
    fit_line = next(i for i, t in enumerate(lines, 1) if t.startswith("model.fit("))
    assert compile_line in _stub_lines(result)  # (the reason: CTC has no translation)
    assert _stub_lines(result) <= {compile_line, fit_line}, [str(d) for d in result.stubs]
    assert "given to compile() below, not translated (see its stub)" in result.text
    compile(result.text, "objects_torch.py", "exec")


def test_an_optimizer_given_to_nothing_is_still_a_stub():
    src = PROGRAM.replace("model.compile(optimizer=optimizer,", "model.compile(optimizer='adam',")
    result = translate(src, "objects.py")
    assert any("optimizer" in str(d) and "neither given" in str(d) for d in result.stubs), \
        [str(d) for d in result.stubs]
