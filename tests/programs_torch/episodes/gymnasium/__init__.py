"""A stand-in for gymnasium in the episode tests (tests/test_torch_episodes_to_keras.py): a
CartPole-like environment with 4 observations and 2 actions whose episodes last ``LENGTH``
steps whatever the actions, with a reward of 1 per step; its observations are a fixed
sequence. ``reward_threshold`` 0: a program stops after its first update ("solved")."""

import numpy as np

LENGTH = 6


class _Spec:
    reward_threshold = 0.0


class _CartPole:
    spec = _Spec()

    def __init__(self):
        self._rng = np.random.default_rng(0)
        self._t = 0

    def reset(self, seed=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._t = 0
        return self._observation(), {}

    def _observation(self):
        return self._rng.uniform(-0.05, 0.05, size=4)  # (float64, as gymnasium's CartPole gives)

    def step(self, action):
        if type(action) is not int or action not in (0, 1):
            raise AssertionError(f"{action!r} ({type(action).__name__}) invalid")
        self._t += 1
        return self._observation(), 1.0, self._t >= LENGTH, False, {}

    def render(self):
        pass


def make(name, render_mode=None):
    return _CartPole()
