"""PyTorch form of Keras' random geometric augmentation layers (RandomRotation, RandomZoom,
RandomTranslation): in training a call of the runtime helper in ``runtime/torch/augment.py``
(Keras' draws and TensorFlow's resampling), the identity at inference, as in Keras.

``affine_statements`` is called by the ``random_augmentation`` emitter (ops_norm.py); the
script printer copies the helpers a model calls (``helpers_used``).
"""

from __future__ import annotations

import re

from transpiler.printers.code import lit

RUNTIME = "torch.augment"
#: Keras layer → the runtime helper that draws and applies its transform in training
HELPERS = {"RandomRotation": "keras_random_rotation", "RandomZoom": "keras_random_zoom",
           "RandomTranslation": "keras_random_translation"}
_CALLED = re.compile(r"\b(" + "|".join(HELPERS.values()) + r")\(")


def _bounds(factor, low_bound: float = -1.0) -> tuple[float, float]:
    """Keras' ``_set_factor``: a pair sorted, a number f as [max(-|f|, low_bound), |f|]."""
    if isinstance(factor, (list, tuple)):
        lower, upper = sorted(float(f) for f in factor)
        return lower, upper
    f = abs(float(factor))
    return max(-f, low_bound), f


def faithful(kind: str, config: dict) -> bool:
    """Whether the layer's training-time transform has a torch form here (every fill mode
    and interpolation Keras accepts for these layers)."""
    return kind in HELPERS and config.get("fill_mode", "reflect") in ("reflect", "wrap", "constant", "nearest") \
        and config.get("interpolation", "bilinear") in ("bilinear", "nearest")


def affine_statements(kind: str, config: dict, o: str, channels_last: bool) -> list[str] | None:
    """The forward statements applying the layer to ``o`` (a 4-d batch of images) in
    training, or None when it has no torch form here."""
    if not faithful(kind, config):
        return None
    tail = (f"{lit(config.get('interpolation', 'bilinear'))}, {lit(config.get('fill_mode', 'reflect'))}, "
            f"{lit(float(config.get('fill_value', 0.0)))}" + (", channels_last=True" if channels_last else ""))
    if kind == "RandomRotation":
        lower, upper = _bounds(config["factor"])
        lower, upper = lower * 360.0, upper * 360.0
        head = [f"# RandomRotation in training: one angle per image in [{lower}, {upper}] degrees, as in Keras"]
        call = f"keras_random_rotation({o}, {lit(lower)}, {lit(upper)}, {tail})"
    elif kind == "RandomZoom":
        height = _bounds(config["height_factor"])
        width = None if config.get("width_factor") is None else _bounds(config["width_factor"])
        head = [f"# RandomZoom in training: one zoom per image, height in 1 + {list(height)}, width in "
                f"{'1 + ' + str(list(width)) if width else 'the same'}, as in Keras"]
        call = f"keras_random_zoom({o}, {lit(height)}, {lit(width)}, {tail})"
    else:
        height, width = _bounds(config["height_factor"]), _bounds(config["width_factor"])
        head = [f"# RandomTranslation in training: one shift per image, {list(height)} of the height, "
                f"{list(width)} of the width, as in Keras"]
        call = f"keras_random_translation({o}, {lit(height)}, {lit(width)}, {tail})"
    return head + ["if self.training:", f"    {o} = {call}"]


def helpers_used(text: str) -> list[str]:
    """The runtime helpers generated code calls, in a fixed order."""
    called = set(_CALLED.findall(text))
    return [name for name in HELPERS.values() if name in called]
