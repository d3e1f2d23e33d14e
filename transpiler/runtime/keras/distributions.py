"""torch.distributions for generated Keras programs (PyTorch -> Keras), on keras.ops and
keras.random (any backend).
"""

import keras
import numpy as np


class Categorical:
    """torch.distributions.Categorical over the last axis of probs (normalised to sum to 1)
    or logits (log-probabilities up to a constant): sample(), log_prob(), entropy(), with
    torch's arithmetic (probabilities clamped to [eps, 1 - eps] before the log)."""

    def __init__(self, probs=None, logits=None):
        if (probs is None) == (logits is None):
            raise ValueError("Categorical takes either probs or logits")
        if probs is not None:
            probs = keras.ops.convert_to_tensor(probs)
            self.probs = probs / keras.ops.sum(probs, axis=-1, keepdims=True)
            eps = float(np.finfo(keras.backend.standardize_dtype(self.probs.dtype)).eps)
            self.logits = keras.ops.log(keras.ops.clip(self.probs, eps, 1.0 - eps))
        else:
            logits = keras.ops.convert_to_tensor(logits)
            self.logits = logits - keras.ops.logsumexp(logits, axis=-1, keepdims=True)
            self.probs = keras.ops.softmax(self.logits, axis=-1)

    def sample(self, sample_shape=()):
        """Class indices (int64), of shape sample_shape + the batch shape."""
        classes = self.logits.shape[-1]
        flat = keras.ops.reshape(keras.ops.stop_gradient(self.logits), (-1, classes))
        count = 1
        for size in sample_shape:
            count *= size
        drawn = keras.random.categorical(flat, max(count, 1), dtype="int64")  # (batch, count)
        drawn = keras.ops.transpose(drawn)
        return keras.ops.reshape(drawn, tuple(sample_shape) + tuple(self.logits.shape[:-1]))

    def log_prob(self, value):
        value = keras.ops.cast(keras.ops.convert_to_tensor(value), "int32")
        batch = np.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape[:-1]))
        value = keras.ops.broadcast_to(value, batch)
        logits = keras.ops.broadcast_to(self.logits, batch + tuple(self.logits.shape[-1:]))
        picked = keras.ops.take_along_axis(logits, keras.ops.expand_dims(value, -1), axis=-1)
        return keras.ops.squeeze(picked, -1)

    def entropy(self):
        return -keras.ops.sum(self.logits * self.probs, axis=-1)
