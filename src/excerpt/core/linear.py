"""Regular expressions for untrusted text (file contents, task text): RE2, linear time on any
input, when it can be imported, else Python's backtracking ``re`` with bounded inputs (the
secret scanner caps line length and windows for it).

Every pattern is written in the common subset of both (no lookaround, no backreferences,
counted repetition at most 1000), so the two engines find the same matches (but that RE2
drops repetition bounds above 64, see ``_unbounded``: a longer run is still matched there).
Patterns run on
UTF-8 bytes: RE2 then reports byte offsets as they are (over ``str`` it converts every
offset, which costs the length of the text each time), and ``re`` over bytes has the same
ASCII ``\\b``, ``\\w`` and ``\\s`` as RE2. Matches come back as the spans of all groups
(``(-1, -1)`` for a group that took no part), without a match object each: the RE2
module's own match objects cost more than the matching on short lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["LINEAR", "Pattern", "compile_pattern"]

try:
    import re2 as _re2
except ImportError:  # pragma: no cover - the fallback is tested by asking for it
    _re2 = None

LINEAR = _re2 is not None  # whether patterns run in linear time (RE2)
Spans = Sequence[tuple[int, int]]  # of group 0, 1, ...; (-1, -1) for a group not taken


_WIDE_REPEAT = re.compile(r"\{(\d+),(\d+)\}")


def _unbounded(source: str) -> str:
    """``{m,n}`` with a large ``n`` as ``{m,}`` for RE2: it compiles a counted repetition
    into ``n`` copies (slow to build), and linear matching needs no bound. The bounds are
    there for ``re``, where they cap backtracking."""
    return _WIDE_REPEAT.sub(
        lambda m: f"{{{m.group(1)},}}" if int(m.group(2)) > 64 else m.group(), source
    )


class Pattern:
    """A compiled pattern over bytes, on either engine."""

    __slots__ = ("_match", "_re", "groups", "linear", "source")

    def __init__(self, source: str, *, linear: bool) -> None:
        self.source = source
        self.linear = linear and _re2 is not None
        data = (_unbounded(source) if self.linear else source).encode("utf-8")
        self._re: re.Pattern[bytes] | None = None
        self._match: Any = None
        if self.linear:
            assert _re2 is not None
            options = _re2.Options()
            options.max_mem = 64 << 20  # the combined keyword prefilter is one large automaton
            options.log_errors = False
            compiled = _re2.compile(data, options)
            self.groups: int = compiled.groups
            # (anchor, text, pos, endpos) -> spans; the module's match objects otherwise
            self._match = getattr(getattr(compiled, "_regexp", None), "Match", None)
            if self._match is None or _UNANCHORED is None:
                self._match = _public_match(compiled)
        else:
            self._re = re.compile(data)
            self.groups = self._re.groups

    def search(self, data: bytes, pos: int = 0) -> int:
        """The start of the first match at or after ``pos``, or -1."""
        if self._re is not None:
            match = self._re.search(data, pos)
            return -1 if match is None else match.start()
        start: int = self._match(_UNANCHORED, data, pos, len(data))[0][0]
        return start

    def spans(self, data: bytes) -> Iterator[Spans]:
        """The group spans of each non-overlapping match, left to right."""
        if self._re is not None:
            count = self.groups + 1
            for match in self._re.finditer(data):
                yield [match.span(i) for i in range(count)]
            return
        pos, end = 0, len(data)
        while pos <= end:
            spans = self._match(_UNANCHORED, data, pos, end)
            if spans[0][0] < 0:
                return
            yield spans
            pos = spans[0][1] + (spans[0][1] == spans[0][0])

    def findall(self, data: bytes) -> list[bytes]:
        """The text of each match (group 0)."""
        if self._re is not None:
            return [m.group() for m in self._re.finditer(data)]
        return [data[s[0][0] : s[0][1]] for s in self.spans(data)]


_UNANCHORED = getattr(getattr(_re2, "_Anchor", None), "UNANCHORED", None)


def _public_match(compiled: Any) -> Any:
    """The group spans of a search through RE2's public API, shaped as its inner one."""
    count = compiled.groups + 1

    def match(_anchor: object, data: bytes, pos: int, end: int) -> Spans:
        found = compiled.search(data, pos, end)
        if found is None:
            return [(-1, -1)]
        return [found.span(i) for i in range(count)]

    return match


def compile_pattern(source: str, *, linear: bool = LINEAR) -> Pattern:
    """``source`` compiled for UTF-8 bytes by RE2 when ``linear`` (and available), else by
    ``re``."""
    return Pattern(source, linear=linear)
