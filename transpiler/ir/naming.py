"""Naming conventions of the frameworks that the readers and the checkpoint writers share."""

from __future__ import annotations

import re


def keras_auto_name(class_name: str) -> str:
    """Keras' ``to_snake_case`` of a class name (the prefix of auto-generated names)."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", class_name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()
