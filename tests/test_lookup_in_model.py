"""StringLookup / IntegerLookup called inside a model (keras.io's structured-data examples:
one named ``keras.Input`` per column, each categorical column encoded by a lookup layer with
its vocabulary): an ``index_lookup`` node, and in the torch module the runtime's class of the
same name (runtime/torch/text.py) built with the source's arguments. The generated module
gives Keras' predictions on strings and integers, out-of-vocabulary ones included."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow)

from transpiler import verify
from transpiler.translate import translate

PROGRAM = '''
import keras
from keras import layers

CP_VOCABULARY = [0, 1, 2, 3]
THAL_VOCABULARY = ["fixed", "normal", "reversible"]


def build_model():
    age = keras.Input(shape=(1,), name="age")
    cp = keras.Input(shape=(1,), name="cp", dtype="int64")
    thal = keras.Input(shape=(1,), name="thal", dtype="string")
    code = keras.Input(shape=(1,), name="code", dtype="string")
    cp_encoded = layers.IntegerLookup(vocabulary=CP_VOCABULARY, output_mode="one_hot")(cp)
    thal_encoded = layers.StringLookup(vocabulary=THAL_VOCABULARY, output_mode="one_hot")(thal)
    code_ids = layers.StringLookup(vocabulary=["a", "b", "c"], mask_token="")(code)
    code_embedded = layers.Flatten()(layers.Embedding(5, 2)(code_ids))
    x = layers.concatenate([age, cp_encoded, thal_encoded, code_embedded])
    x = layers.Dense(8, activation="relu")(x)
    outputs = layers.Dense(1, activation="sigmoid")(x)
    return keras.Model([age, cp, thal, code], outputs, name="lookups")
'''


def _inputs():
    rng = np.random.RandomState(0)
    age = rng.uniform(20, 80, (7, 1)).astype("float32")
    cp = np.array([[0], [1], [2], [3], [4], [-1], [9]], dtype="int64")  # 4, -1, 9: out of the vocabulary
    thal = np.array([["fixed"], ["normal"], ["reversible"], ["1"], ["normal"], [""], ["fixed"]], dtype=object)
    code = np.array([["a"], ["b"], ["c"], ["zz"], [""], ["a"], ["q"]], dtype=object)
    return age, cp, thal, code


def test_lookups_inside_a_model_are_translated_not_stubs():
    result = translate(PROGRAM, "lookups.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    text = result.text
    assert "self.integer_lookup = IntegerLookup(vocabulary=[0, 1, 2, 3], output_mode=\"one_hot\")" in " ".join(
        text.split()).replace("( ", "(").replace(" )", ")")
    assert "class StringLookup(IndexLookup)" in text and text.count("class StringLookup(") == 1
    graph = result.program.models[0].graph
    lookups = [n for n in graph.nodes if n.op == "index_lookup"]
    assert [n.outputs[0].shape for n in lookups] == [(None, 5), (None, 4), (None, 1)]  # 4 + OOV, 3 + OOV, ids


def test_lookups_inside_a_model_predict_like_keras():
    import keras

    result = translate(PROGRAM, "lookups.py")
    md = result.program.models[0]
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    kmodel = verify.load_generated(PROGRAM, "keras_lookups").build_model()
    tmodel = generated.build_model()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    age, cp, thal, code = _inputs()
    expected = np.asarray(kmodel([age, cp, thal, code]))
    tmodel.eval()
    with torch.no_grad():
        got = tmodel(torch.from_numpy(age), torch.from_numpy(cp), thal, code).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("config, depth", [
    ({"vocabulary": ["x", "y"], "output_mode": "one_hot"}, 3),
    ({"vocabulary": ["[UNK]", "x", "y"], "output_mode": "one_hot"}, 3),  # (the OOV token given first)
    ({"vocabulary": ["x", "y"], "num_oov_indices": 0, "output_mode": "multi_hot"}, 2),
    ({"vocabulary": ["x", "y"], "output_mode": "count", "pad_to_max_tokens": True, "max_tokens": 6}, 6),
])
def test_lookup_depth_is_keras_vocabulary_size(config, depth):
    """The encoding's width the frontend computes is Keras' vocabulary_size() (the Dense after
    it is sized by it)."""
    import keras

    from transpiler.frontend_ast.keras import data_lookups

    assert data_lookups.depth_of("StringLookup", config) == depth
    layer = keras.layers.StringLookup(**config)
    assert int(layer(np.array([["x", "y"]], dtype=object)).shape[-1]) == depth


def test_string_lookup_with_hashed_oov_slots_is_a_stub():
    source = PROGRAM.replace('mask_token="")(code)', 'mask_token="", num_oov_indices=2)(code)')
    result = translate(source, "lookups.py")
    assert not result.program.models
    assert any("FarmHash" in d.message for d in result.stubs), [str(d) for d in result.stubs]


def test_lookup_with_a_vocabulary_computed_at_run_time_is_a_stub():
    source = PROGRAM.replace('THAL_VOCABULARY = ["fixed", "normal", "reversible"]',
                             'import numpy as np\nTHAL_VOCABULARY = list(np.load("v.npy"))')
    result = translate(source, "lookups.py")
    assert not result.program.models
    assert any("computed when the program runs" in d.message for d in result.stubs), [str(d) for d in result.stubs]


KEYED_PREDICT = '''
import numpy as np
import keras
from keras import layers

a = keras.Input(shape=(3,), name="a")
b = keras.Input(shape=(1,), name="b")
model = keras.Model([a, b], layers.Dense(1)(layers.concatenate([a, b])))
arrays = {"a": np.ones((2, 3), "float32"), "b": np.zeros((2, 1), "float32")}
out = model.predict({name: arrays[name] for name in ("b", "a")})
'''


def test_predict_on_a_dict_comprehension_takes_the_inputs_by_name():
    """``model.predict({name: ... for name in ...})`` (keyed by keras.Input(name=...), in
    another order than the model's inputs): the generated predict gets them in forward()'s
    order, the dict evaluated once (it was indexed by position: ``{...}[0]``, a KeyError)."""
    result = translate(KEYED_PREDICT, "keyed.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    flat = " ".join(result.text.split())
    # (in forward()'s order; "b", of shape (1,), may be given one rank short: Keras adds the axis)
    assert "for inputs in [{name: arrays[name]" in flat and \
        "for i, (name, r) in enumerate((('a', 0), ('b', 2))) for v in [inputs[name]]" in flat.replace('"', "'")
    generated = verify.load_generated(result.text)
    assert generated.out.shape == (2, 1)


RUNTIME_VOCABULARY = '''
import math
import numpy as np
import pandas as pd
import keras
from keras import layers
from keras.layers import StringLookup

users = pd.DataFrame({"user_id": ["u1", "u2", "u3", "u4", "u5"], "sex": ["F", "M", "F", "M", "F"]})
VOCABULARY = {"user_id": list(users.user_id.unique()), "sex": list(users.sex.unique())}


def create_model():
    inputs = {"user_id": layers.Input(name="user_id", shape=(1,), dtype="string"),
              "sex": layers.Input(name="sex", shape=(1,), dtype="string")}
    encoded = []
    for feature_name in ["user_id", "sex"]:
        vocabulary = VOCABULARY[feature_name]
        idx = StringLookup(vocabulary=vocabulary, mask_token=None, num_oov_indices=0)(inputs[feature_name])
        embedding_dims = int(math.sqrt(len(vocabulary)))
        embedding = layers.Embedding(input_dim=len(vocabulary), output_dim=embedding_dims)
        encoded.append(layers.Flatten()(embedding(idx)))
    outputs = layers.Dense(1)(layers.concatenate(encoded))
    return keras.Model(inputs=inputs, outputs=outputs)


model = create_model()
model.compile(optimizer="adam", loss="mse")
x = {"user_id": np.array([["u2"], ["u5"], ["u1"]], dtype=object), "sex": np.array([["M"], ["F"], ["F"]], dtype=object)}
'''
#: (Keras' own predict() refuses arrays of str; the translation's takes them)
PREDICT = "out = model.predict(x)\n"


def test_lookup_with_a_vocabulary_computed_at_run_time_in_int_mode_takes_it_as_an_argument():
    """keras.io movielens: ``StringLookup(vocabulary=VOCABULARY[feature_name])`` in a builder's
    loop, the vocabulary computed from a DataFrame when the program runs, its ids embedded:
    the generated module takes each vocabulary (and the sizes read from it) as constructor
    arguments, the builder passes their code, and ``predict`` on the dict of named string
    inputs gives Keras' numbers (it was a stub: "its vocabulary is computed when the program
    runs")."""
    import keras

    result = translate(RUNTIME_VOCABULARY + PREDICT, "runtime_vocabulary.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    flat = " ".join(result.text.split())
    assert "StringLookup( vocabulary=VOCABULARY_user_id, mask_token=None, num_oov_indices=0 )" in flat
    assert 'VOCABULARY["user_id"], len(VOCABULARY["user_id"])' in flat
    md = result.program.models[0]
    generated = verify.load_generated(result.text)
    assert generated.out.shape == (3, 1)
    keras.backend.clear_session()
    original = verify.load_generated(RUNTIME_VOCABULARY, "keras_runtime_vocabulary")
    generated.model.load_state_dict(verify.map_keras_weights(md.graph, original.model), strict=True)
    generated.model.eval()
    with torch.no_grad():
        got = generated.model(original.x["user_id"], original.x["sex"]).numpy()
    np.testing.assert_allclose(got, np.asarray(original.model(original.x)), rtol=1e-5, atol=1e-6)


def test_lookup_one_hot_with_a_vocabulary_computed_at_run_time_stays_a_stub():
    source = RUNTIME_VOCABULARY.replace("num_oov_indices=0)", "num_oov_indices=0, output_mode='one_hot')")
    result = translate(source, "runtime_vocabulary.py")
    assert not result.program.models
    assert any("computed when the program runs" in d.message for d in result.stubs), [str(d) for d in result.stubs]
