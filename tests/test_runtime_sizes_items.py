"""Run-time sizes read through a loop's item or a name a module-level loop binds (issue 18
item 1, keras.io tabtransformer / deep_neural_decision_forests / movielens).

``for name in FEATURES: Embedding(len(VOCAB[name]), ...)`` inside a builder gives one size
per item: the loop variable holds a static item (``"city"``) where the size is read, so the
size's code is ``len(VOCAB["city"])``, computed where the builder constructs the module; a
name only a module-level loop binds (``lookup = StringLookup(...)`` in a ``for`` above the
builder's call) is code the output can run there too. Tests compare the generated module
with Keras on the same weights.
"""

from __future__ import annotations

import re

from transpiler.translate import translate

STANDIN = re.compile(r"\b\d{7,}\b")  # (a run-time size's stand-in number is over a million)

LOOP_ITEMS = '''
import math
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
cities = [f"c{i}" for i in rng.integers(0, 9, size=40)]
colours = [f"k{i}" for i in rng.integers(0, 5, size=40)]
VOCAB = {"city": sorted(set(cities)), "colour": sorted(set(colours))}
FEATURES = list(VOCAB.keys())


def build_model():
    inputs = {}
    for name in FEATURES:
        inputs[name] = keras.Input(name=name, shape=(1,), dtype="int32")
    encoded = []
    for name in FEATURES:
        vocabulary = VOCAB[name]
        dims = int(math.sqrt(len(vocabulary)))
        embedding = layers.Embedding(input_dim=len(vocabulary), output_dim=dims)
        encoded.append(layers.Flatten()(embedding(inputs[name])))
    x = layers.concatenate(encoded)
    outputs = layers.Dense(1)(x)
    return keras.Model(inputs=inputs, outputs=outputs)


model = build_model()
'''

MODULE_LOOP_BINDING = '''
import math
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
VOCAB = {"city": sorted({f"c{i}" for i in rng.integers(0, 9, size=40)})}
sizes = {}
for feature in VOCAB:
    vocabulary = VOCAB[feature]
    count = len(vocabulary) + 1
    sizes[feature] = count


def build_model():
    inputs = keras.Input(shape=(3,), dtype="int32")
    x = layers.Embedding(input_dim=count, output_dim=int(math.sqrt(count)))(inputs)
    x = layers.Flatten()(x)
    return keras.Model(inputs, layers.Dense(2)(x))


model = build_model()
'''

BOUND_AFTER_THE_CALL = MODULE_LOOP_BINDING.replace("\nmodel = build_model()\n", "\nmodel = build_model()\n"
                                                   "for later in VOCAB:\n    late = len(VOCAB[later]) + 2\n") \
    .replace("input_dim=count", "input_dim=late")


def _numerics(source: str) -> float:
    import torch  # noqa: F401  (torch before TensorFlow)
    import keras

    from harness import load_source_module, randomize_keras_weights
    from transpiler import verify

    result = translate(source, "case.py")
    md = result.program.models[0]
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    kmodel = load_source_module(source).model
    verify.ensure_built(kmodel, md.graph)
    randomize_keras_weights(kmodel, 0)
    tmodel = generated.model
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    inputs = verify.random_inputs(md.graph, 4, 0)
    return max(c.max_abs for c in verify.run_both(kmodel, tmodel, md.graph, inputs))


def test_sizes_read_through_a_loop_item_are_one_size_per_item():
    result = translate(LOOP_ITEMS, "case.py")
    assert [d.message for d in result.stubs] == []
    text = result.text
    assert 'len(VOCAB["city"])' in text and 'len(VOCAB["colour"])' in text
    assert 'int(math.sqrt(len(VOCAB["colour"])))' in text
    assert "nn.Embedding(len_VOCAB_city, int_math_sqrt_len_VOCAB_city)" in text
    assert not STANDIN.search(text)


def test_sizes_read_through_a_loop_item_match_keras():
    assert _numerics(LOOP_ITEMS) <= 1e-4


def test_generated_module_follows_other_vocabularies():
    from transpiler import verify

    module = verify.load_generated(translate(LOOP_ITEMS, "case.py").text)
    assert module.model.embedding.num_embeddings == len(module.VOCAB["city"])
    assert module.model.embedding_1.num_embeddings == len(module.VOCAB["colour"])


def test_a_name_a_module_level_loop_binds_is_read_where_the_builder_runs():
    result = translate(MODULE_LOOP_BINDING, "case.py")
    assert [d.message for d in result.stubs] == []
    assert "return Net(count, int(math.sqrt(count)))" in result.text
    assert not STANDIN.search(result.text)
    assert _numerics(MODULE_LOOP_BINDING) <= 1e-4


def test_a_name_bound_only_after_the_builder_call_stays_a_stub():
    result = translate(BOUND_AFTER_THE_CALL, "case.py")
    assert any("Embedding" in d.message for d in result.stubs)
    assert not STANDIN.search(result.text)


def test_a_lambda_layer_still_reads_its_lambda():
    """Unknown's scope of a read (``read_env``) must not collide with a subclass's field:
    LambdaVal's ``env`` took it and a ``layers.Lambda(lambda ...)`` crashed the reader
    (keras.io eanet: 'This is a bug in transpiler')."""
    source = (
        "import keras\nfrom keras import layers\n\n\n"
        "def build_model():\n"
        "    inputs = keras.Input(shape=(4,))\n"
        "    x = layers.Lambda(lambda t: t * 2.0)(inputs)\n"
        "    return keras.Model(inputs, layers.Dense(2)(x))\n"
    )
    result = translate(source, "case.py")
    assert [d.message for d in result.stubs] == []
    assert "* 2.0" in result.text
