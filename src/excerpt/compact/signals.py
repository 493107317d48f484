"""Lines that are never elided: errors, warnings, stack traces, failing tests.

Matching is deliberately wide (a word inside an identifier counts): a line kept that did not
need to be costs a few bytes, a line elided that mattered costs a re-run.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from itertools import accumulate

__all__ = ["important_lines", "is_signal", "normalise", "signal_lines"]

_SIGNAL = re.compile(
    r"error|warn|fail|fatal|exception|traceback|panic|critical|assert|abort|denied|segfault"
    r"|segmentation fault|core dumped|refused|timed out|timeout|unhandled|crash|xpass|\bERR\b",
    re.IGNORECASE,
)
_STACK = re.compile(
    r'^[ \t]+File "[^"]*", line \d+'  # Python
    r"|^[ \t]+at \S.*[(:]\d+"  # JavaScript, Java, C#
    r"|^[ \t]*#\d+[ \t]+0x[0-9a-fA-F]+"  # gdb, sanitizers
    r"|^[ \t]+\d+: 0x[0-9a-fA-F]+"  # Rust backtraces
    r"|^(E|>)[ \t]"  # pytest's failure lines
    r"|^goroutine \d+ \[",
    re.MULTILINE,
)
_TRACE_START = re.compile(r"Traceback \(most recent call last\)|^Caused by:|^panic:")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_NORMALISE = [
    re.compile(p)
    for p in (
        r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?",
        r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d{2}:\d{2}:\d{2}",
        r"\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?",
        r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
        r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b",
        r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-f]*\d)[0-9a-f]{7,64}\b",
        r"\d+",
    )
]


def is_signal(line: str) -> bool:
    """An error, warning, failing-test or stack-trace line."""
    return bool(_SIGNAL.search(line) or _STACK.search(line))


def important_lines(lines: Sequence[str]) -> list[bool]:
    """For each line: is it a signal, or inside a stack trace (a Python traceback runs from
    its header through the indented frames to the exception line)?"""
    out = signal_lines(lines)
    in_trace = False
    for i, line in enumerate(lines):
        if _TRACE_START.search(line):
            in_trace = out[i] = True
        elif in_trace:
            out[i] = True
            in_trace = line[:1] in (" ", "\t") or not line.strip()
    return out


def signal_lines(lines: Sequence[str]) -> list[bool]:
    """``is_signal`` of every line, in one pass of each pattern over the whole text."""
    out = [False] * len(lines)
    starts = list(accumulate((len(line) + 1 for line in lines), initial=0))
    text = "\n".join(lines)
    for pattern in (_SIGNAL, _STACK):
        at = 0
        for m in pattern.finditer(text):
            if m.start() < at:
                continue
            i = bisect.bisect_right(starts, m.start()) - 1
            out[i] = True
            at = starts[i + 1]  # the rest of this line needs no look
    return out


def normalise(line: str) -> str:
    """The line with what varies between repeats (escapes, timestamps, ids, addresses,
    numbers) replaced: used only to group repeated lines, never shown."""
    text = _ANSI.sub("", line)
    for pattern in _NORMALISE:
        text = pattern.sub("#", text)
    return text
