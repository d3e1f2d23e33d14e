"""torch module conventions for generated Keras programs (PyTorch -> Keras): a module's own
Python attributes, a module called on one sample without a batch axis.
"""

import keras


def with_attributes(model, **attributes):
    """The torch module's own Python attributes (``self.rewards = []`` in its ``__init__``),
    set on the Keras model that stands for it; returns the model."""
    for name, value in attributes.items():
        setattr(model, name, value)
    return model


def call_module(model, inputs, training=None):
    """model(inputs) as a torch module takes it: a sample without the batch axis (one axis
    fewer than the model's input) is run as a batch of one and comes back without it."""
    expected = len(model.inputs[0].shape) if getattr(model, "inputs", None) else None
    if expected is None and getattr(model, "input_ranks", None):  # a subclass built on its first call
        expected = model.input_ranks[0]
    if expected is not None and len(keras.ops.shape(inputs)) == expected - 1:
        outputs = model(keras.ops.expand_dims(inputs, 0), training=training)
        return keras.tree.map_structure(lambda t: t[0], outputs)
    return model(inputs, training=training)


def cast_model(model, dtype):
    """``model.double()`` / ``model.half()``: the model with its weights and computations in
    ``dtype`` (Keras variables keep the dtype they were made with, so the model is made again:
    each layer from its config with that dtype, under that dtype policy for the layers a
    subclass makes itself) and the same weights, cast. torch casts the module in place; the
    program's name is bound to the cast model (the old one is not used after it)."""
    saved = keras.config.dtype_policy()
    keras.config.set_dtype_policy(dtype)
    try:
        def clone_layer(layer):
            return layer.__class__.from_config({**layer.get_config(), "dtype": dtype})

        if isinstance(model, keras.Sequential) or type(model).__name__ == "Functional":
            clone = keras.models.clone_model(model, clone_function=clone_layer)
        else:  # (a subclass: made again from its config; built as the model was, when it was)
            clone = model.__class__.from_config(model.get_config())
            if model.built and model.weights:
                clone.build_from_config(model.get_build_config())
    finally:
        keras.config.set_dtype_policy(saved)
    if model.weights:
        clone.set_weights([keras.ops.convert_to_numpy(w).astype(dtype) for w in model.get_weights()])
    return clone
