"""Whether a prompt reads as a task, and whether it is the task already seeded. Pure.

A seed is worth its tokens only for a prompt that names work on the code ("the refund
webhook retries twice", a traceback, an issue pasted whole), not for a follow-up ("yes", "go
on", "run the tests", "commit it") or a client command (``/compact``, ``!ls``). A prompt that
repeats the task already seeded in the session gets no second seed: its regions are in the
model's context already.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from excerpt.rank.task import analyze_task

__all__ = ["PromptKind", "classify_prompt", "same_task"]

# fewer task terms than this (beyond a follow-up's words), and no path, frame or code-looking
# name: a follow-up ("fix the bug in munlock" has two: a task)
MIN_TERMS = 2
# a prompt sharing this share of its terms with the seeded task is that task again
SAME_TASK = 0.6
# Words of a follow-up: a reply, a go-ahead, a request to run, test, commit, explain or undo
# what was done. A prompt of these words alone (and filler) carries no new task.
_FOLLOW_UP_WORDS = """
yes yeah yep ok okay sure fine great good nice thanks thank thx cool perfect right no nope
please pls go ahead on continue proceed keep going next more again retry redo undo revert
do it that this those these them now then also and but so just same way try run rerun
test tests build lint commit push merge ship stop wait done finish finished looks look
lgtm sounds agreed correct wrong why what how explain summarize summary show me us you
can could would should will let lets let's all everything rest remaining one ones other
step steps with without instead first last previous above below the a an to of for in
is its was are be been approve approved fix fixes up there here works work
"""
_FOLLOW_UP = frozenset(_FOLLOW_UP_WORDS.split())
_COMMAND = re.compile(r"\A\s*[/!#]")  # a client command: /compact, !ls, # memory


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptKind:
    """What a prompt is: a task (its folded terms) or not (why not)."""

    task: bool
    terms: frozenset[str]
    why: str  # for the log: "task", "empty", "command", "follow-up"


def classify_prompt(prompt: str) -> PromptKind:
    """Classify ``prompt``: a task to seed, or a follow-up / command / empty prompt."""
    if not prompt.strip():
        return PromptKind(task=False, terms=frozenset(), why="empty")
    if _COMMAND.match(prompt):
        return PromptKind(task=False, terms=frozenset(), why="command")
    analysed = analyze_task(prompt)
    terms = frozenset(analysed.terms)
    words = {w.lower() for w in re.findall(r"[A-Za-z']+", prompt)}
    pointed = bool(analysed.paths or analysed.frames or analysed.identifiers)
    if not pointed and (words <= _FOLLOW_UP or len(terms - _FOLLOW_UP) < MIN_TERMS):
        return PromptKind(task=False, terms=terms, why="follow-up")
    return PromptKind(task=True, terms=terms, why="task")


def same_task(terms: frozenset[str], seeded: frozenset[str]) -> bool:
    """Whether a prompt of ``terms`` is the task seeded with ``seeded`` again: most of its
    terms are that task's."""
    if not terms or not seeded:
        return False
    return len(terms & seeded) / len(terms) >= SAME_TASK
