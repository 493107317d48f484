"""Line semantics shared by excerpts, handles and retrieval.

A line ends at ``\\n`` and keeps it; a ``\\r`` before it belongs to the line, and a lone
``\\r`` does not end a line. The last line may have no terminator. Lines are 1-based.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from excerpt.core.linear import LINEAR, Pattern, compile_pattern

__all__ = ["line_count", "lines_containing", "lines_matching", "slice_lines", "split_lines"]


def split_lines(data: bytes) -> list[bytes]:
    """The lines of ``data``, each with its own terminator; ``[]`` for empty data."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def line_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def slice_lines(lines: list[bytes], start: int, end: int) -> bytes:
    """The exact bytes of lines ``start..end`` (1-based, inclusive).

    Raises:
        ValueError: the range is empty or outside ``lines``.
    """
    if not 1 <= start <= end <= len(lines):
        raise ValueError(f"lines {start}-{end} outside 1-{len(lines)}")
    return b"".join(lines[start - 1 : end])


def lines_matching(pattern: re.Pattern[str], text: str) -> list[int]:
    """1-based numbers of the ``\\n``-separated lines of ``text`` where a match of
    ``pattern`` starts, in order.

    One search per matching line: after a match the scan resumes at the next line, and line
    numbers are counted by ``str.count`` over the stretch in between (fast when matches are
    rare, and linear when every line matches).
    """
    found: list[int] = []
    number, counted, at = 1, 0, 0
    while (match := pattern.search(text, at)) is not None:
        start = match.start()
        number += text.count("\n", counted, start)
        counted = start
        found.append(number)
        end = text.find("\n", start)
        if end < 0:
            break
        at = end + 1
    return found


def lines_containing(needles: Iterable[str], text: str, *, linear: bool = LINEAR) -> list[int]:
    """1-based numbers of the ``\\n``-separated lines of ``text`` holding any of ``needles``
    (none of which holds a ``\\n``), in order: ``lines_matching`` of their alternation.

    With RE2 (``linear``), one pass of one automaton over the text, each match running to
    its line's end so a line is reported once; else ``str.find`` per needle (Python's
    regular expressions try every alternative at every position: far slower).
    """
    wanted = tuple(sorted(set(needles)))
    for needle in wanted:
        if not needle or "\n" in needle:
            raise ValueError(f"not a needle of one line: {needle!r}")
    if not wanted:
        return []
    if linear and LINEAR:
        return _containing_linear(wanted, text)
    starts: set[int] = set()  # where each holding line starts
    for needle in wanted:
        at = text.find(needle)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            starts.add(start)
            end = text.find("\n", at)
            if end < 0:
                break
            at = text.find(needle, end + 1)
    found: list[int] = []
    number, counted = 1, 0
    for start in sorted(starts):
        number += text.count("\n", counted, start)
        counted = start
        found.append(number)
    return found


@lru_cache(maxsize=16)
def _to_line_end(needles: tuple[str, ...]) -> Pattern:
    """Any of ``needles``, then the rest of its line (a pack asks with one set per task)."""
    return compile_pattern("(?:" + "|".join(re.escape(n) for n in needles) + ")[^\\n]*")


def _containing_linear(needles: tuple[str, ...], text: str) -> list[int]:
    data = text.encode("utf-8", "surrogatepass")
    found: list[int] = []
    number, counted = 1, 0
    for spans in _to_line_end(needles).spans(data):
        start = data.rfind(b"\n", 0, spans[0][0]) + 1
        number += data.count(b"\n", counted, start)
        counted = start
        found.append(number)
    return found
