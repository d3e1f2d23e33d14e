"""Keras programs with text and lookup layers on their data (Keras -> PyTorch): the layers
become the runtime's classes (runtime/torch/text.py) with the program's arguments, the
vocabulary sizes become the module's constructor arguments, a tf.data ``.map`` vectorizing
strings becomes a DataLoader over the strings, and the generated program computes Keras'
vocabularies, ids and batches (compared with the Keras program on the same data)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import torch  # noqa: F401  (torch before TensorFlow in one process)

from transpiler import verify
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_SCRIPT = os.path.join(ROOT, "corpus", "keras", "text_lookup_classifier.py")


def _stubs(result):
    return [d.message for d in result.program.diagnostics if d.severity == "stub"]


@pytest.fixture(scope="module")
def corpus_pair():
    """The corpus script as Keras runs it and its translation as a module."""
    keras = pytest.importorskip("keras")
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import load_source_module

    source = open(CORPUS_SCRIPT, encoding="utf-8").read()
    result = translate(source, CORPUS_SCRIPT)
    keras.backend.clear_session()
    return load_source_module(source, "text_lookup_keras"), verify.load_generated(result.text), result


def test_text_layers_translate_as_runtime_objects_with_runtime_sizes(corpus_pair):
    _, _, result = corpus_pair
    assert not _stubs(result)
    text = result.text
    assert "vectorize_layer = TextVectorization(" in text and "label_lookup = StringLookup(num_oov_indices=0)" in text
    assert "index_to_label = StringLookup(" in text and "class TextVectorization" in text
    # the vocabularies' sizes are the module's arguments, computed where the builder builds it
    assert "return TextLookupClassifier(vectorize_layer.vocabulary_size(), label_lookup.vocabulary_size())" in \
        " ".join(text.split()).replace("( ", "(").replace(" )", ")")
    assert not [line for line in text.splitlines() if line.startswith(("import keras", "import tensorflow",
                                                                       "from keras", "from tensorflow"))]


def test_generated_vocabularies_ids_and_batches_equal_keras(corpus_pair):
    original, generated, _ = corpus_pair
    assert generated.vectorize_layer.get_vocabulary() == [str(v) for v in original.vectorize_layer.get_vocabulary()]
    assert generated.label_lookup.get_vocabulary() == [str(v) for v in original.label_lookup.get_vocabulary()]
    assert generated.vectorize_layer.vocabulary_size() == original.vectorize_layer.vocabulary_size() == 24
    import tensorflow as tf

    keras_batches = list(tf.data.Dataset.from_tensor_slices((original.texts[80:], original.labels[80:]))
                         .batch(16).map(original.vectorize_text))
    loader = generated.make_loader(generated.texts[80:], generated.labels[80:], batch_size=16,
                                   batch_map=generated.vectorize_text)
    ours = list(loader)
    assert len(ours) == len(keras_batches) == 1
    for (x, y), (kx, ky) in zip(ours, keras_batches):
        assert x.dtype == torch.int64 and y.dtype == torch.int64
        np.testing.assert_array_equal(x.numpy(), kx.numpy())
        np.testing.assert_array_equal(y.numpy(), ky.numpy())


def test_generated_model_on_vectorized_text_equals_keras(corpus_pair):
    """The module built with the run-time vocabulary sizes, given the Keras model's weights,
    predicts what Keras predicts on the vectorized texts; the inverted lookup gives the labels."""
    import keras

    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import randomize_keras_weights

    original, generated, result = corpus_pair
    keras.backend.clear_session()
    kmodel = original.build_model()
    randomize_keras_weights(kmodel, 0)
    tmodel = generated.build_model().eval()
    md = next(m for m in result.program.models if m.builder == "build_model")
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    ids = generated.vectorize_layer(generated.texts[80:])
    with torch.no_grad():
        ours = tmodel(ids).numpy()
    theirs = np.asarray(kmodel(original.vectorize_layer(original.texts[80:]), training=False))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    invert = generated.StringLookup(vocabulary=generated.label_lookup.get_vocabulary(), invert=True,
                                    num_oov_indices=0)
    kinvert = keras.layers.StringLookup(vocabulary=original.label_lookup.get_vocabulary(), invert=True,
                                        num_oov_indices=0)
    assert list(invert(ours.argmax(1))) == [b.decode() for b in np.asarray(kinvert(theirs.argmax(1)))]


def test_generated_program_runs_without_keras(tmp_path):
    result = translate(open(CORPUS_SCRIPT, encoding="utf-8").read(), CORPUS_SCRIPT)
    out = tmp_path / "text_lookup_classifier_torch.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__');"
                          "assert not [m for m in sys.modules if m.split('.')[0] in ('keras', 'tensorflow')]",
                          str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "vocabulary: ['', '[UNK]', 'film', 'plot', 'a', 'and', 'really', 'was'] classes: ['pos', 'neg']" \
        in run.stdout
    assert "Epoch 3/3" in run.stdout and "predicted: [" in run.stdout


MODULE_LEVEL_PROGRAM = """
import numpy as np
import keras
from keras import layers

texts = np.array(["the cat sat", "the dog ran far", "a cat and a dog", "dogs and cats"])
labels = np.array([0, 1, 1, 0])
vectorizer = layers.TextVectorization(max_tokens=20, output_sequence_length=6)
vectorizer.adapt(texts)
x = vectorizer(texts).numpy()


def build_model(vocab_size):
    inputs = keras.Input(shape=(6,), dtype="int64")
    h = layers.Embedding(vocab_size, 8)(inputs)
    h = layers.GlobalAveragePooling1D()(h)
    return keras.Model(inputs, layers.Dense(2, activation="softmax")(h))


model = build_model(vectorizer.vocabulary_size())
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(x, labels, epochs=1, verbose=0)
"""


def test_vocabulary_size_passed_to_a_builder_is_its_argument(tmp_path):
    """``build_model(vectorizer.vocabulary_size())`` at module level: the builder's parameter
    sizes the Embedding (no stub) and the call stays in the program, which runs."""
    result = translate(MODULE_LEVEL_PROGRAM, "module_level_text.py")
    assert not _stubs(result)
    assert "model = build_model(vectorizer.vocabulary_size())" in result.text
    assert "return Net(vocab_size)" in result.text
    generated = verify.load_generated(result.text)
    assert generated.model.embedding1.num_embeddings == generated.vectorizer.vocabulary_size() == 12  # (10 words, mask, OOV)


@pytest.mark.parametrize("layer, message", [
    ("layers.TextVectorization()", "tokenize in the data pipeline"),
    # (a lookup with its vocabulary in the source translates: tests/test_lookup_in_model.py)
    ("layers.IntegerLookup()", "without a vocabulary in the source"),
    ("layers.StringLookup(vocabulary=['a', 'b'], invert=True)", "invert outside the model"),
])
def test_text_layer_called_on_a_model_tensor_is_a_stub(layer, message):
    source = ("import keras\nfrom keras import layers\n\n\ndef build_model():\n"
              "    inputs = keras.Input(shape=(1,), dtype='string')\n"
              f"    x = {layer}(inputs)\n    return keras.Model(inputs, layers.Dense(2)(x))\n\n\nmodel = build_model()\n")
    result = translate(source, "in_model.py")
    assert not result.program.models
    assert any("called inside a model" in m or "inside a model" in m for m in _stubs(result)), _stubs(result)
    assert any(message in m for m in _stubs(result)), _stubs(result)


ADAPT_ON_BATCHES = """
import numpy as np
import keras
import tensorflow as tf
from keras import layers

texts = np.array(["The cat sat.", "the dog ran far!", "a cat and a dog", "dogs and cats", "the end"])
vectorizer = layers.TextVectorization(max_tokens=9, output_sequence_length=4)
text_ds = tf.data.Dataset.from_tensor_slices(texts).batch(2)
vectorizer.adapt(text_ds)
x = vectorizer(np.array([[s] for s in texts])).numpy()
"""


def test_adapt_on_a_batched_dataset_of_strings_equals_keras():
    """keras.io's ``vectorizer.adapt(tf.data.Dataset.from_tensor_slices(samples).batch(128))``:
    the loader of strings gives their batches; the vocabulary and ids are Keras'."""
    keras = pytest.importorskip("keras")
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import load_source_module

    result = translate(ADAPT_ON_BATCHES, "adapt_batches.py")
    assert not _stubs(result)
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    original = load_source_module(ADAPT_ON_BATCHES, "adapt_batches_keras")
    assert generated.vectorizer.get_vocabulary() == [str(v) for v in original.vectorizer.get_vocabulary()]
    np.testing.assert_array_equal(generated.x, original.x)


TEXT_FOLDER_PROGRAM = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs",
                                        "text_folder_program.py"), encoding="utf-8").read()


def _write_reviews(root):
    for label, words in (("pos", "a good great film"), ("neg", "a bad awful film,")):
        os.makedirs(root / "reviews" / label, exist_ok=True)
        for i in range(8):
            (root / "reviews" / label / f"{label}{i}.txt").write_text(f"{words} number {i}\n", encoding="utf-8")


def test_text_folder_program_translates_and_runs_like_keras(tmp_path):
    """keras.io's text classification from scratch: text_dataset_from_directory, a
    TextVectorization adapted to ``raw_train_ds.map(lambda x, y: x)``, a ``.map`` with
    ``tf.expand_dims`` vectorizing each batch, fit on the mapped loaders. No stub; the
    generated program finds the same files and classes, builds Keras' vocabulary and trains."""
    result = translate(TEXT_FOLDER_PROGRAM, "text_folder_program.py")
    assert not _stubs(result)
    assert "text = text[..., None]" in result.text
    _write_reviews(tmp_path)
    out = tmp_path / "text_folder_torch.py"
    out.write_text(result.text)
    env = {**os.environ, "PYTHONPATH": "", "TRANSPILED_DATA_HOME": str(tmp_path)}
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    keras_run = program_runner.run([sys.executable, "-c", TEXT_FOLDER_PROGRAM], capture_output=True, text=True,
                               timeout=300, cwd=tmp_path, env={**env, "PYTHONPATH": ROOT})
    assert keras_run.returncode == 0, keras_run.stderr[-2000:]
    for line in ("Found 16 files belonging to 2 classes.", "Using 12 files for training.",
                 "Using 4 files for validation.", "classes: ['neg', 'pos']"):
        assert line in run.stdout and line in keras_run.stdout
    vocabulary = [line for line in run.stdout.splitlines() if line.startswith("vocabulary:")]
    keras_vocabulary = [line.replace("np.str_(", "").replace("')", "'") for line in keras_run.stdout.splitlines()
                        if line.startswith("vocabulary:")]
    assert vocabulary == keras_vocabulary == ["vocabulary: ['', '[UNK]', 'number', 'film', 'a', 'bad']"]
