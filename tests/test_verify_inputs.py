"""verify.random_inputs draws what a lookup's input may hold (a vocabulary's tokens, ids below
an embedding's size) from facts of the ops table (``vocabulary_attr``, ``ids_below``), not
from op names (issue 17: facts the code needs are the table's)."""

from __future__ import annotations

import ast
import pathlib

import numpy as np

from transpiler import verify
from transpiler.ir import ops
from transpiler.translate import translate

PROGRAM = '''
import keras
from keras import layers


def build_model():
    cp = keras.Input(shape=(1,), name="cp", dtype="int64")
    thal = keras.Input(shape=(1,), name="thal", dtype="string")
    words = keras.Input(shape=(6,), name="words", dtype="int32")
    cp_encoded = layers.IntegerLookup(vocabulary=[0, 1, 2, 3], output_mode="one_hot")(cp)
    thal_encoded = layers.StringLookup(vocabulary=["fixed", "normal"], output_mode="one_hot")(thal)
    embedded = layers.Flatten()(layers.Embedding(7, 2)(words))
    x = layers.concatenate([cp_encoded, thal_encoded, embedded])
    outputs = layers.Dense(1, activation="sigmoid")(x)
    return keras.Model([cp, thal, words], outputs, name="lookups")
'''


def test_lookups_declare_what_their_first_input_holds():
    assert {name for name, spec in ops.all_ops().items() if spec.vocabulary_attr} == {"index_lookup"}
    assert ops.get("index_lookup").vocabulary_attr == "config"
    assert ops.get("embedding").ids_below == "input_dim"


def test_random_inputs_draw_a_vocabulary_s_tokens_and_ids_below_the_size():
    result = translate(PROGRAM, "lookups.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    cp, thal, words = verify.random_inputs(result.program.models[0].graph, 200)
    assert set(cp.ravel()) == {0, 1, 2, 3, 4}  # the vocabulary and one integer out of it
    assert set(thal.ravel()) == {"fixed", "normal", "<unknown>"} and thal.dtype == object
    assert words.dtype == np.int32 and words.min() >= 0 and words.max() < 7 and len(set(words.ravel())) == 7


def test_verify_draws_inputs_without_naming_ops():
    tree = ast.parse(pathlib.Path(verify.__file__).read_text())
    drawing = {"random_inputs", "_lookup_tokens", "_vocab_for"}
    named = [(fn.name, node.lineno) for fn in tree.body if isinstance(fn, ast.FunctionDef) and fn.name in drawing
             for node in ast.walk(fn) if isinstance(node, ast.Compare) and
             any(isinstance(side, ast.Attribute) and side.attr == "op" for side in [node.left, *node.comparators]) and
             any(isinstance(side, ast.Constant) and isinstance(side.value, str) for side in [node.left, *node.comparators])]
    assert not named, named
