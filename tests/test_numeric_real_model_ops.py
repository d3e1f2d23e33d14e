"""Numeric tests (Keras vs generated torch, same weights and inputs) for the ops real keras.io
models use and the corpus did not: ``activation=ops.gelu`` (Keras calls ``ops.gelu(x)``, which
approximates), position embeddings on ``ops.arange``, ``stop_gradient``.

Each case is a tiny functional model run through ``harness.check_source`` (random Keras
weights mapped into the torch module with strict ``load_state_dict``): max |keras - torch|
<= 1e-5 and equal parameter counts.
"""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (before TensorFlow, see conftest.py)

from harness import check_source, max_error

TOL = 1e-5
HEADER = "import keras\nimport tensorflow as tf\nfrom keras import layers, ops\n\n\n"


def model_source(*body: str, classes: str = "") -> str:
    return HEADER + classes + "def build_model():\n" + "".join(f"    {line}\n" for line in body)


@pytest.fixture
def check(record_property):
    def run(src: str):
        checked = check_source(src)
        assert checked.comparisons, "the model has no output to compare"
        err = max_error(checked)
        record_property("max_abs_error", err)
        assert err <= TOL, f"max abs error {err:.3g} > {TOL}\n{checked.translation.text}"
        assert checked.keras_params == checked.torch_params, checked.translation.text
        return checked

    return run


@pytest.mark.parametrize("activation", ["ops.gelu", "keras.ops.nn.gelu", "keras.activations.gelu", "tf.nn.gelu",
                                        '"gelu"'])
def test_dense_activation_gelu_function_defaults(check, activation):
    """``activation=ops.gelu`` is the tanh approximation (ops.gelu's default), the others exact:
    inputs scaled x3 so the two forms differ by more than the tolerance."""
    checked = check(model_source("inp = keras.Input(shape=(6,))", "x = layers.Rescaling(3.0)(inp)",
                                 f"out = layers.Dense(5, activation={activation})(x)",
                                 "return keras.Model(inp, out)"))
    approximate = 'approximate="tanh"' in checked.translation.text
    assert approximate == ("ops" in activation), checked.translation.text


PATCH_ENCODER = '''class PatchEncoder(layers.Layer):
    def __init__(self, num_patches, projection_dim):
        super().__init__()
        self.num_patches = num_patches
        self.projection = layers.Dense(units=projection_dim)
        self.position_embedding = layers.Embedding(input_dim=num_patches, output_dim=projection_dim)

    def call(self, patch):
        positions = {positions}
        return self.projection(patch) + self.position_embedding(positions)


'''


@pytest.mark.parametrize("positions", [
    "ops.expand_dims(ops.arange(start=0, stop=self.num_patches, step=1), axis=0)",
    "ops.arange(start=0, stop=self.num_patches, step=1)",
    "ops.arange(self.num_patches)",
    "tf.range(self.num_patches)",
    "tf.range(0, limit=self.num_patches, delta=1)",
], ids=["expand_dims", "start_stop_step", "stop_only", "tf_range", "tf_range_limit"])
def test_position_embedding_of_arange_in_a_layer(check, positions):
    """keras.io's ViT PatchEncoder: an Embedding of the position ids, added to every sample.
    The ids are a non-persistent buffer (strict load_state_dict holds: no extra entry)."""
    checked = check(model_source("inp = keras.Input(shape=(6, 5))", "out = PatchEncoder(6, 4)(inp)",
                                 "return keras.Model(inp, out)",
                                 classes=PATCH_ENCODER.replace("{positions}", positions)))
    assert "persistent=False" in checked.translation.text


def test_embedding_of_arange_in_a_builder_is_a_frozen_module():
    """keras.io's TabTransformer: ``column_embedding(ops.arange(...))`` in a Functional builder.
    Keras runs that call once, eagerly, when the model is built: the embedding's weights are
    not the model's (``model.layers`` has no Embedding; never trained). A trainable nn.Embedding
    would train differently: the module is frozen (its weights are non-persistent buffers, out of
    the state_dict as out of Keras' checkpoint), and a warning says so (numeric check against
    Keras: tests/test_constant_layer_calls.py)."""
    from transpiler.translate import translate

    src = model_source("inp = keras.Input(shape=(3, 4))",
                       "column_embedding = layers.Embedding(input_dim=3, output_dim=4)",
                       "out = inp + column_embedding(ops.arange(start=0, stop=3, step=1))",
                       "return keras.Model(inp, out)")
    result = translate(src, "case.py")
    assert result.program.models and not result.stubs, [d.message for d in result.stubs]
    # (frozen as Keras keeps it: its weights non-persistent buffers, none of the state_dict's)
    assert "for module in self.column_embedding.modules():" in result.text, result.text
    assert "module.register_buffer(name, weight.detach(), persistent=False)" in result.text, result.text
    assert any("Keras computes it once when the model is built" in d.message and d.severity == "warning"
               for d in result.program.diagnostics), [d.message for d in result.program.diagnostics]


def test_arange_with_a_step_as_floats(check):
    """A float arange (dtype given), stepped, as an operand of arithmetic on a batched tensor."""
    checked = check(model_source("inp = keras.Input(shape=(5,))",
                                 'out = layers.Dense(3)(inp) * ops.arange(1, 7, 2, dtype="float32")',
                                 "return keras.Model(inp, out)"))
    assert "torch.arange(1, 7, 2, dtype=torch.float32)" in checked.translation.text


STOPPED = '''class Stopped(layers.Layer):
    def __init__(self):
        super().__init__()
        self.a = layers.Dense(3)
        self.b = layers.Dense(3)

    def call(self, x):
        return self.a(x) + tf.stop_gradient(self.b(x))


'''


@pytest.mark.parametrize("where", ["ops_in_builder", "tf_in_layer"])
def test_stop_gradient_forward_and_no_gradient(check, where):
    """The same value forward; in torch the stopped branch's Dense gets no gradient."""
    if where == "ops_in_builder":
        src = model_source("inp = keras.Input(shape=(5,))",
                           "out = layers.Dense(3)(inp) + ops.stop_gradient(layers.Dense(3)(inp))",
                           "return keras.Model(inp, out)")
    else:
        src = model_source("inp = keras.Input(shape=(5,))", "out = Stopped()(inp)", "return keras.Model(inp, out)",
                           classes=STOPPED)
    checked = check(src)
    assert ".detach()" in checked.translation.text
    from transpiler import verify

    module = verify.load_generated(checked.translation.text).build_model()
    module(torch.randn(2, 5)).sum().backward()
    grads = {name: p.grad is not None for name, p in module.named_parameters()}
    assert sorted(grads.values()) == [False, False, True, True], grads


DISTANCE = '''def euclidean_distance(vects):
    x, y = vects
    sum_square = ops.sum(ops.square(x - y), axis=1, keepdims=True)
    return ops.sqrt(ops.maximum(sum_square, {eps}))


'''


@pytest.mark.parametrize("eps", ["keras.backend.epsilon()", "keras.config.epsilon()"])
def test_backend_epsilon_is_kerass_fuzz_factor(check, eps):
    """keras.io's siamese_contrastive: ``ops.maximum(x, keras.backend.epsilon())`` in a Lambda;
    the two towers are equal for one sample pair so the epsilon floor decides that output."""
    checked = check(model_source("a = keras.Input(shape=(4,))", "b = keras.Input(shape=(4,))",
                                 "dense = layers.Dense(3)",
                                 "out = layers.Lambda(euclidean_distance)([dense(a), dense(b)])",
                                 "return keras.Model([a, b], out)",
                                 classes=DISTANCE.replace("{eps}", eps)))
    assert "min=1e-07" in checked.translation.text


STRIDE_OR_IDENTITY = '''class Block(layers.Layer):
    def __init__(self, stride):
        super().__init__()
        self.dense = layers.Dense(3)
        self.stride_layer = layers.AveragePooling1D(stride) if stride > 1 else tf.identity

    def call(self, x):
        return self.stride_layer(self.dense(x))


'''


def test_tf_identity_as_a_layer(check):
    """keras.io's involution: ``tf.identity`` where a stride of 1 needs no pooling layer."""
    check(model_source("inp = keras.Input(shape=(4, 5))", "out = Block(1)(inp)", "return keras.Model(inp, out)",
                       classes=STRIDE_OR_IDENTITY))


POSITION_WEIGHT = '''class PositionEmbedding(layers.Layer):
    def __init__(self, sequence_length):
        super().__init__()
        self.sequence_length = sequence_length

    def build(self, input_shape):
        self.position_embeddings = self.add_weight(
            name="embeddings", shape=[self.sequence_length, input_shape[-1]], initializer="glorot_uniform")

    def call(self, inputs, start_index=0):
        shape = keras.ops.shape(inputs)
        position_embeddings = keras.ops.convert_to_tensor(self.position_embeddings)
        position_embeddings = keras.ops.slice(position_embeddings, (start_index, 0), ({rows}, shape[-1]))
        return keras.ops.broadcast_to(position_embeddings, shape)


'''


@pytest.mark.parametrize("length, rows", [(6, "shape[-2]"), (9, "shape[-2]")], ids=["whole", "trimmed"])
def test_position_weight_sliced_and_broadcast_over_the_batch(check, length, rows):
    """keras.io's mlp_image_classification PositionEmbedding: ops.slice of a weight (trimmed to
    the sequence when the weight is longer), ops.broadcast_to the input's shape."""
    checked = check(model_source("inp = keras.Input(shape=(6, 5))", "x = layers.Dense(4)(inp)",
                                 f"out = x + PositionEmbedding({length})(x)", "return keras.Model(inp, out)",
                                 classes=POSITION_WEIGHT.replace("{rows}", rows)))
    assert ".expand(" in checked.translation.text


def test_slice_of_a_batched_tensor(check):
    check(model_source("inp = keras.Input(shape=(6, 5))",
                       "out = ops.slice(layers.Dense(4)(inp), (0, 1, 0), (-1, 3, 2))",
                       "return keras.Model(inp, out)"))


FNET = '''class FNetLayer(layers.Layer):
    def __init__(self, embedding_dim):
        super().__init__()
        self.ffn = layers.Dense(units=embedding_dim, activation="gelu")
        self.normalize = layers.LayerNormalization(epsilon=1e-6)

    def call(self, inputs):
        x = keras.ops.fft2((inputs, {imag}))[{part}]
        return self.normalize(self.ffn(x + inputs))


'''


@pytest.mark.parametrize("imag, part", [("keras.ops.zeros_like(inputs)", 0), ("inputs * 0.5", 0),
                                        ("inputs * 0.5", 1)], ids=["real_input", "complex_real", "complex_imag"])
def test_fft2_token_mixing(check, imag, part):
    """keras.io's FNet (mlp_image_classification): the real part of the 2-D FFT of the tokens."""
    checked = check(model_source("inp = keras.Input(shape=(6, 5))", "x = layers.Dense(4)(inp)",
                                 "out = FNetLayer(4)(x)", "return keras.Model(inp, out)",
                                 classes=FNET.replace("{imag}", imag).replace("{part}", str(part))))
    assert "torch.fft.fft2(torch.complex(" in checked.translation.text


def test_initializers_get_of_a_name_is_that_initializer():
    """keras.io's PositionEmbedding keeps ``keras.initializers.get(initializer)`` for its
    add_weight: the named initializer is reproduced (was "not reproduced; glorot_uniform used")."""
    from transpiler.translate import translate

    cls = POSITION_WEIGHT.replace("{rows}", "shape[-2]").replace(
        'initializer="glorot_uniform")', "initializer=keras.initializers.get(\"ones\"))")
    result = translate(model_source("inp = keras.Input(shape=(6, 5))", "x = layers.Dense(4)(inp)",
                                    "out = x + PositionEmbedding(6)(x)", "return keras.Model(inp, out)",
                                    classes=cls), "case.py")
    assert "nn.init.ones_(self.position_embeddings)" in result.text
    assert not [d for d in result.program.diagnostics if "not reproduced" in d.message]
