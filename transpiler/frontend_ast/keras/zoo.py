"""``keras.applications`` networks (``keras.applications.ResNet50V2(weights=None, ...)``) as
Functional models the reader builds like the script's own builders.

A program that takes an application network as its encoder (keras.io's
supervised_contrastive_learning, semantic_image_clustering, fixres) needs the network's
structure: its layers under Keras' own names (``conv1_conv``, ``conv2_block1_preact_bn``,
``post_bn``), so the layer names, ``get_layer(...)`` and the converted checkpoints line up.
The definitions below are Keras' (``keras/src/applications/resnet.py`` and ``resnet_v2.py``,
Keras 3) in the form the reader reads: the same layers in the same order, with the same
arguments and names (channels_last). Pretrained weights (``weights="imagenet"``, Keras'
default, or a file) are not translated: the constructor is refused with a message saying so.

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.interp import Env, FunctionRef
from transpiler.frontend_ast.interp.values import Unsupported

_SOURCE = '''
def _zoo_block_v1(x, filters, kernel_size=3, stride=1, conv_shortcut=True, name=None):
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="same", name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_3_bn")(x)
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    x = layers.Activation("relu", name=f"{name}_out")(x)
    return x


def _zoo_stack_v1(x, filters, blocks, stride1=2, name=None):
    x = _zoo_block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = _zoo_block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def _zoo_block_v2(x, filters, kernel_size=3, stride=1, conv_shortcut=False, name=None):
    preact = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_preact_bn")(x)
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = layers.Add(name=f"{name}_out")([shortcut, x])
    return x


def _zoo_stack_v2(x, filters, blocks, stride1=2, name=None):
    x = _zoo_block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = _zoo_block_v2(x, filters, name=f"{name}_block{i}")
    x = _zoo_block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")
    return x


def _zoo_resnet(stacks, preact, input_shape, include_top, pooling, classes, classifier_activation, name):
    img_input = layers.Input(shape=input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
    if not preact:
        x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name="conv1_bn")(x)
        x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for filters, blocks, stride1, label in stacks:
        if preact:
            x = _zoo_stack_v2(x, filters, blocks, stride1=stride1, name=label)
        else:
            x = _zoo_stack_v1(x, filters, blocks, stride1=stride1, name=label)
    if preact:
        x = layers.BatchNormalization(axis=3, epsilon=1.001e-5, name="post_bn")(x)
        x = layers.Activation("relu", name="post_relu")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D(name="max_pool")(x)
    return Model(img_input, x, name=name)
'''


def _stacks(v2: bool, counts: tuple) -> list:
    """Keras' ``stack_fn`` of each network: (filters, blocks, stride1, name) per stage (V1:
    stride 1 in the first stage; V2: stride 2 everywhere but the last, where it is 1)."""
    strides = (2, 2, 2, 1) if v2 else (1, 2, 2, 2)
    return [(f, n, s, f"conv{i + 2}") for i, (f, n, s) in enumerate(zip((64, 128, 256, 512), counts, strides))]


#: constructor → (ResNetV2?, blocks per stage, Keras' default model name)
RESNETS = {
    "ResNet50": (False, (3, 4, 6, 3), "resnet50"),
    "ResNet101": (False, (3, 4, 23, 3), "resnet101"),
    "ResNet152": (False, (3, 8, 36, 3), "resnet152"),
    "ResNet50V2": (True, (3, 4, 6, 3), "resnet50v2"),
    "ResNet101V2": (True, (3, 4, 23, 3), "resnet101v2"),
    "ResNet152V2": (True, (3, 8, 36, 3), "resnet152v2"),
}
_PARAMS = ("include_top", "weights", "input_tensor", "input_shape", "pooling", "classes",
           "classifier_activation", "name")

_MODULE: cst.Module | None = None


def is_application(name: str) -> bool:
    """``applications.ResNet50V2`` / ``applications.resnet_v2.ResNet50V2``: defined here."""
    return name.startswith("applications.") and name.rsplit(".", 1)[-1] in RESNETS


def _functions(fe) -> dict:
    """The definitions as the reader's functions, closing over an environment where
    ``layers`` and ``Model`` are Keras' (parsed once per reader)."""
    from transpiler.frontend_ast.keras.values import resolve_api

    global _MODULE
    if _MODULE is None:
        _MODULE = cst.parse_module(_SOURCE)
    found = getattr(fe, "zoo_functions", None)
    if found is None:
        env = Env()
        env.set("layers", resolve_api("keras.layers"))
        env.set("Model", resolve_api("keras.Model"))
        found = {s.name.value: FunctionRef(s, env) for s in _MODULE.body if isinstance(s, cst.FunctionDef)}
        for name, ref in found.items():
            env.set(name, ref)
        fe.zoo_functions = found
    return found


def construct(fe, name: str, args, kwargs, span):
    """``keras.applications.<name>(...)``: the network as a Functional model of the reader."""
    last = name.rsplit(".", 1)[-1]
    v2, counts, default_name = RESNETS[last]
    if len(args) > len(_PARAMS) or set(kwargs) - set(_PARAMS):
        raise Unsupported(f"keras.applications.{last}(): arguments other than {', '.join(_PARAMS)}")
    bound = {"include_top": True, "weights": "imagenet", "input_tensor": None, "input_shape": None,
             "pooling": None, "classes": 1000, "classifier_activation": "softmax", "name": default_name}
    bound.update(zip(_PARAMS, args))
    bound.update(kwargs)
    if bound["weights"] is not None:
        raise Unsupported(f"keras.applications.{last} with pretrained weights (weights={bound['weights']!r}): "
                          "the architecture translates, the downloaded weights do not (build it with "
                          "weights=None and convert your own checkpoint with --weights)")
    if bound["input_tensor"] is not None:
        raise Unsupported(f"keras.applications.{last}(input_tensor=...) is not translated yet (call the "
                          "model on the tensor instead)")
    shape = bound["input_shape"]
    if shape is None:  # Keras' obtain_input_shape (channels_last)
        shape = (224, 224, 3) if bound["include_top"] else (None, None, 3)
    fn = _functions(fe)["_zoo_resnet"]
    call = [_stacks(v2, counts), v2, tuple(shape), bound["include_top"], bound["pooling"], bound["classes"],
            bound["classifier_activation"], bound["name"]]
    model, _ = fe._call_function(fn, call, {}, builder_probe=False)
    return model


def construct_api(fe, func, args, kwargs, node, span):
    """The reader's hook for an ``ApiRef("application", name)`` call (keras/expressions.py)."""
    return construct(fe, func.name, list(args), dict(kwargs), span)


def defines(func) -> bool:
    """``func`` is one of the definitions here: its layers are the network's own, flat as in
    Keras' Functional model (``conv2_block1_1_conv``), not a helper module of the script."""
    return _MODULE is not None and isinstance(func, FunctionRef) and any(func.node is s for s in _MODULE.body)
