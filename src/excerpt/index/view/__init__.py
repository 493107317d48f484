"""Read-only queries over an index, for ranking and packing. No file reads, and no writes
but one: asking that a file whose rows fail their digest be read again.

``IndexView`` is the seam (``protocol``, with the records it answers with): ``StoreView``
answers it from the SQLite index (``sqlite``), ``MemoryView`` from values in memory (tests,
and a recorded benchmark replayed without any index; ``memory``), and ``RecordingView``
wraps another view and keeps every answer it gave, so a ``MemoryView`` can give them again
(``recording``, with the JSON form of a replayable view).
"""

from __future__ import annotations

from excerpt.index.history import PastCommit
from excerpt.index.view.memory import MemoryView, ReplayMiss
from excerpt.index.view.protocol import (
    FileInfo,
    ImportEdge,
    IndexView,
    SymbolSpan,
    edges_near,
    touching,
)
from excerpt.index.view.recording import RecordingView, view_from_dict, view_to_dict
from excerpt.index.view.sqlite import StoreView

__all__ = [
    "FileInfo",
    "ImportEdge",
    "IndexView",
    "MemoryView",
    "PastCommit",
    "RecordingView",
    "ReplayMiss",
    "StoreView",
    "SymbolSpan",
    "edges_near",
    "touching",
    "view_from_dict",
    "view_to_dict",
]
