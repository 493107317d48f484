"""Logs: head and tail kept, repeated lines folded with a count, and the long stretches
between the lines that matter (errors, warnings, stack traces, failing tests, which are
never elided) left out, each with a marker naming its lines.

Two kinds of line fold although they match a signal word. A diagnostic (a compiler's,
linter's or type checker's warning) whose group, its code and message template, was shown
whole earlier: its location (``file:line:col``) is listed in the marker instead, so nothing
the agent could fix is hidden; errors are never grouped. And a test reported passing,
skipped or failing as expected, whatever its name: the marker counts them per file.
"""

from __future__ import annotations

from collections import Counter
from itertools import accumulate

from excerpt.compact.diagnostics import Diagnostic, diagnostics
from excerpt.compact.signals import important_lines, normalise
from excerpt.compact.testruns import describe, quiet_results
from excerpt.compact.view import Elision

__all__ = ["log_elisions"]

HEAD = 10
TAIL = 10
MIN_RUN = 3  # a marker costs about a line: fewer lines are not worth one
CONTEXT_AFTER = 2  # a compiler's source and caret lines follow its warning

# a line's state: elidable, kept, folded into the repeat above, or part of a diagnostic
# whose group was shown whole earlier (elidable; its location goes into the marker)
_ELIDABLE, _KEPT, _REPEAT, _GROUPED = 0, 1, 2, 3


def log_elisions(lines: list[bytes]) -> list[Elision]:
    """The elisions of a log given as its lines (each with its newline)."""
    n = len(lines)
    if n <= HEAD + TAIL + MIN_RUN:
        return []
    text = [line.decode("utf-8", "replace").rstrip("\n") for line in lines]
    signal = important_lines(text)
    results = quiet_results(text)
    for i, result in enumerate(results):
        if result is not None:
            signal[i] = False
    state = [_KEPT if i < HEAD or i >= n - TAIL or signal[i] else _ELIDABLE for i in range(n)]
    for i in range(HEAD, n - TAIL):
        if state[i] == _ELIDABLE and any(signal[max(0, i - CONTEXT_AFTER) : i]):
            state[i] = _KEPT
    repeats: dict[int, Diagnostic] = {}  # a grouped diagnostic by its first line
    first: dict[tuple[str, str, str], int] = {}  # a group by the line it is shown whole at
    for d in diagnostics(text):
        if d.is_error or d.group not in first:
            first.setdefault(d.group, d.at)
            for k in range(max(d.start, HEAD), min(d.end, n - TAIL)):
                state[k] = _KEPT
            continue
        repeats[d.start] = d
        for k in range(max(d.start, HEAD), min(d.end, n - TAIL)):
            state[k] = _GROUPED
    offsets = [0, *accumulate(len(line) for line in lines)]
    out = _repeat_runs(lines, text, signal, state, offsets, results)
    i = HEAD
    while i < n - TAIL:
        if state[i] not in (_ELIDABLE, _GROUPED):
            i += 1
            continue
        j = i
        while j < n - TAIL and state[j] in (_ELIDABLE, _GROUPED):
            j += 1
        grouped = [repeats[k] for k in range(i, j) if k in repeats]
        passed = [r for r in results[i:j] if r is not None]
        if j - i >= MIN_RUN or grouped:
            detail = "; ".join(
                part
                for part in (_listing(grouped, first), describe(passed) if passed else "")
                if part
            )
            out.append(_elision(offsets, i, j, "lines", detail))
        i = j
    return out


def _repeat_runs(
    lines: list[bytes],
    text: list[str],
    signal: list[bool],
    state: list[int],
    offsets: list[int],
    results: list[tuple[str, str] | None],
) -> list[Elision]:
    """Runs of a line's repeats (a signal's exact repeats, another line's by its normal
    form) fold under the first; a grouped diagnostic's lines are left to its own marker and
    a passing test's to the count of its run."""
    n = len(lines)
    # a signal groups only with exact repeats of itself; other lines by their normal form
    keys: list[object] = [
        object() if results[i] is not None else lines[i] if signal[i] else normalise(text[i])
        for i in range(n)
    ]
    out: list[Elision] = []
    i = HEAD
    while i < n - TAIL:
        j = i + 1
        while j < n - TAIL and keys[j] == keys[i] and state[j] != _GROUPED:
            j += 1
        if j - i > MIN_RUN and state[i] != _GROUPED:
            out.append(_elision(offsets, i + 1, j, "similar lines", f"repeats of L{i + 1}"))
            state[i] = _KEPT
            for k in range(i + 1, j):
                state[k] = _REPEAT
        i = j
    return out


def _listing(grouped: list[Diagnostic], first: dict[tuple[str, str, str], int]) -> str:
    """Where each folded diagnostic is, by group: "3 diagnostics shown above: [-Wshadow]
    (as L12) a.c:4:2, a.c:9:1"."""
    if not grouped:
        return ""
    by_group: dict[tuple[str, str, str], list[str]] = {}
    for d in grouped:
        via = f" (notes at {', '.join(d.notes)})" if d.notes else ""
        by_group.setdefault(d.group, []).append(d.location + via)
    parts = []
    for group, places in by_group.items():
        _, code, template = group
        name = code or (template if len(template) <= 60 else template[:59] + "…")
        counted = Counter(places)  # a header's warning comes again from each file including it
        listed = ", ".join(p if n == 1 else f"{p} ({n} times)" for p, n in counted.items())
        parts.append(f"{name} (as L{first[group] + 1}) {listed}")
    kinds = {d.severity or "diagnostic" for d in grouped}
    noun = next(iter(kinds)) if len(kinds) == 1 else "diagnostic"
    return f"{len(grouped):,} more {noun}s like those shown above, at: " + "; ".join(parts)


def _elision(offsets: list[int], a: int, b: int, what: str, detail: str) -> Elision:
    """Lines ``a`` to ``b - 1`` (0-based) as an elision."""
    return Elision(
        start=offsets[a], end=offsets[b], what=what, count=b - a, lines=(a + 1, b), detail=detail
    )
