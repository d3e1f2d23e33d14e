"""Models assembled from a built model's tensors (issue 18: keras.io captcha_ocr,
attention_mil_classification, end_to_end_mlm_with_bert, simsiam): ``model.get_layer(name)``,
``layer.output`` / ``layer.input`` and ``model.input`` give the tensors of the layer's first
call, and ``keras.Model(...)`` of them is the sub-graph, with nodes of its own."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

SOURCE = """
import numpy as np
import keras
from keras import layers


def build_model():
    image = keras.Input(shape=(12, 12, 1), name="image")
    x = layers.Conv2D(4, 3, activation="relu", name="conv1")(image)
    x = layers.Flatten()(x)
    x = layers.Dense(8, activation="relu", name="dense1")(x)
    x = layers.Dense(3, activation="softmax", name="dense2")(x)
    model = keras.Model(image, x)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


model = build_model()
x = np.random.rand(16, 12, 12, 1).astype("float32")
y = np.random.randint(0, 3, size=(16,))
model.fit(x, y, epochs=1)
features = keras.Model(model.get_layer(name="image").input, model.get_layer(name="dense1").output)
print("features", features.predict(x).shape)
inner = keras.Model(model.input, model.get_layer("conv1").output)
print("inner", inner.predict(x).shape)
"""


def test_models_of_get_layer_outputs_translate_and_run(tmp_path):
    result = translate(textwrap.dedent(SOURCE), "case.py")
    assert [d.message for d in result.stubs] == []
    assert len(result.program.models) == 3
    features = next(md for md in result.program.models if md.var == "features")
    assert [n.op for n in features.graph.nodes if n.op != "relu"][-1] == "dense"
    assert features.graph.outputs[0].shape == (None, 8)
    (tmp_path / "out.py").write_text(result.text)
    done = program_runner.run([sys.executable, "out.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "features (16, 8)" in done.stdout and "inner (16, 10, 10, 4)" in done.stdout, done.stdout


def test_a_model_of_another_models_layers_says_torch_holds_copies():
    result = translate(textwrap.dedent(SOURCE), "case.py")
    lines = textwrap.dedent(SOURCE).splitlines()
    warned = {d.span.line for d in result.program.diagnostics if "made of layers of another model" in d.message}
    assert warned == {i for i, t in enumerate(lines, 1) if t.startswith(("features =", "inner ="))}


def test_get_layer_of_an_unknown_name_is_a_stub_at_its_line():
    source = textwrap.dedent(SOURCE).replace('get_layer("conv1")', 'get_layer("nope")')
    result = translate(source, "case.py")
    line = next(i for i, t in enumerate(source.splitlines(), 1) if "nope" in t)
    assert any(d.span.line == line and "no layer of that name" in d.message for d in result.stubs), \
        [d.message for d in result.stubs]
