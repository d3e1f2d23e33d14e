"""Small text helpers of the training printer (printers/torch/training.py) shared with the
wrapper-model printer (wrapper_training.py): arrays moved into a layout where they enter a
model, and literal arguments."""

from __future__ import annotations

from transpiler.ir import training as T
from transpiler.ir.layout import Layout, channels_last_of, is_channels_first
from transpiler.printers.code import lit


class OneChannelLayout(str):
    """The layout of a model input of one channel: Keras' functional model adds that axis to
    an array one axis short of it (runtime/torch/layouts.py ``one_channel_layout``)."""


def _to_layout(code: str, layout: str | None) -> str:
    """``code`` (a channels-last array) permuted into ``layout`` once, where it enters."""
    if layout is None or not is_channels_first(layout):
        return code
    perm = Layout(channels_last_of(layout), layout).perm
    if isinstance(layout, OneChannelLayout):
        return f"one_channel_layout({code}, {lit(perm)})"
    return f"np.transpose({code}, {lit(perm)})"


def _from_layout(code: str, layout: str | None) -> str:
    if layout is None or not is_channels_first(layout):
        return code
    perm = Layout(layout, channels_last_of(layout)).perm
    return f"np.transpose({code}, {lit(perm)})"


def _arg_text(value) -> str:
    return value.text if isinstance(value, T.Code) else lit(value)
