"""A pool size and tile repeats computed when the program runs (issue 18 item 1, keras.io
pointnet_segmentation): ``MaxPool1D(pool_size=num_points)`` then ``ops.tile(x, [1, num_points, 1])``
with ``num_points = x.shape[1]`` of the data. The generated module takes ``num_points`` as a
constructor argument; ``tile`` is the new IR op (``Tensor.repeat``). Numeric tests compare with
Keras on the same weights.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from transpiler.translate import translate

STANDIN = re.compile(r"\b\d{7,}\b")

POINTNET = '''
import numpy as np
import keras
from keras import layers

points = np.unique(np.arange(24))
num_points = len(points)


def build_model(num_points, num_classes=4):
    inputs = keras.Input(shape=(None, 3))
    features = layers.Conv1D(8, kernel_size=1, activation="relu")(inputs)
    global_features = layers.MaxPool1D(pool_size=num_points)(features)
    global_features = keras.ops.tile(global_features, [1, num_points, 1])
    x = layers.Concatenate()([features, global_features])
    return keras.Model(inputs, layers.Conv1D(num_classes, kernel_size=1)(x))


model = build_model(num_points)
'''

TILES = '''
import keras
import tensorflow as tf
from keras import layers


{classes}def build_model():
    inputs = keras.Input(shape=(4, 3))
    x = layers.Dense(5)(inputs)
    return keras.Model(inputs, {tile})
'''


TILED_LAYER = '''class Tiled(layers.Layer):
    def call(self, x):
        return tf.tile(x, multiples=[1, 3, 1])


'''


def _compare(source: str, shape, builder_args=()) -> float:
    import keras

    from harness import load_source_module, randomize_keras_weights
    from transpiler import verify

    result = translate(source, "case.py")
    assert [d.message for d in result.stubs] == []
    md = result.program.models[0]
    module = load_source_module(source)
    keras.backend.clear_session()  # (the layer names the frontend predicts for a fresh build)
    kmodel = module.build_model(*builder_args)
    randomize_keras_weights(kmodel, 0)
    tmodel = verify.load_generated(result.text).build_model(*builder_args)
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    x = np.random.RandomState(0).standard_normal(shape).astype("float32")
    return max(c.max_abs for c in verify.run_both(kmodel, tmodel, md.graph, [x]))


def test_pool_size_and_repeats_from_the_data_are_constructor_arguments():
    result = translate(POINTNET, "case.py")
    assert [d.message for d in result.stubs] == []
    assert "nn.MaxPool1d(num_points)" in result.text
    assert ".repeat(1, self.num_points, 1)" in result.text
    assert "model = build_model(num_points)" in result.text
    assert not STANDIN.search(result.text)


@pytest.mark.parametrize("n", [24, 10])
def test_pool_size_and_repeats_from_the_data_match_keras(n):
    assert _compare(POINTNET, (2, n, 3), (n,)) <= 1e-5


@pytest.mark.parametrize("tile", ["keras.ops.tile(x, [1, 2, 3])", "Tiled()(x)",
                                  "keras.ops.tile(x, (1, 1, 1))"])
def test_tile_matches_keras(tile):
    classes = TILED_LAYER if "Tiled" in tile else ""
    assert _compare(TILES.replace("{tile}", tile).replace("{classes}", classes), (2, 4, 3)) <= 1e-6


def test_tiling_the_batch_axis_is_a_stub_naming_why():
    result = translate(TILES.replace("{tile}", "keras.ops.tile(x, [2, 1, 1])").replace("{classes}", ""), "case.py")
    assert any("repeats the batch axis" in d.message for d in result.stubs)


def test_tile_shape_rule_and_emitters():
    from transpiler.ir.graph import Graph
    from transpiler.ir.shapes import infer_node
    from transpiler.printers.keras.ops import emit as keras_emit
    from transpiler.printers.torch.ops import emit as torch_emit

    g = Graph("g")
    x = g.new_value("x", shape=(None, 1, 5), dtype="float32")
    node = g.add_node("tile", "tile", [x], 1, attrs={"repeats": (7, 2)})
    infer_node(node)
    assert node.outputs[0].shape == (None, 7, 10)
    assert torch_emit(node).call(["x"]) == "x.repeat(1, 7, 2)"
    assert keras_emit(node).call(["x"]) == "keras.ops.tile(x, [1, 7, 2])"
