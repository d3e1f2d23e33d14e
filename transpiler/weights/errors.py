"""The one error type of checkpoint handling: reported as a paragraph, exit 2."""

from __future__ import annotations


class CheckpointError(Exception):
    """A checkpoint that cannot be read, does not match the model, or is unsafe."""
