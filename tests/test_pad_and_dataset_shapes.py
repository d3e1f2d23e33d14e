"""Three roots of keras.io programs left unbuilt or stubbed (issue 18):

* ``ops.pad`` / ``tf.pad`` in a custom layer's call() (CycleGAN's ReflectionPadding2D: widths
  made with ``ops.convert_to_tensor``, ``mode="reflect"``) was an opaque layer whose output
  shape was assumed to be its input's, so every residual ``add`` after it failed; it is a
  ``pad2d`` now, and computes what Keras computes;
* a subclassed model first fitted on ``keras.datasets`` arrays loaded with arguments
  (``boston_housing.load_data(path=..., test_split=0.2, seed=113)``) or on their
  ``np.concatenate`` was never built (the arrays' shapes were unknown);
* ``keras.backend.clear_session()`` was a stub line: in torch it has nothing to do.
"""

from __future__ import annotations

import pytest

from harness import check_source, max_error
from transpiler.frontend_ast.keras.support import dataset_shapes
from transpiler.translate import translate

PAD = '''
import keras
from keras import layers, ops


class ReflectionPadding2D(layers.Layer):
    def __init__(self, padding=(1, 1), **kwargs):
        self.padding = tuple(padding)
        super().__init__(**kwargs)

    def call(self, input_tensor, mask=None):
        padding_width, padding_height = self.padding
        padding_tensor = [[0, 0], [padding_height, padding_height], [padding_width, padding_width], [0, 0]]
        return ops.pad(input_tensor, padding_tensor, mode="reflect")


def build_model():
    inputs = keras.Input((9, 7, 3))
    x = ReflectionPadding2D(padding=(2, 1))(inputs)
    x = layers.Conv2D(3, 3, padding="valid")(x)
    x = layers.add([inputs, x[:, :, 1:-1, :]])
    x = ops.pad(x, [[0, 0], [1, 2], [0, 3], [0, 0]], constant_values=0.5)
    return keras.Model(inputs, layers.Flatten()(x))
'''


def test_widths_made_a_tensor_are_read_as_well():
    """CycleGAN's spelling (which Keras' TensorFlow backend cannot trace symbolically)."""
    source = PAD.replace("ops.pad(input_tensor, padding_tensor,", "ops.pad(input_tensor, ops.convert_to_tensor(padding_tensor),")
    assert source != PAD
    result = translate(source, "pad.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert 'mode="reflect"' in result.text


def test_reflect_and_constant_pad_compute_what_keras_computes():
    checked = check_source(PAD, batch=2)
    assert not checked.translation.stubs, [str(d) for d in checked.translation.stubs]
    assert 'mode="reflect"' in checked.translation.text
    assert max_error(checked) <= 1e-5


@pytest.mark.parametrize("widths, why", [
    ("[[1, 1], [1, 1], [1, 1], [0, 0]]", "batch or channel"),
    ("[[0, 0], [9, 9], [1, 1], [0, 0]]", "below the axis size"),
])
def test_pads_torch_cannot_mirror_stay_marked_stubs(widths, why):
    source = PAD.replace("ops.pad(input_tensor, padding_tensor,", f"ops.pad(input_tensor, {widths},")
    source = source[:source.index("def build_model")] + (
        "def build_model():\n    inputs = keras.Input((9, 7, 3))\n"
        "    return keras.Model(inputs, layers.Flatten()(ReflectionPadding2D()(inputs)))\n")
    result = translate(source, "pad.py")
    assert any(why in d.message for d in result.stubs), [str(d) for d in result.stubs]


def test_dataset_shapes_follow_the_loaders_arguments():
    assert dataset_shapes("boston_housing", [], {"path": "b.npz", "test_split": 0.2, "seed": 113}) == (
        ((404, 13), (404,)), ((102, 13), (102,)), "float64", "float64")
    (train, _), (test, _), _, _ = dataset_shapes("boston_housing", [], {"test_split": 0.5})
    assert train[0] + test[0] == 506 and train[0] == 253
    assert dataset_shapes("mnist", ["mnist.npz"], {})[0][0] == (60000, 28, 28)
    assert dataset_shapes("cifar100", [], {"label_mode": "coarse"})[1][1] == (10000, 1)
    assert dataset_shapes("mnist", [], {"other": 1}) is None  # (an argument it does not know)
    assert dataset_shapes("boston_housing", [], {"test_split": "x"}) is None
    assert dataset_shapes("imdb", [], {}) is None


SUBCLASS = '''
import numpy as np
import keras
from keras import layers

(x_train, y_train), (x_test, y_test) = keras.datasets.boston_housing.load_data(
    path="boston_housing.npz", test_split=0.2, seed=113
)
x_all = np.concatenate([x_train, x_test])
y_all = np.concatenate([y_train, y_test], axis=0)


class Regressor(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(8, activation="relu")
        self.out = layers.Dense(1)

    def call(self, inputs):
        return self.out(self.hidden(inputs))


model = Regressor()
model.compile(optimizer="adam", loss="mse")
keras.backend.clear_session()
model.fit(x_all, y_all, epochs=1, verbose=0)
'''


def test_a_subclass_fitted_on_concatenated_dataset_arrays_is_built_from_them():
    result = translate(SUBCLASS, "regressor.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "nn.Linear(13, 8)" in result.text
    assert "# keras.backend.clear_session(): nothing to do in PyTorch" in result.text


@pytest.mark.parametrize("arrays, axis", [("[x_train, np.zeros((3, 4))]", 0), ("[x_train, x_test]", 1)])
def test_arrays_numpy_cannot_concatenate_leave_the_model_unbuilt(arrays, axis):
    source = SUBCLASS.replace("np.concatenate([x_train, x_test])", f"np.concatenate({arrays}, axis={axis})")
    result = translate(source, "regressor.py")
    assert any("never built" in d.message for d in result.stubs), [str(d) for d in result.stubs]
