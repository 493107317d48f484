"""Rank files and lines for a task.

In: the task text, an ``IndexView`` and optional changed paths and graph. Out: ranked file
candidates with reasons and line anchors. Pure apart from the index queries: never reads a
workspace file, never writes.

Names load when first used: reading a task (``excerpt.rank.task``, what a hook does for every
prompt) does not load the signals and the fusion.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from excerpt.rank.score import RankedFile, rank_files
    from excerpt.rank.signals import Anchor, Reason
    from excerpt.rank.task import LineRef, Task, analyze_task

__all__ = ["Anchor", "LineRef", "RankedFile", "Reason", "Task", "analyze_task", "rank_files"]

_WHERE = {
    "RankedFile": "excerpt.rank.score",
    "rank_files": "excerpt.rank.score",
    "Anchor": "excerpt.rank.signals",
    "Reason": "excerpt.rank.signals",
    "LineRef": "excerpt.rank.task",
    "Task": "excerpt.rank.task",
    "analyze_task": "excerpt.rank.task",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'excerpt.rank' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
