"""Rank files and lines for a task.

In: the task text, an ``IndexView`` and optional changed paths and graph. Out: ranked file
candidates with reasons and line anchors. Pure apart from the index queries: never reads a
workspace file, never writes.
"""

from excerpt.rank.score import Anchor, Candidate, Reason, rank_files
from excerpt.rank.task import Frame, Task, analyze_task

__all__ = ["Anchor", "Candidate", "Frame", "Reason", "Task", "analyze_task", "rank_files"]
