"""torch's losses that Keras lacks, for generated Keras programs (PyTorch -> Keras).
"""

import keras


class SparseCategoricalCrossentropyWithSmoothing(keras.losses.Loss):
    """torch's CrossEntropyLoss(label_smoothing=s) on class indices: Keras' categorical
    crossentropy with label_smoothing=s on the one-hot targets."""

    def __init__(self, label_smoothing, from_logits=True, **kwargs):
        super().__init__(**kwargs)
        self.label_smoothing = label_smoothing
        self.from_logits = from_logits

    def call(self, y_true, y_pred):
        classes = keras.ops.shape(y_pred)[-1]
        y_true = keras.ops.reshape(keras.ops.cast(y_true, "int32"), keras.ops.shape(y_pred)[:-1])
        return keras.losses.categorical_crossentropy(
            keras.ops.one_hot(y_true, classes, dtype=y_pred.dtype), y_pred,
            from_logits=self.from_logits, label_smoothing=self.label_smoothing)


class NLLLoss(keras.losses.Loss):
    """torch's NLLLoss: minus the log-probability the output gives the target class."""

    def call(self, y_true, y_pred):
        y_true = keras.ops.reshape(keras.ops.cast(y_true, "int32"), keras.ops.shape(y_pred)[:-1])
        picked = keras.ops.take_along_axis(y_pred, keras.ops.expand_dims(y_true, -1), axis=-1)
        return -keras.ops.squeeze(picked, -1)


class KLDivergenceFromLogProbabilities(keras.losses.Loss):
    """torch's KLDivLoss(reduction="batchmean"): the output holds log-probabilities, the
    target probabilities; a zero target contributes nothing."""

    def call(self, y_true, y_pred):
        y_true = keras.ops.cast(y_true, y_pred.dtype)
        safe = keras.ops.maximum(y_true, 1e-30)
        terms = keras.ops.where(y_true > 0, y_true * (keras.ops.log(safe) - y_pred), 0.0)
        return keras.ops.sum(terms, axis=-1)
