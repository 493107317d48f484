"""Logs: head and tail kept, repeated lines folded with a count, and the long stretches
between the lines that matter (errors, warnings, stack traces, failing tests, which are
never elided) left out, each with a marker naming its lines."""

from __future__ import annotations

from itertools import accumulate

from excerpt.compact.signals import important_lines, normalise
from excerpt.compact.view import Elision

__all__ = ["log_elisions"]

HEAD = 10
TAIL = 10
MIN_RUN = 3  # a marker costs about a line: fewer lines are not worth one
CONTEXT_AFTER = 2  # a compiler's source and caret lines follow its warning


def log_elisions(lines: list[bytes]) -> list[Elision]:
    """The elisions of a log given as its lines (each with its newline)."""
    n = len(lines)
    if n <= HEAD + TAIL + MIN_RUN:
        return []
    text = [line.decode("utf-8", "replace").rstrip("\n") for line in lines]
    signal = important_lines(text)
    # a signal groups only with exact repeats of itself; other lines by their normal form
    keys: list[object] = [lines[i] if signal[i] else normalise(text[i]) for i in range(n)]
    offsets = [0, *accumulate(len(line) for line in lines)]
    # 0 elidable, 1 kept, 2 folded into the repeat above
    state = [1 if i < HEAD or i >= n - TAIL or signal[i] else 0 for i in range(n)]
    for i in range(HEAD, n - TAIL):
        if state[i] == 0 and any(signal[max(0, i - CONTEXT_AFTER) : i]):
            state[i] = 1
    out: list[Elision] = []
    i = HEAD
    while i < n - TAIL:
        j = i + 1
        while j < n - TAIL and keys[j] == keys[i]:
            j += 1
        if j - i > MIN_RUN:
            out.append(_elision(offsets, i + 1, j, "similar lines", f"repeats of L{i + 1}"))
            state[i] = 1
            for k in range(i + 1, j):
                state[k] = 2
        i = j
    i = HEAD
    while i < n - TAIL:
        if state[i] != 0:
            i += 1
            continue
        j = i
        while j < n - TAIL and state[j] == 0:
            j += 1
        if j - i >= MIN_RUN:
            out.append(_elision(offsets, i, j, "lines", ""))
        i = j
    return out


def _elision(offsets: list[int], a: int, b: int, what: str, detail: str) -> Elision:
    """Lines ``a`` to ``b - 1`` (0-based) as an elision."""
    return Elision(
        start=offsets[a], end=offsets[b], what=what, count=b - a, lines=(a + 1, b), detail=detail
    )
