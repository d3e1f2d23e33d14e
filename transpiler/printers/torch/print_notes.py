"""What printing a model noted about its nodes and graph, read back when the script reports
(typed printer-side records instead of free ``meta`` keys on the IR, issue 17 item 6)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any


@dataclass
class PrintNotes:
    """The printer's notes on one node or graph."""

    #: a node's initializers torch's code does not reproduce (``"initializer='x' not reproduced; ..."``)
    init_warnings: list[str] = field(default_factory=list)
    #: a graph's regularized weights that are not one torch tensor (``"lstm: bias_regularizer"``)
    untranslated_regularizers: list[str] = field(default_factory=list)


#: node or graph → its notes, as long as it lives (they are the IR's objects; the notes are not)
_NOTES: weakref.WeakKeyDictionary[Any, PrintNotes] = weakref.WeakKeyDictionary()


def notes(obj: Any) -> PrintNotes:
    """The notes on ``obj`` (a Node or a Graph), made empty on first use."""
    found = _NOTES.get(obj)
    if found is None:
        found = _NOTES[obj] = PrintNotes()
    return found


__all__ = ["PrintNotes", "notes"]
