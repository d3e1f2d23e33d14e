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
