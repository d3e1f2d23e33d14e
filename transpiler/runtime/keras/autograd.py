"""torch's autograd for generated Keras programs whose loss is built from forward passes made
before it, in other calls (a reinforcement-learning episode's log-probabilities, gathered step
by step, then one update): TensorFlow only, as Keras 3 has no backend-neutral gradient tape.
"""

import tensorflow as tf


class RecordingTape:
    """A tf.GradientTape that records from the program's start, and again from every
    gradient() on, as torch records every computation on tensors that need gradients;
    gradient() differentiates what was recorded since the last one (backward() frees the
    graph in torch too)."""

    def __init__(self):
        self._start()

    def _start(self):
        self._tape = tf.GradientTape()
        self._tape.__enter__()

    def gradient(self, target, sources):
        self._tape.__exit__(None, None, None)
        try:
            return self._tape.gradient(target, sources)
        finally:
            self._start()

    def stop_recording(self):
        """torch.no_grad(): what runs under it is not recorded."""
        return self._tape.stop_recording()


autograd_tape = RecordingTape()
