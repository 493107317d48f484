"""Diffs (``git diff``, ``git log -p``, unified diffs): every header, commit line and
changed line stays; long stretches of unchanged context fold to a marker, keeping the line
next to each change and any context line that is an error or warning."""

from __future__ import annotations

import re
from itertools import accumulate

from excerpt.compact.signals import signal_lines
from excerpt.compact.view import Elision

__all__ = ["diff_elisions", "looks_like_diff"]

_HUNK = re.compile(rb"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_DIFF_START = re.compile(rb"^(diff --git |diff -|--- \S|Index: |commit [0-9a-f]{7,})", re.M)
MIN_RUN = 2
MIN_BYTES = 110  # a marker is about 90 bytes: a shorter stretch stays as it is
KEEP_NEXT_TO_CHANGE = 0


def looks_like_diff(data: bytes) -> bool:
    head = data[:65536]
    return bool(_DIFF_START.search(head)) and bool(re.search(rb"^@@ -\d", head, re.M))


def diff_elisions(lines: list[bytes]) -> list[Elision]:
    """The elisions of a diff given as its lines (each with its newline)."""
    context = _context_lines(lines)
    n = len(lines)
    offsets = [0, *accumulate(len(line) for line in lines)]
    out: list[Elision] = []
    i = 0
    while i < n:
        if not context[i]:
            i += 1
            continue
        j = i
        while j < n and context[j]:
            j += 1
        a = i + (
            KEEP_NEXT_TO_CHANGE if i > 0 and not context[i - 1] and _changed(lines[i - 1]) else 0
        )
        b = j - (KEEP_NEXT_TO_CHANGE if j < n and _changed(lines[j]) else 0)
        if b - a >= MIN_RUN and offsets[b] - offsets[a] >= MIN_BYTES:
            out.append(
                Elision(
                    start=offsets[a], end=offsets[b], what="unchanged lines", count=b - a,
                    lines=(a + 1, b),
                )
            )  # fmt: skip
        i = j
    return out


def _changed(line: bytes) -> bool:
    return line[:1] in (b"+", b"-")


def _context_lines(lines: list[bytes]) -> list[bool]:
    """For each line: an unchanged context line inside a hunk that is not a signal?"""
    out = [False] * len(lines)
    signal = signal_lines([line.decode("utf-8", "replace").rstrip("\n") for line in lines])
    old = new = 0
    for i, line in enumerate(lines):
        if old > 0 or new > 0:
            first = line[:1]
            if first == b" " or line in (b"\n", b"\r\n"):  # an empty context line lost its space
                old, new = old - 1, new - 1
                out[i] = not signal[i]
                continue
            if first == b"-":
                old -= 1
                continue
            if first == b"+":
                new -= 1
                continue
            if first == b"\\":
                continue
            old = new = 0
        m = _HUNK.match(line)
        if m:
            old = int(m.group(1)) if m.group(1) is not None else 1
            new = int(m.group(2)) if m.group(2) is not None else 1
    return out
