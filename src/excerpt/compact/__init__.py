"""Reversible compaction of tool output (JSON, logs, diffs) and exact expansion.

In: a payload's bytes. Out: a compacted view with a marker in place of every elision, the
id its original is stored under (durably, before the id is returned), and what it saves in
bytes and o200k tokens; ``expand`` gives back the original, or the lines, matches or JSON
part asked for, byte for byte, or says it was ``evicted`` or is ``corrupt``. Never touches a
repository.
"""

from __future__ import annotations

from excerpt.compact.api import (
    CLAUDE_CODE_SPILL_CHARS,
    Compaction,
    Expansion,
    compact,
    detect_kind,
    expand,
)
from excerpt.compact.store import OriginalCorrupt, OriginalEvicted, OriginalUnknown, Store

__all__ = [
    "CLAUDE_CODE_SPILL_CHARS",
    "Compaction",
    "Expansion",
    "OriginalCorrupt",
    "OriginalEvicted",
    "OriginalUnknown",
    "Store",
    "compact",
    "detect_kind",
    "expand",
]
