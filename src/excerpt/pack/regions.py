"""Which lines of one file to show: whole symbols around anchors, windows otherwise. Pure.

In: the file's lines, its symbols, the ranker's anchors and the task's weighted terms. Out:
line regions with a kind and a weight, merged where they overlap or touch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from excerpt.core.lines import lines_containing, lines_matching
from excerpt.index.tokens import split_identifier
from excerpt.index.view import SymbolSpan
from excerpt.rank.signals import Anchor
from excerpt.rank.weights import Weights, default_weights

__all__ = ["Region", "choose_regions", "line_matches"]

_MAX_LEXICAL_REGIONS = 3
_SCAN_LINES = 50_000
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Region:
    start_line: int
    end_line: int
    kind: Literal["symbol", "window", "file"]
    weight: float
    focus: int  # the line a fragment should keep if the region must be cut
    # what put it here: stack_frame | defines | match | head, or, following the code from
    # those: header | calls | called_by
    signal: str


def line_matches(
    lines: Sequence[str], weights: Mapping[str, float]
) -> list[tuple[int, float, tuple[str, ...]]]:
    """``(line number, score, matched terms)`` for lines holding any weighted term."""
    if not weights:
        return []
    # terms are lower-case: scan lower-cased text case-sensitively (far faster than re.I)
    out = []
    known: dict[str, tuple[str, ...]] = {}  # word -> its weighted terms: words repeat
    for number in lines_containing(weights, "".join(lines[:_SCAN_LINES]).lower()):
        found: set[str] = set()
        for word in _WORD.findall(lines[number - 1]):
            held = known.get(word)
            if held is None:
                held = known[word] = tuple(t for t in split_identifier(word) if t in weights)
            found.update(held)
        if found:
            out.append((number, sum(weights[t] for t in found), tuple(sorted(found))))
    return out


class _Showable(list[SymbolSpan]):
    """The symbols small enough to show whole (see ``_showable``), with the innermost one
    of each line found by one lookup: a file's regions ask for it once per matching line."""

    def __init__(self, symbols: Sequence[SymbolSpan]) -> None:
        super().__init__(symbols)
        self._inner: dict[int, SymbolSpan] | None = None

    def innermost(self, line: int) -> SymbolSpan | None:
        """The smallest symbol holding ``line``, the earlier listed of equal ones (the
        first of the smallest start line among equally long ones)."""
        if self._inner is None:
            # painted largest first, so each line keeps the least (length, start, order)
            inner: dict[int, SymbolSpan] = {}
            order = sorted(
                range(len(self)),
                key=lambda n: (self[n].end_line - self[n].start_line, self[n].start_line, n),
                reverse=True,
            )
            for n in order:
                sym = self[n]
                for number in range(sym.start_line, sym.end_line + 1):
                    inner[number] = sym
            self._inner = inner
        return self._inner.get(line)


def _showable(symbols: Sequence[SymbolSpan], g: Weights) -> _Showable:
    return _Showable([s for s in symbols if s.end_line - s.start_line < g.max_symbol_lines])


def _around(
    line: int, total: int, symbols: _Showable, weight: float, signal: str, g: Weights
) -> Region:
    sym = symbols.innermost(line)
    if sym is not None:
        return Region(sym.start_line, sym.end_line, "symbol", weight, line, signal)
    start, end = max(1, line - g.window), min(total, line + g.window)
    return Region(start, end, "window", weight, line, signal)


def choose_regions(
    total_lines: int,
    symbols: Sequence[SymbolSpan],
    anchors: Sequence[Anchor],
    matches: Sequence[tuple[int, float, tuple[str, ...]]],
    max_lexical: int = _MAX_LEXICAL_REGIONS,
    lines: Sequence[str] = (),
    *,
    geometry: Weights | None = None,
) -> list[Region]:
    """Regions for one file, strongest first, merged and deterministic. Given the file's
    ``lines``, each region takes in the blank lines that border it (see ``_pad``).
    ``geometry`` holds the window, head and symbol sizes (default: the shipped weights)."""
    if total_lines <= 0:
        return []
    g = geometry or default_weights()
    containers = [s for s in symbols if s.kind in _CONTAINERS]
    showable = _showable(symbols, g)
    regions: list[Region] = []
    for anchor in anchors:
        start, end = min(anchor.start_line, total_lines), min(anchor.end_line, total_lines)
        if anchor.signal == "defines" and end - start < g.max_symbol_lines * 2:
            regions.append(Region(start, end, "symbol", anchor.weight, start, "defines"))
        elif anchor.signal == "defines":
            regions.append(
                Region(
                    start,
                    min(end, start + g.head_lines - 1),
                    "window",
                    anchor.weight,
                    start,
                    "defines",
                )
            )
        else:
            regions.append(_around(start, total_lines, showable, anchor.weight, anchor.signal, g))
    regions.extend(_lexical_regions(total_lines, showable, matches, regions, max_lexical, g))
    regions.extend(_followed(regions, containers, showable, lines, g))
    if not regions:
        if total_lines <= g.whole_file_lines:
            regions.append(Region(1, total_lines, "file", 0.1, 1, "head"))
        else:
            regions.append(Region(1, g.head_lines, "window", 0.1, 1, "head"))
    return _pad(_merge(regions, total_lines), lines, g)


def _lexical_regions(
    total_lines: int,
    symbols: _Showable,
    matches: Sequence[tuple[int, float, tuple[str, ...]]],
    taken: Sequence[Region],
    limit: int,
    g: Weights,
) -> list[Region]:
    """The symbols (or windows) where matching lines are densest: the whole of a function
    that mentions the task's terms ten times beats the one line that mentions three."""
    groups: dict[tuple[int, int], tuple[float, set[str], Region]] = {}
    focus: dict[tuple[int, int], tuple[float, int]] = {}  # the best line: what a cut keeps
    for number, score, terms in matches:
        if any(r.start_line <= number <= r.end_line for r in taken):
            continue
        region = _around(number, total_lines, symbols, 0.0, "match", g)
        key = (region.start_line, region.end_line)
        total, seen, first = groups.get(key, (0.0, set(), region))
        groups[key] = (total + score, seen | set(terms), first)
        if key not in focus or score > focus[key][0]:
            focus[key] = (score, number)
    if not groups:
        return []
    # distinct terms count most; repeats add, damped by the region's length
    scored = {
        key: len(seen) + total / math.sqrt(key[1] - key[0] + 1)
        for key, (total, seen, _) in groups.items()
    }
    best = max(scored.values())
    out: list[Region] = []
    for key in sorted(scored, key=lambda k: (-scored[k], k)):
        if len(out) >= limit:
            break
        region = groups[key][2]
        if any(r.start_line <= key[1] and key[0] <= r.end_line for r in out):
            continue
        weight = 0.2 + 0.5 * scored[key] / best
        out.append(Region(key[0], key[1], region.kind, weight, focus[key][1], "match"))
    return out


_CONTAINERS = frozenset({"class", "interface", "type", "module"})
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")


def _followed(
    regions: Sequence[Region],
    containers: Sequence[SymbolSpan],
    symbols: _Showable,
    lines: Sequence[str],
    g: Weights,
) -> list[Region]:
    """Where the chosen code leads inside its file, weaker than what led there: the header of
    the class a chosen method is in, the file's own functions it calls, and those that call
    it. An agent changing a method reads its class's fields and the helper it calls before
    another file."""
    if not lines or not regions or g.follow_regions == 0:
        return []
    by_name: dict[str, list[SymbolSpan]] = {}
    for each in symbols:
        by_name.setdefault(each.name, []).append(each)
    taken = [(r.start_line, r.end_line) for r in regions]
    out: list[Region] = []
    text = "".join(lines[:_SCAN_LINES])  # where callers are looked for, once per file

    def add(
        start: int, end: int, kind: Literal["symbol", "window"], weight: float, why: str
    ) -> bool:
        if any(a <= end and start <= b for a, b in taken):
            return False
        taken.append((start, end))
        out.append(Region(start, end, kind, weight, start, why))
        return True

    for region in sorted(regions, key=lambda r: (-r.weight, r.start_line))[: g.follow_regions]:
        sym = symbols.innermost(region.focus)
        if sym is None or sym.start_line > region.start_line or sym.end_line < region.end_line:
            continue  # a window, or a region wider than one symbol: it leads nowhere in one
        weight = region.weight * g.follow_share
        header = _class_header(containers, symbols, sym, g)
        if header is not None:
            add(*header, "window", weight, "header")
        body = "".join(lines[sym.start_line - 1 : sym.end_line])
        called = dict.fromkeys(m.group(1) for m in _CALL.finditer(body))
        found = 0
        for name in called:
            for target in by_name.get(name, ()):
                if found < g.follow_calls and target != sym:
                    found += add(target.start_line, target.end_line, "symbol", weight, "calls")
        if sym.kind in _CONTAINERS:
            continue  # a class is "called" wherever it is built: its callers lead nowhere
        caller = re.compile(r"\b" + re.escape(sym.name) + r"\s*\(")
        found = 0
        for number in lines_matching(caller, text):
            holder = symbols.innermost(number)
            if found >= g.follow_calls:
                break
            if (
                holder is not None
                and holder != sym
                and not (holder.start_line <= sym.start_line and sym.end_line <= holder.end_line)
            ):
                found += add(holder.start_line, holder.end_line, "symbol", weight, "called_by")
    return out


def _class_header(
    containers: Sequence[SymbolSpan], symbols: Sequence[SymbolSpan], sym: SymbolSpan, g: Weights
) -> tuple[int, int] | None:
    """The lines of the class holding ``sym`` before its first member (its bases, fields and
    docstring), at most ``head_lines``; None outside a class or when ``sym`` is its head."""
    holding = [
        c for c in containers
        if c.start_line < sym.start_line and sym.end_line <= c.end_line and c != sym
    ]  # fmt: skip
    if not holding:
        return None
    cls = min(holding, key=lambda c: (c.end_line - c.start_line, c.start_line))
    members = [
        s.start_line for s in symbols
        if cls.start_line < s.start_line <= cls.end_line and s != cls
    ]  # fmt: skip
    end = min([*members, cls.end_line + 1]) - 1
    end = min(end, cls.start_line + g.follow_header_lines - 1)
    return (cls.start_line, end) if end >= cls.start_line else None


def _pad(regions: list[Region], lines: Sequence[str], g: Weights) -> list[Region]:
    """Each region grown over up to two blank lines on either side, never into another
    region: the gap before and after a function is where a new one goes, and an excerpt that
    shows it shows the insertion point (development issues: gold-line coverage at 32 KB
    64.3% -> 66.0%, for a few bytes per region)."""
    if not lines:
        return regions
    taken = {n for r in regions for n in range(r.start_line, r.end_line + 1)}
    out = []
    for region in regions:
        start, end = region.start_line, region.end_line
        for _ in range(g.pad_lines):
            if start > 1 and start - 1 not in taken and not lines[start - 2].strip():
                start -= 1
                taken.add(start)
            if end < len(lines) and end + 1 not in taken and not lines[end].strip():
                end += 1
                taken.add(end)
        kind = "file" if (start, end) == (1, len(lines)) else region.kind
        out.append(Region(start, end, kind, region.weight, region.focus, region.signal))
    return out


def _merge(regions: list[Region], total_lines: int) -> list[Region]:
    ordered = sorted(regions, key=lambda r: (r.start_line, r.end_line))
    merged: list[Region] = []
    for region in ordered:
        if merged and region.start_line <= merged[-1].end_line + 1:
            last = merged[-1]
            strong = last if last.weight >= region.weight else region
            kind = "symbol" if "symbol" in (last.kind, region.kind) else last.kind
            merged[-1] = Region(
                last.start_line, max(last.end_line, region.end_line), kind, strong.weight,
                strong.focus, strong.signal,
            )  # fmt: skip
        else:
            merged.append(region)
    out = [
        Region(r.start_line, r.end_line, "file", r.weight, r.focus, r.signal)
        if r.start_line == 1 and r.end_line == total_lines
        else r
        for r in merged
    ]
    return sorted(out, key=lambda r: (-r.weight, r.start_line))
