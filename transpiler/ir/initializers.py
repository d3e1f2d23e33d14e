"""A Keras initializer object written in the source (``keras.initializers.RandomNormal(
stddev=0.02)``), kept with its static arguments so a printer can draw the same values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


#: the arguments each initializer takes by position
POSITIONAL = {"RandomNormal": ("mean", "stddev", "seed"), "TruncatedNormal": ("mean", "stddev", "seed"),
              "RandomUniform": ("minval", "maxval", "seed"), "Constant": ("value",),
              "VarianceScaling": ("scale", "mode", "distribution", "seed")}


@dataclass(frozen=True)
class Initializer:
    """``keras.initializers.<name>(**params)``; ``params`` holds only static values."""

    name: str
    params: dict[str, Any] = field(default_factory=dict, hash=False)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"keras.initializers.{self.name}({args})"

    def snake_name(self) -> str:
        """``GlorotUniform`` → ``glorot_uniform`` (Keras' string alias)."""
        return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(self.name))

    def distribution(self) -> tuple | None:
        """("normal", mean, stddev), ("uniform", low, high), ("truncated_normal", mean, stddev)
        or ("constant", value) with Keras' defaults for the missing arguments; None for an
        initializer of another kind (or arguments known only at run time)."""
        p = {k: v for k, v in self.params.items() if k != "seed"}
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p.values()):
            return None
        if self.name == "RandomNormal" and set(p) <= {"mean", "stddev"}:
            return ("normal", float(p.get("mean", 0.0)), float(p.get("stddev", 0.05)))
        if self.name == "TruncatedNormal" and set(p) <= {"mean", "stddev"}:
            return ("truncated_normal", float(p.get("mean", 0.0)), float(p.get("stddev", 0.05)))
        if self.name == "RandomUniform" and set(p) <= {"minval", "maxval"}:
            return ("uniform", float(p.get("minval", -0.05)), float(p.get("maxval", 0.05)))
        if self.name == "Constant" and set(p) <= {"value"}:
            return ("constant", float(p.get("value", 0.0)))
        return None

    def variance_scaling(self) -> tuple[float, str, str] | None:
        """``VarianceScaling(scale, mode, distribution)`` with Keras' defaults (1.0, "fan_in",
        "truncated_normal"): (scale, "in" / "out" / "avg", "normal" (truncated at two standard
        deviations, as the printers' table names it) / "untruncated_normal" / "uniform"); None
        for another initializer or arguments Keras refuses."""
        p = self.params
        if self.name != "VarianceScaling" or set(p) - {"scale", "mode", "distribution", "seed"}:
            return None
        scale, mode, dist = p.get("scale", 1.0), p.get("mode", "fan_in"), p.get("distribution", "truncated_normal")
        if not isinstance(scale, (int, float)) or isinstance(scale, bool) or scale <= 0 or \
                mode not in ("fan_in", "fan_out", "fan_avg") or \
                dist not in ("truncated_normal", "normal", "untruncated_normal", "uniform"):
            return None
        return float(scale), mode[4:], {"truncated_normal": "normal"}.get(dist, dist)
