"""Tests of the Keras frontend: Keras source text → ir.Program.

The frontend imports no framework; only the auto-name tests build the real Keras
model, because Keras itself is the reference for the names checkpoints are keyed by.
"""

from __future__ import annotations

import runpy
import subprocess
import sys
import textwrap

import pytest

from transpiler.frontend_ast.keras import layers as keras_layers
from transpiler.frontend_ast.keras.frontend import FrontendError, read_keras
from transpiler.ir.program import Program


def read(source: str, path: str = "case.py") -> Program:
    return read_keras(textwrap.dedent(source), path)


def only_model(program: Program):
    assert [str(d) for d in program.diagnostics if d.severity == "stub"] == []
    assert len(program.models) == 1, [m.class_name for m in program.models]
    return program.models[0]


def ops(model) -> list[str]:
    return [n.op for n in model.graph.nodes]


def attrs(model, op: str, key: str) -> list:
    return [n.attrs[key] for n in model.graph.nodes if n.op == op]


def graph_signature(model) -> list:
    """What must not depend on how Keras was imported: ops, attrs, Keras names, shapes."""
    return [(n.op, n.attrs, n.source_name, tuple(v.shape for v in n.outputs)) for n in model.graph.nodes]


def stubs(program: Program) -> list:
    return [d for d in program.diagnostics if d.severity == "stub"]


def line_of(source: str, needle: str) -> int:
    """1-based line of the first line of dedented ``source`` containing ``needle``."""
    lines = textwrap.dedent(source).splitlines()
    return next(i for i, text in enumerate(lines, 1) if needle in text)


# ---------------------------------------------------------------------------------
# Import spellings: every one resolves to the same graph
# ---------------------------------------------------------------------------------
_SPELLING_BODY = """

def build_model():
    inputs = {Input}(shape=(28, 28, 1))
    x = {Conv2D}(8, 3, padding="same", activation="relu")(inputs)
    x = {MaxPooling2D}()(x)
    x = {BatchNormalization}()(x)
    x = {GlobalAveragePooling2D}()(x)
    outputs = {Dense}(10, activation="softmax")(x)
    return {Model}(inputs, outputs)
"""
_CLASSES = ("Conv2D", "MaxPooling2D", "BatchNormalization", "GlobalAveragePooling2D", "Dense")


def _spelled(imports: str, layer_prefix: str, input_name: str, model_name: str, **renames) -> str:
    names = {cls: renames.get(cls, layer_prefix + cls) for cls in _CLASSES}
    return imports + _SPELLING_BODY.format(Input=input_name, Model=model_name, **names)


_REFERENCE = _spelled("import keras\n", "keras.layers.", "keras.Input", "keras.Model")

SPELLINGS = {
    "from_tensorflow_import_keras": _spelled(
        "from tensorflow import keras\n", "keras.layers.", "keras.Input", "keras.Model"),
    "tf_keras_layers": _spelled(
        "import tensorflow as tf\n", "tf.keras.layers.", "tf.keras.Input", "tf.keras.Model"),
    "from_keras_import_layers": _spelled(
        "import keras\nfrom keras import layers\n", "layers.", "keras.Input", "keras.Model"),
    "from_keras_layers_import_as": _spelled(
        "from keras.layers import Conv2D as C, MaxPooling2D as P, BatchNormalization as BN\n"
        "from keras.layers import GlobalAveragePooling2D as G, Dense as D, Input as I\n"
        "from keras.models import Model as M\n",
        "", "I", "M", Conv2D="C", MaxPooling2D="P", BatchNormalization="BN",
        GlobalAveragePooling2D="G", Dense="D"),
    "import_keras_layers_as_kl": _spelled(
        "import keras\nimport keras.layers as kl\n", "kl.", "kl.Input", "keras.models.Model"),
    "from_tensorflow_keras_layers_import": _spelled(
        "from tensorflow.keras.layers import Conv2D, MaxPooling2D, BatchNormalization\n"
        "from tensorflow.keras.layers import GlobalAveragePooling2D, Dense, Input\n"
        "from tensorflow.keras import Model\n", "", "Input", "Model"),
    "from_tensorflow_keras_import_layers_models": _spelled(
        "from tensorflow.keras import layers, models\n", "layers.", "layers.Input", "models.Model"),
    "import_keras_layers_dotted": _spelled(
        "import keras.layers\nimport keras.models\n", "keras.layers.", "keras.layers.Input",
        "keras.models.Model"),
    "legacy_class_names": _spelled(
        "from keras import layers, Input, Model\n", "layers.", "Input", "Model",
        Conv2D="layers.Convolution2D", MaxPooling2D="layers.MaxPool2D",
        GlobalAveragePooling2D="layers.GlobalAvgPool2D"),
}


def test_reference_spelling_reads_the_whole_graph():
    model = only_model(read(_REFERENCE))
    assert ops(model) == ["conv2d", "relu", "max_pool2d", "batch_norm", "global_avg_pool2d",
                          "dense", "softmax"]
    assert [n.source_name for n in model.graph.nodes if n.source_name] == [
        "conv2d", "max_pooling2d", "batch_normalization", "global_average_pooling2d", "dense"]


@pytest.mark.parametrize("source", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_every_import_spelling_gives_the_same_graph(source):
    assert graph_signature(only_model(read(source))) == graph_signature(only_model(read(_REFERENCE)))


@pytest.mark.parametrize(
    "layer, shape, op, keras_name",
    [
        ("Convolution2D(4, 3)", (8, 8, 2), "conv2d", "conv2d"),
        ("Convolution1D(4, 3)", (8, 2), "conv1d", "conv1d"),
        ("MaxPool2D()", (8, 8, 2), "max_pool2d", "max_pooling2d"),
        ("MaxPool1D()", (8, 2), "max_pool1d", "max_pooling1d"),
        ("AvgPool2D(2)", (8, 8, 2), "avg_pool2d", "average_pooling2d"),
        ("GlobalAvgPool2D()", (8, 8, 2), "global_avg_pool2d", "global_average_pooling2d"),
        ("GlobalMaxPool1D()", (8, 2), "global_max_pool1d", "global_max_pooling1d"),
    ],
)
def test_legacy_class_names(layer, shape, op, keras_name):
    model = only_model(read(f"""
        from keras import layers
        import keras

        def build_model():
            inputs = keras.Input(shape={shape})
            return keras.Model(inputs, layers.{layer}(inputs))
    """))
    assert [(n.op, n.source_name) for n in model.graph.nodes] == [(op, keras_name)]


@pytest.mark.parametrize(
    "call, slope",
    [("LeakyReLU(alpha=0.1)", 0.1), ("LeakyReLU(negative_slope=0.2)", 0.2), ("LeakyReLU()", 0.3)],
)
def test_leaky_relu_alpha_is_negative_slope(call, slope):
    model = only_model(read(f"""
        import keras

        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, keras.layers.{call}(inputs))
    """))
    assert attrs(model, "leaky_relu", "negative_slope") == [slope]


# ---------------------------------------------------------------------------------
# Argument values decided statically
# ---------------------------------------------------------------------------------
_PRELUDE = """\
import keras
from keras import layers
"""

STATIC_VALUES = {
    "module_constant": (
        """
        UNITS = 12

        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(UNITS)(inputs))
        """, "dense", "units", [12]),
    "constant_from_another_constant": (
        """
        BASE = 6
        WIDE = BASE * 3 + 1

        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(WIDE)(inputs))
        """, "dense", "units", [19]),
    "parameter_default": (
        """
        def build_model(units=7):
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(units)(inputs))
        """, "dense", "units", [7]),
    "keyword_only_parameter_default": (
        """
        def build_model(*, units=5):
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(units=units)(inputs))
        """, "dense", "units", [5]),
    "arithmetic": (
        """
        def build_model(filters=8, base=9):
            inputs = keras.Input(shape=(16, 16, 3))
            x = layers.Conv2D(filters * 2, 3)(inputs)
            x = layers.Conv2D(base // 2, 3)(x)
            x = layers.Conv2D(filters - 3 + base % 4, 1)(x)
            return keras.Model(inputs, x)
        """, "conv2d", "filters", [16, 4, 6]),
    "tuples": (
        """
        def build_model():
            inputs = keras.Input(shape=(16, 16, 3))
            x = layers.Conv2D(4, (3, 5), strides=(2, 1))(inputs)
            return keras.Model(inputs, x)
        """, "conv2d", "kernel_size", [(3, 5)]),
    "list_index": (
        """
        def build_model(widths=[5, 6]):
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(widths[0])(inputs))
        """, "dense", "units", [5]),
    "negative_index_and_slice": (
        """
        WIDTHS = (3, 4, 5, 6)

        def build_model():
            inputs = keras.Input(shape=(4,))
            x = inputs
            for w in WIDTHS[1:-1]:
                x = layers.Dense(w)(x)
            return keras.Model(inputs, layers.Dense(WIDTHS[-1])(x))
        """, "dense", "units", [4, 5, 6]),
    "config_dict": (
        """
        CONFIG = {"hidden": 24, "dropout": 0.25}

        def build_model(config=CONFIG):
            inputs = keras.Input(shape=(4,))
            x = layers.Dense(config["hidden"])(inputs)
            return keras.Model(inputs, layers.Dropout(config["dropout"])(x))
        """, "dense", "units", [24]),
    "nested_config_dict": (
        """
        CONFIG = {"stem": {"filters": 8, "kernel": (5, 3)}, "head": {"units": [16, 4]}}

        def build_model(config=CONFIG):
            inputs = keras.Input(shape=(16, 16, 3))
            stem = config["stem"]
            x = layers.Conv2D(stem["filters"], kernel_size=config["stem"]["kernel"])(inputs)
            return keras.Model(inputs, x)
        """, "conv2d", "kernel_size", [(5, 3)]),
    "dict_get_with_default": (
        """
        CONFIG = {"hidden": 9}

        def build_model(config=CONFIG):
            inputs = keras.Input(shape=(4,))
            x = layers.Dense(config.get("hidden", 1))(inputs)
            return keras.Model(inputs, layers.Dense(config.get("out", 2))(x))
        """, "dense", "units", [9, 2]),
    "conditional_expression": (
        """
        def build_model(downsample=True):
            inputs = keras.Input(shape=(16, 16, 3))
            x = layers.Conv2D(4, 3, strides=2 if downsample else 1)(inputs)
            x = layers.Conv2D(4, 3, strides=2 if not downsample else 1)(x)
            return keras.Model(inputs, x)
        """, "conv2d", "strides", [(2, 2), (1, 1)]),
    "if_statement": (
        """
        def build_model(use_bn=False, deep=True):
            inputs = keras.Input(shape=(4,))
            x = layers.Dense(3)(inputs)
            if use_bn:
                x = layers.BatchNormalization()(x)
            elif deep:
                x = layers.Dense(30)(x)
            else:
                x = layers.Dense(300)(x)
            return keras.Model(inputs, x)
        """, "dense", "units", [3, 30]),
    "for_over_list": (
        """
        def build_model(widths=(8, 16, 32)):
            inputs = keras.Input(shape=(4,))
            x = inputs
            for w in widths:
                x = layers.Dense(w)(x)
            return keras.Model(inputs, x)
        """, "dense", "units", [8, 16, 32]),
    "for_over_range_with_augmented_assignment": (
        """
        def build_model():
            inputs = keras.Input(shape=(4,))
            x, units = inputs, 2
            for i in range(3):
                units *= 2
                x = layers.Dense(units + i)(x)
            return keras.Model(inputs, x)
        """, "dense", "units", [4, 9, 18]),
    "enumerate_and_zip": (
        """
        def build_model(filters=(4, 8), kernels=(1, 3)):
            inputs = keras.Input(shape=(16, 16, 3))
            x = inputs
            for i, (f, k) in enumerate(zip(filters, kernels)):
                x = layers.Conv2D(f * (i + 1), k)(x)
            return keras.Model(inputs, x)
        """, "conv2d", "filters", [4, 16]),
    "break_and_continue": (
        """
        def build_model():
            inputs = keras.Input(shape=(4,))
            x = inputs
            for w in [1, 2, 3, 4, 5]:
                if w == 2:
                    continue
                if w == 4:
                    break
                x = layers.Dense(w)(x)
            return keras.Model(inputs, x)
        """, "dense", "units", [1, 3]),
    "list_comprehension_of_layers": (
        """
        def build_model(widths=(3, 5, 7)):
            inputs = keras.Input(shape=(4,))
            stack = [layers.Dense(w, activation="relu") for w in widths if w > 3]
            x = inputs
            for layer in stack:
                x = layer(x)
            return keras.Model(inputs, x)
        """, "dense", "units", [5, 7]),
    "helper_taking_and_returning_tensors": (
        """
        def dense_block(x, units, repeat=2):
            for _ in range(repeat):
                x = layers.Dense(units)(x)
            return x

        def build_model():
            inputs = keras.Input(shape=(4,))
            x = dense_block(inputs, 3)
            x = dense_block(x, 5, repeat=1)
            x = dense_block(x, units=7)
            return keras.Model(inputs, x)
        """, "dense", "units", [3, 3, 5, 7, 7]),
    "helper_returning_a_tuple": (
        """
        def two_heads(x, units):
            return layers.Dense(units)(x), layers.Dense(units + 1)(x)

        def build_model():
            inputs = keras.Input(shape=(4,))
            a, b = two_heads(inputs, 2)
            c, d = two_heads(b, 10)
            return keras.Model(inputs, [a, c, d])
        """, "dense", "units", [2, 3, 10, 11]),
    "nested_helper_and_builtins": (
        """
        def width(i):
            return max(4, min(16, 2 ** (i + 2)))

        def build_model(n=4):
            inputs = keras.Input(shape=(4,))
            x = inputs
            for i in range(n):
                x = layers.Dense(width(i))(x)
            return keras.Model(inputs, layers.Dense(len([1, 2, 3]) + sum((1, 1)))(x))
        """, "dense", "units", [4, 8, 16, 16, 5]),
    "unpacked_tuple_constant": (
        """
        HEIGHT, WIDTH = 12, 10

        def build_model():
            inputs = keras.Input(shape=(HEIGHT, WIDTH, 1))
            x = layers.Flatten()(inputs)
            return keras.Model(inputs, layers.Dense(HEIGHT * WIDTH // 8)(x))
        """, "dense", "units", [15]),
    "astroid_fallback_for_name_defined_after_main_guard": (
        """
        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(LATE[1])(inputs))

        if __name__ == "__main__":
            build_model().summary()

        LATE = (3, 11)
        """, "dense", "units", [11]),
    "module_constant_agreed_on_by_both_branches": (
        """
        import os

        if os.environ.get("BIG"):
            UNITS = 8
        else:
            UNITS = 8

        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(UNITS)(inputs))
        """, "dense", "units", [8]),
}


@pytest.mark.parametrize("source, op, key, expected", STATIC_VALUES.values(), ids=STATIC_VALUES.keys())
def test_argument_values_are_decided_statically(source, op, key, expected):
    model = only_model(read(_PRELUDE + textwrap.dedent(source)))
    assert attrs(model, op, key) == expected


def test_builder_arguments_are_recorded():
    model = only_model(read(_PRELUDE + textwrap.dedent("""
        WIDTHS = [8, 16]

        def build_model(widths=WIDTHS, dropout=0.5, *, name="net"):
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(widths[-1])(inputs), name=name)
    """)))
    assert model.builder == "build_model"
    assert model.builder_args == {"widths": [8, 16], "dropout": 0.5, "name": "net"}
    assert model.class_name == "Net"


@pytest.mark.parametrize(
    "name_expr, expected",
    [
        ('f"block{i}_conv"', ["block0_conv", "block1_conv"]),
        ('f"{prefix}_{i + 1:02d}"', ["stage_01", "stage_02"]),
        ('"conv_%d" % i', ["conv_0", "conv_1"]),
        ('"conv_{}".format(i)', ["conv_0", "conv_1"]),
        ('prefix + "_" + str(i)', ["stage_0", "stage_1"]),
    ],
)
def test_computed_layer_names(name_expr, expected):
    model = only_model(read(_PRELUDE + textwrap.dedent(f"""
        def build_model(prefix="stage"):
            inputs = keras.Input(shape=(8, 8, 3))
            x = inputs
            for i in range(2):
                x = layers.Conv2D(4, 3, padding="same", name={name_expr})(x)
            return keras.Model(inputs, x)
    """)))
    assert [n.source_name for n in model.graph.nodes] == expected
    assert [n.name for n in model.graph.nodes] == expected


# ---------------------------------------------------------------------------------
# Model styles
# ---------------------------------------------------------------------------------
MODEL_STYLES = {
    "sequential_list": (
        """
        def build_model():
            return keras.Sequential([
                layers.Dense(8, activation="relu", input_shape=(4,)),
                layers.Dense(2),
            ])
        """, ["dense", "relu", "dense"], [(None, 4)], [(None, 2)]),
    "sequential_add": (
        """
        def build_model():
            model = keras.Sequential()
            model.add(layers.Dense(8, input_shape=(4,)))
            model.add(layers.Dropout(0.5))
            model.add(layers.Dense(2))
            return model
        """, ["dense", "dropout", "dense"], [(None, 4)], [(None, 2)]),
    "sequential_add_input": (
        """
        def build_model():
            model = keras.Sequential()
            model.add(keras.Input(shape=(6,)))
            model.add(layers.Dense(2))
            return model
        """, ["dense"], [(None, 6)], [(None, 2)]),
    "sequential_input_in_list": (
        """
        def build_model():
            return keras.Sequential([keras.Input(shape=(5, 3)), layers.Flatten(), layers.Dense(2)])
        """, ["flatten", "dense"], [(None, 5, 3)], [(None, 2)]),
    "sequential_batch_input_shape": (
        """
        def build_model():
            return keras.Sequential([layers.Dense(3, batch_input_shape=(None, 7))])
        """, ["dense"], [(None, 7)], [(None, 3)]),
    "functional_several_inputs_and_outputs": (
        """
        def build_model():
            a = keras.Input(shape=(4,), name="a")
            b = keras.Input(shape=(6,), name="b")
            x = layers.concatenate([a, b])
            return keras.Model(inputs=[a, b], outputs=[layers.Dense(3)(x), layers.Dense(1)(x)])
        """, ["concat", "dense", "dense"], [(None, 4), (None, 6)], [(None, 3), (None, 1)]),
    "functional_dict_inputs": (
        """
        def build_model():
            a = keras.Input(shape=(4,))
            b = keras.Input(shape=(4,))
            return keras.Model(inputs={"a": a, "b": b}, outputs=layers.add([a, b]))
        """, ["add"], [(None, 4), (None, 4)], [(None, 4)]),
    "merge_functions": (
        """
        def build_model():
            a = keras.Input(shape=(4,))
            b = keras.Input(shape=(4,))
            x = layers.add([a, b])
            x = layers.subtract([x, b])
            x = layers.multiply([x, a])
            x = layers.average([x, a])
            x = layers.maximum([x, b])
            x = layers.minimum([x, a])
            x = layers.concatenate([x, b], axis=-1)
            return keras.Model([a, b], x)
        """, ["add", "subtract", "multiply", "average", "maximum", "minimum", "concat"],
        [(None, 4), (None, 4)], [(None, 8)]),
    "merge_layers": (
        """
        def build_model():
            a = keras.Input(shape=(4,))
            b = keras.Input(shape=(4,))
            x = layers.Add()([a, b])
            x = layers.Multiply()([x, b])
            x = layers.Concatenate(axis=1)([x, a])
            return keras.Model([a, b], x)
        """, ["add", "multiply", "concat"], [(None, 4), (None, 4)], [(None, 8)]),
    "tensor_operators": (
        """
        def build_model():
            a = keras.Input(shape=(4,))
            b = keras.Input(shape=(4,))
            x = a + b
            x = x - b
            x = x * a
            return keras.Model([a, b], x)
        """, ["add", "subtract", "multiply"], [(None, 4), (None, 4)], [(None, 4)]),
    "tensor_and_constant": (
        """
        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, (inputs / 255.0) * 2 + 1)
        """, ["rescaling", "rescaling", "rescaling"], [(None, 4)], [(None, 4)]),
    "activation_functions": (
        """
        def build_model():
            inputs = keras.Input(shape=(4,))
            x = keras.activations.relu(inputs)
            x = layers.Dense(3, activation=keras.activations.tanh)(x)
            return keras.Model(inputs, layers.Activation("softmax")(x))
        """, ["relu", "dense", "tanh", "softmax"], [(None, 4)], [(None, 3)]),
    "shared_layer": (
        """
        def build_model():
            a = keras.Input(shape=(4,))
            b = keras.Input(shape=(4,))
            shared = layers.Dense(3)
            return keras.Model([a, b], layers.add([shared(a), shared(b)]))
        """, ["dense", "dense", "add"], [(None, 4), (None, 4)], [(None, 3)]),
    "model_output_attribute": (
        """
        def build_model():
            base = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3)])
            x = layers.Dense(2)(base.output)
            return keras.Model(base.input, x)
        """, ["dense", "dense"], [(None, 4)], [(None, 2)]),
}


@pytest.mark.parametrize("source, expected_ops, in_shapes, out_shapes", MODEL_STYLES.values(),
                         ids=MODEL_STYLES.keys())
def test_model_styles(source, expected_ops, in_shapes, out_shapes):
    model = only_model(read(_PRELUDE + textwrap.dedent(source)))
    assert ops(model) == expected_ops
    assert [v.shape for v in model.graph.inputs] == in_shapes
    assert [v.shape for v in model.graph.outputs] == out_shapes
    assert model.builder == "build_model"


def test_shared_layer_keeps_one_name():
    model = only_model(read(_PRELUDE + textwrap.dedent(MODEL_STYLES["shared_layer"][0])))
    dense = [n for n in model.graph.nodes if n.op == "dense"]
    assert dense[0].name == dense[1].name == "shared"
    assert dense[0].source_name == dense[1].source_name == "dense"


def test_model_at_module_level():
    program = read("""
        import keras
        from keras import layers

        model = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(2)])
        model.compile(optimizer="adam", loss="mse")
    """)
    model = only_model(program)
    assert (model.builder, model.var, model.class_name) == (None, "model", "Net")
    assert ops(model) == ["dense"]


@pytest.mark.parametrize("call", ["main()", "main(sys.argv)"])
def test_model_built_inside_main_is_found_once(call):
    params = "argv=None" if call == "main()" else "argv"
    program = read(f"""
        import sys
        import keras
        from keras import layers

        def main({params}):
            net = keras.Sequential()
            net.add(layers.Dense(4, input_shape=(3,)))
            net.add(layers.Dense(1))
            net.compile(optimizer="sgd", loss="mse")

        if __name__ == "__main__":
            {call}
    """)
    model = only_model(program)
    assert (model.builder, model.var, model.class_name) == (None, "net", "Net")
    assert attrs(model, "dense", "units") == [4, 1]


def test_model_in_main_guard():
    model = only_model(read("""
        import keras

        if __name__ == "__main__":
            clf = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2)])
            clf.summary()
    """))
    assert (model.builder, model.var, model.class_name) == (None, "clf", "Clf")


def test_class_names_are_unique():
    program = read("""
        import keras

        def build_model():
            return keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2)])

        model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
    """)
    assert sorted(m.class_name for m in program.models) == ["Net", "Net2"]


def test_builder_called_from_main_is_not_a_second_model():
    program = read("""
        import keras

        def build_model(units=2):
            return keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(units)])

        def main():
            model = build_model()
            model.fit(None, None)

        if __name__ == "__main__":
            main()
    """)
    assert [(m.builder, m.var) for m in program.models] == [("build_model", None)]


def test_reading_twice_gives_the_same_program():
    source = _PRELUDE + textwrap.dedent(STATIC_VALUES["helper_taking_and_returning_tensors"][0])
    first, second = (only_model(read(source)) for _ in range(2))
    assert graph_signature(first) == graph_signature(second)
    assert [n.name for n in first.graph.nodes] == [n.name for n in second.graph.nodes]


def test_reading_imports_no_framework():
    code = textwrap.dedent(f"""
        import sys
        from transpiler.frontend_ast.keras.frontend import read_keras
        program = read_keras({_REFERENCE!r}, "case.py")
        assert len(program.models) == 1
        loaded = sorted(m for m in ("keras", "tensorflow", "torch") if m in sys.modules)
        assert not loaded, loaded
    """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# ---------------------------------------------------------------------------------
# Attribute names of the generated module
# ---------------------------------------------------------------------------------
def test_attribute_names_from_variables_helpers_and_names():
    model = only_model(read(_PRELUDE + textwrap.dedent("""
        def conv_bn(x, filters):
            x = layers.Conv2D(filters, 3, padding="same")(x)
            return layers.BatchNormalization()(x)

        def build_model(widths=(4, 8)):
            inputs = keras.Input(shape=(8, 8, 3))
            stem = layers.Conv2D(4, 3, padding="same")
            x = stem(inputs)
            for w in widths:
                x = conv_bn(x, w)
            convs = [layers.Conv2D(w, 1) for w in widths]
            for c in convs:
                x = c(x)
            x = layers.Conv2D(2, 1, name="head")(x)
            return keras.Model(inputs, layers.Conv2D(2, 1)(x))
    """)))
    assert [n.name for n in model.graph.nodes] == [
        "stem", "conv_bn1_conv1", "conv_bn1_bn1", "conv_bn2_conv1", "conv_bn2_bn1",
        "conv1", "conv2", "head", "conv3"]


# ---------------------------------------------------------------------------------
# Keras' own auto names (checkpoints are keyed by them)
# ---------------------------------------------------------------------------------
KERAS_NAME_CASES = {
    "cnn_helpers_loops_and_names": """
        def conv_bn(x, filters, strides=1):
            x = layers.Conv2D(filters, 3, strides=strides, padding="same", use_bias=False)(x)
            x = layers.BatchNormalization()(x)
            return layers.ReLU()(x)

        def build_model(widths=(4, 8)):
            inputs = keras.Input(shape=(16, 16, 3))
            x = layers.Rescaling(1.0 / 255)(inputs)
            for i, w in enumerate(widths):
                shortcut = layers.Conv2D(w, 1, strides=2, name=f"proj{i}")(x)
                x = conv_bn(x, w, strides=2)
                x = conv_bn(x, w)
                x = layers.add([x, shortcut])
            x = layers.GlobalAveragePooling2D()(x)
            x = layers.Dropout(0.1)(x)
            return keras.Model(inputs, layers.Dense(3, activation="softmax")(x))
        """,
    "sequential_add_and_input_shape": """
        def build_model():
            model = keras.Sequential()
            model.add(layers.Conv1D(4, 3, activation="relu", input_shape=(20, 2)))
            model.add(layers.MaxPooling1D())
            model.add(layers.Conv1D(8, 3))
            model.add(layers.BatchNormalization())
            model.add(layers.Flatten())
            model.add(layers.Dense(5))
            model.add(layers.Dense(1))
            return model
        """,
    "recurrent_and_embedding": """
        def build_model(vocab=50):
            tokens = keras.Input(shape=(12,), dtype="int32")
            x = layers.Embedding(vocab, 8)(tokens)
            x = layers.Bidirectional(layers.LSTM(6, return_sequences=True))(x)
            x = layers.GRU(5, return_sequences=True)(x)
            x = layers.SimpleRNN(4)(x)
            x = layers.LayerNormalization()(x)
            return keras.Model(tokens, layers.Dense(2)(x))
        """,
    "snake_case_of_tricky_class_names": """
        def build_model():
            inputs = keras.Input(shape=(8, 8, 4))
            x = layers.DepthwiseConv2D(3, padding="same")(inputs)
            x = layers.SeparableConv2D(6, 3, padding="same")(x)
            x = layers.Conv2DTranspose(4, 2, strides=2)(x)
            x = layers.PReLU()(x)
            x = layers.Convolution2D(3, 1)(x)
            return keras.Model(inputs, x)
        """,
    "shared_layer_and_comprehension": """
        def build_model(widths=(6, 5)):
            a = keras.Input(shape=(4,))
            b = keras.Input(shape=(4,))
            shared = layers.Dense(3)
            stack = [layers.Dense(w) for w in widths]
            x = layers.concatenate([shared(a), shared(b)])
            for layer in stack:
                x = layer(x)
            return keras.Model([a, b], [x, layers.Dense(1, name="aux")(x)])
        """,
}


def _weighted_ir_names(model) -> list[str]:
    names: list[str] = []
    for node in model.graph.nodes:
        if node.spec.active_params(node.attrs) and node.source_name not in names:
            names.append(node.source_name)
    return names


@pytest.fixture(scope="module")
def keras_module():
    import torch  # noqa: F401  (torch before tensorflow, see conftest)
    import keras

    return keras


@pytest.mark.parametrize("source", KERAS_NAME_CASES.values(), ids=KERAS_NAME_CASES.keys())
def test_auto_names_match_keras(source, keras_module):
    from harness import load_source_module

    text = _PRELUDE + textwrap.dedent(source)
    module = load_source_module(text)
    keras_module.backend.clear_session()
    kmodel = module.build_model()
    expected = [layer.name for layer in kmodel.layers if layer.weights]
    model = only_model(read(text))
    # Keras lists a functional model's layers by depth, the IR by construction: the
    # names must agree as a set, and each name must denote the same layer.
    assert sorted(_weighted_ir_names(model)) == sorted(expected)
    for node in model.graph.nodes:
        if node.source_name not in expected:
            continue
        layer = kmodel.get_layer(node.source_name)
        canonical = keras_layers.lookup(node.from_keras.layer.cls_name).canonical_class
        assert canonical == type(layer).__name__, node.source_name
        if len(layer._inbound_nodes) == 1 and not isinstance(layer.output, (list, tuple)):
            assert tuple(layer.output.shape) == node.outputs[0].shape, node.source_name


def test_tensor_operators_take_keras_names_too(keras_module):
    """``a + b`` runs keras.ops.add, whose name comes from the layers' counters."""
    from harness import load_source_module

    text = _PRELUDE + textwrap.dedent("""
        def build_model():
            a = keras.Input(shape=(4,))
            b = keras.Input(shape=(4,))
            x = (a + b) / 2.0
            x = layers.Add()([x, b])
            x = layers.Multiply()([x * 3, a - b])
            return keras.Model([a, b], layers.Dense(2)(x))
    """)
    module = load_source_module(text)
    keras_module.backend.clear_session()
    kmodel = module.build_model()
    expected = [layer.name for layer in kmodel.layers if type(layer).__name__ != "InputLayer"]
    got = [n.source_name for n in only_model(read(text)).graph.nodes if n.source_name]
    assert sorted(got) == sorted(expected) == ["add_1", "dense", "multiply"]


def test_auto_names_continue_from_module_level_models(keras_module, tmp_path):
    """A model built in the ``__main__`` block is named after the module-level ones."""
    text = textwrap.dedent("""
        import keras
        from keras import layers

        def build_model():
            return keras.Sequential([keras.Input(shape=(3,)), layers.Dense(2)])

        encoder = keras.Sequential([keras.Input(shape=(3,)), layers.Dense(4), layers.Dense(4)])

        if __name__ == "__main__":
            first = build_model()
            head = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(2), layers.Dense(1)])
    """)
    path = tmp_path / "script.py"
    path.write_text(text)
    keras_module.backend.clear_session()
    namespace = runpy.run_path(str(path), run_name="__main__")
    program = read(text)
    for var in ("encoder", "head"):
        model = next(m for m in program.models if m.var == var)
        expected = [layer.name for layer in namespace[var].layers if layer.weights]
        assert _weighted_ir_names(model) == expected, var


# ---------------------------------------------------------------------------------
# Errors: located, never silent
# ---------------------------------------------------------------------------------
#: a size the program computes when it runs, read by a builder from module names: the
#: generated builder computes it where it constructs the module (issue 18 item 1)
RUNTIME_SIZES_IN_BUILDERS = {
    "module_level_sys_argv": ("""
        UNITS = int(sys.argv[1])

        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(UNITS)(inputs))
        """, "return Net(UNITS)"),
    "local_sys_argv": ("""
        def build_model():
            units = int(sys.argv[1])
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(units)(inputs))
        """, "return Net(int(sys.argv[1]))"),
    # (a constant an ``if`` at the top level binds either way: bound before the builder runs)
    "module_constant_with_two_values": ("""
        if os.environ.get("BIG"):
            UNITS = 64
        else:
            UNITS = 8

        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(UNITS)(inputs))
        """, "return Net(UNITS)"),
}


@pytest.mark.parametrize("case", RUNTIME_SIZES_IN_BUILDERS.values(), ids=RUNTIME_SIZES_IN_BUILDERS.keys())
def test_runtime_argument_read_in_a_builder_is_computed_where_the_module_is_built(case):
    from transpiler.translate import translate

    source, construction = case
    result = translate("import os\nimport sys\n" + _PRELUDE + textwrap.dedent(source), "script.py")
    assert [d.message for d in result.stubs] == []
    assert construction in result.text


RUNTIME_ARGUMENTS = {
    "environment_variable_in_a_tuple": """
        def build_model():
            inputs = keras.Input(shape=(8, 8, 3))
            return keras.Model(inputs, layers.Conv2D(4, (3, int(os.environ["K"])))(inputs))
        """,
    "imported_constant_of_another_module": """
        from settings import UNITS

        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(UNITS)(inputs))
        """,
}


@pytest.mark.parametrize("source", RUNTIME_ARGUMENTS.values(), ids=RUNTIME_ARGUMENTS.keys())
def test_runtime_argument_is_a_located_diagnostic(source):
    text = "import os\nimport sys\n" + _PRELUDE + textwrap.dedent(source)
    program = read_keras(text, "script.py")
    assert program.models == []
    [diag] = stubs(program)
    assert "cannot be decided statically" in diag.message
    assert diag.span.file == "script.py"
    expected_line = line_of(text, "layers.Dense(" if "Dense" in source else "layers.Conv2D(")
    assert diag.span.line == expected_line
    assert str(diag).startswith(f"script.py:{diag.span.line}:")


def test_condition_known_only_at_run_time_around_layers():
    text = _PRELUDE + textwrap.dedent("""
        import random

        def build_model():
            inputs = keras.Input(shape=(4,))
            x = inputs
            if random.random() > 0.5:
                x = layers.Dense(3)(x)
            return keras.Model(inputs, x)
    """)
    program = read_keras(text, "script.py")
    assert program.models == []
    [diag] = stubs(program)
    assert "statically" in diag.message and diag.span.line == line_of(text, "if random")


UNSUPPORTED_LAYERS = {
    "time_distributed": ("layers.TimeDistributed(layers.Conv1D(3, 1))", "TimeDistributed"),
    "lambda_mask": ("layers.Lambda(lambda t: t * 2, mask=lambda t, m: m)", "Lambda(mask=...)"),
    "conv_lstm": ("layers.ConvLSTM1D(2, 3)", "ConvLSTM1D"),
    "masking": ("layers.Masking()", "Masking"),
    "unknown_argument": ("layers.Dense(3, foo=1)", "foo"),
    "channels_first": ('layers.Conv1D(3, 1, data_format="channels_first")', "channels_first"),
    "text_vectorization": ("layers.TextVectorization(max_tokens=10)", "tokenize in the data pipeline"),
}


@pytest.mark.parametrize("layer, mentioned", UNSUPPORTED_LAYERS.values(), ids=UNSUPPORTED_LAYERS.keys())
@pytest.mark.parametrize("style", ["functional", "sequential_list", "sequential_add", "module_level"])
def test_unsupported_layer_is_a_stub_never_dropped(layer, mentioned, style):
    bodies = {
        "functional": f"""
            def build_model():
                inputs = keras.Input(shape=(5, 4))
                x = layers.Dense(4)(inputs)
                x = {layer}(x)
                return keras.Model(inputs, layers.Dense(2)(x))
            """,
        "sequential_list": f"""
            def build_model():
                return keras.Sequential([
                    keras.Input(shape=(5, 4)),
                    layers.Dense(4),
                    {layer},
                    layers.Dense(2),
                ])
            """,
        "sequential_add": f"""
            def main():
                model = keras.Sequential()
                model.add(keras.Input(shape=(5, 4)))
                model.add(layers.Dense(4))
                model.add({layer})
                model.add(layers.Dense(2))

            if __name__ == "__main__":
                main()
            """,
        "module_level": f"""
            model = keras.Sequential()
            model.add(layers.Dense(4, input_shape=(5, 4)))
            model.add({layer})
            model.add(layers.Dense(2))
            """,
    }
    text = _PRELUDE + textwrap.dedent(bodies[style])
    program = read_keras(text, "script.py")
    assert program.models == []  # never a model with the layer silently missing
    [diag] = stubs(program)
    assert mentioned in diag.message
    assert diag.span.line == line_of(text, layer)
    assert diag.source_line.strip() and layer.split("(")[0] in diag.source_line


@pytest.mark.parametrize(
    "source, line, col",
    [
        ("import keras\ndef build_model(:\n    pass\n", 2, 17),
        ("import keras\nx = (1,\n", 2, 5),
        ("def f():\nreturn 1\n", 2, 1),
        ("import keras\n\nx = 1 +* 2\n", 3, 8),
    ],
    ids=["bad_parameter_list", "unclosed_paren", "missing_indent", "bad_operator"],
)
def test_syntax_error_is_located(source, line, col):
    with pytest.raises(FrontendError) as info:
        read_keras(source, "broken.py")
    assert "syntax error" in str(info.value)
    assert (info.value.span.file, info.value.span.line, info.value.span.col) == ("broken.py", line, col)


def test_wrong_argument_type_is_a_located_diagnostic():
    text = _PRELUDE + textwrap.dedent("""
        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense("8")(inputs))
    """)
    program = read_keras(text, "script.py")
    [diag] = stubs(program)
    assert "units" in diag.message and diag.span.line == line_of(text, 'Dense("8")')


def test_training_only_arguments_are_warnings():
    text = _PRELUDE + textwrap.dedent("""
        def build_model():
            inputs = keras.Input(shape=(4,))
            x = layers.Dense(3, kernel_regularizer=keras.regularizers.l2(1e-4),
                             kernel_constraint=keras.constraints.MaxNorm(2.0))(inputs)
            return keras.Model(inputs, x)
    """)
    program = read(text)
    model = only_model(program)
    assert ops(model) == ["dense"]
    # the regularizer is read (the torch module adds it to the loss); the constraint is reported
    assert model.graph.nodes[0].from_keras.regularizers == {"kernel_regularizer": (0.0, 1e-4)}
    [warning] = [d for d in program.diagnostics if d.severity == "warning"]
    assert "kernel_constraint" in warning.message
    assert warning.span.line == line_of(text, "kernel_regularizer")


# ---------------------------------------------------------------------------------
# Comments follow the code they describe
# ---------------------------------------------------------------------------------
COMMENTS = {
    "full_line_and_trailing": (
        """
        def build_model():
            inputs = keras.Input(shape=(10,))
            # project into a wider space
            x = layers.Dense(32)(inputs)
            x = layers.ReLU()(x)  # nonlinearity

            # the head
            return keras.Model(inputs, layers.Dense(1)(x))
        """,
        {"fc1": ["# project into a wider space"], "relu1": ["# nonlinearity"], "fc2": ["# the head"]}),
    "comment_block_with_blank_lines": (
        """
        def build_model():
            inputs = keras.Input(shape=(10,))
            # a long explanation
            # that takes
            #
            # several lines

            x = layers.Dense(32)(inputs)
            return keras.Model(inputs, x)
        """,
        {"fc1": ["# a long explanation", "# that takes", "#", "# several lines"]}),
    "inside_a_multi_line_call": (
        """
        def build_model():
            inputs = keras.Input(shape=(10,))
            x = layers.Dense(
                32,  # width
                activation="relu",
            )(inputs)
            return keras.Model(inputs, layers.Dense(1)(x))
        """,
        {"fc1": ["# width"], "relu1": [], "fc2": []}),
    "fused_activation_goes_to_its_layer": (
        """
        def build_model():
            inputs = keras.Input(shape=(10,))
            x = layers.Dense(4, activation="relu")(inputs)  # hidden
            return keras.Model(inputs, x)
        """,
        {"fc1": ["# hidden"], "relu1": []}),
    "sequential_elements": (
        """
        def build_model():
            return keras.Sequential([
                keras.Input(shape=(16,)),
                # first hidden layer
                layers.Dense(32, activation="relu"),  # wide
                layers.Dropout(0.1),
                # classifier head
                layers.Dense(3),
            ])
        """,
        {"fc1": ["# first hidden layer", "# wide"], "relu1": [], "dropout1": [],
         "fc2": ["# classifier head"]}),
    "helper_call_site_and_helper_body": (
        """
        def conv_bn(x, filters):
            # conv without bias: BN adds the offset
            x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
            return layers.BatchNormalization()(x)

        def build_model():
            inputs = keras.Input(shape=(8, 8, 3))
            # stem
            x = conv_bn(inputs, 4)
            x = layers.ReLU()(x)
            # second block
            x = conv_bn(x, 8)
            return keras.Model(inputs, x)
        """,
        {"conv_bn1_conv1": ["# conv without bias: BN adds the offset", "# stem"],
         "conv_bn1_bn1": [], "relu1": [], "conv_bn2_conv1": ["# second block"], "conv_bn2_bn1": []}),
    "comment_in_a_loop_goes_to_the_first_iteration": (
        """
        def build_model():
            inputs = keras.Input(shape=(4,))
            x = inputs
            for w in (3, 5):
                # widen
                x = layers.Dense(w)(x)
            return keras.Model(inputs, x)
        """,
        {"fc1": ["# widen"], "fc2": []}),
    "comments_outside_the_model_stay_out": (
        """
        # module comment about the data

        def build_model():
            inputs = keras.Input(shape=(4,))
            return keras.Model(inputs, layers.Dense(2)(inputs))

        # after the builder
        """,
        {"fc1": []}),
}


@pytest.mark.parametrize("source, expected", COMMENTS.values(), ids=COMMENTS.keys())
def test_comments_attach_to_the_right_node(source, expected):
    model = only_model(read(_PRELUDE + textwrap.dedent(source)))
    got = {n.name: n.comments for n in model.graph.nodes}
    assert got == expected


def test_astroid_is_not_asked_about_framework_values():
    """``model = build_model()`` at module level: astroid would parse Keras' own sources for
    seconds to learn nothing; only constants (no calls but to safe builtins) are asked."""
    import astroid

    from transpiler.translate import translate

    source = ("import keras\nfrom keras import layers\n\nUNITS = max(2, 3)\n\n\ndef build_model():\n"
              "    inp = keras.Input(shape=(4,))\n    out = layers.Dense(UNITS)(inp)\n"
              "    return keras.Model(inp, out)\n\n\nmodel = build_model()\n"
              "model.compile(optimizer='adam', loss='mse')\n")
    astroid.MANAGER.clear_cache()
    result = translate(source, "m.py")
    assert "nn.Linear(4, UNITS)" in result.text  # (a module constant prints as its name: sizes with provenance)
    parsed = [name for name in astroid.MANAGER.astroid_cache if name.split(".")[0] in ("keras", "tensorflow")]
    assert not parsed  # following build_model() into Keras parsed its sources: 7 s of CPU


def test_sequential_keeps_the_name_of_its_input():
    model = only_model(read("""
        import keras
        from keras import layers

        def build_model():
            return keras.Sequential([keras.Input(shape=(4,), name="features"), layers.Dense(2)])
    """))
    assert [v.var for v in model.graph.inputs] == ["features"]


def test_code_around_the_model_over_model_attributes_and_run_time_dicts_does_not_crash():
    """``sum(... for w in model.trainable_weights)`` (an attribute the frontend does not
    model) and ``{**{k: ... for k in run_time_dict}}`` are run-time values, not errors (both
    raised TypeError out of the frontend; the generated Keras training helpers have them)."""
    program = read("""
        import keras
        from keras import layers

        def build_model():
            return keras.Sequential([keras.Input(shape=(4,)), layers.Dense(2)])

        def summarize(model, sums, counts):
            print(f"{sum(int(w.shape[-1]) for w in model.trainable_weights)} weights")
            return {"epochs": 1, **{name: sums[name] / counts[name] for name in sums}}

        def main():
            model = build_model()
            print(summarize(model, {"loss": 2.0}, {"loss": 2}))
    """)
    assert len(program.models) == 1


def test_a_shared_layer_spelled_as_the_keras_printer_does_keeps_its_name():
    """``dense_layer = layers.Dense(..., name="dense")`` called twice (the Keras printer's
    spelling of a shared layer) is the layer ``dense``, not ``dense_layer``: translating a
    generated Keras script again must not grow the name each round."""
    model = only_model(read("""
        import keras
        from keras import layers

        def build_model():
            a = keras.Input(shape=(4,), name="a")
            b = keras.Input(shape=(4,), name="b")
            encoder_layer = layers.Dense(3, name="encoder")
            other = layers.Dense(3, name="head")
            return keras.Model([a, b], [encoder_layer(a), encoder_layer(b), other(a)])
    """))
    assert sorted({n.name for n in model.graph.nodes}) == ["encoder", "other"]


MODULE_LEVEL_LAYERS = _PRELUDE + textwrap.dedent("""
    augment = keras.Sequential([layers.RandomFlip("horizontal"), layers.Rescaling(1 / 255.0)],
                               name="augment")
    head = layers.Dense(3)


    def build_model():
        inputs = keras.Input(shape=(8, 6, 3))
        x = augment(inputs)
        x = layers.Conv2D(4, 3, padding="same")(x)
        x = layers.GlobalAveragePooling2D()(x)
        x = layers.Dense(5)(x)
        return keras.Model(inputs, head(x))
""")


def test_module_level_layers_used_by_a_builder(keras_module):
    """keras.io's ``data_augmentation = keras.Sequential([...])`` above ``def build_model()``:
    bound before the builder is read (it was unbound there: the builder failed to translate,
    or was printed without its ``return``). The layers keep Keras' auto names (the module's
    Dense is ``dense``, the builder's ``dense_1``) and the classes distinct names."""
    from harness import check_source, max_error

    program = read(MODULE_LEVEL_LAYERS)
    assert [str(d) for d in program.diagnostics if d.severity == "stub"] == []
    builder = next(m for m in program.models if m.builder == "build_model")
    assert sorted(n.source_name for n in builder.graph.nodes if n.op == "dense") == ["dense", "dense_1"]
    checked = check_source(MODULE_LEVEL_LAYERS)
    text = checked.translation.text
    assert "head = layers.Dense" not in text and "return Net()" in text
    classes = [line for line in text.splitlines() if line.startswith("class ")]
    assert len(classes) == len(set(classes)), classes
    assert checked.keras_params == checked.torch_params
    assert max_error(checked) <= 1e-5


def test_module_level_layer_named_elsewhere_is_not_left_out():
    """A module-level layer the builder uses and the script names again (``normalizer.adapt(x)``)
    keeps its statement (a reported stub), never silently dropped: that would leave a NameError."""
    program = read(MODULE_LEVEL_LAYERS + "\nprint(head.name)\n")
    builder = next(m for m in program.models if m.builder == "build_model")
    assert builder is not None and not program.from_keras.builder_layer_statements


@pytest.mark.parametrize("body, message", [
    pytest.param("base.trainable = False\n    y = base(x)", "`.trainable = False` (frozen weights) is not translated",
                 id="frozen-model"),
    pytest.param("y = base(x, training=False)", "model base(..., training=False): the fixed mode",
                 id="model-inference-mode"),
    pytest.param("y = layers.Dropout(0.5)(base(x), training=True)", "Dropout(..., training=True): the fixed "
                 "mode is not translated (the torch module follows model.train()/eval(): predictions differ",
                 id="mc-dropout"),
])
def test_training_mode_and_freezing_are_reported(body, message):
    """``base.trainable = False`` and ``base(x, training=False)`` (the transfer-learning guide)
    were silently ignored: the torch program trained the frozen weights, with batch statistics."""
    program = read(_PRELUDE + textwrap.dedent("""
        def build_model():
            base = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(3), layers.BatchNormalization()],
                                    name="base")
            x = keras.Input(shape=(4,))
            BODY
            return keras.Model(x, layers.Dense(1)(y))
    """).replace("BODY", body))
    assert len(program.models) == 1 and program.models[0].builder == "build_model"
    assert any(d.severity == "warning" and message in d.message for d in program.diagnostics), \
        [str(d) for d in program.diagnostics]
