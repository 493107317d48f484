"""The tests of a pack's primary files, from the index's test association. Pure.

In: the primary files, the graph's ``tests`` edges (test -> subject), the ranking. Out: the
test files to serve beside them, and which of their lines: the test functions that name the
primary file's own definitions, else the test file's head. A related test reaches the pack
through the association, not by competing for rank with the files the change touches.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from excerpt.index.view import SymbolSpan
from excerpt.pack.regions import Region
from excerpt.rank.weights import Weights

__all__ = ["names_to_find", "regions_of_test", "related_tests"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TESTABLE = frozenset({"function", "method", "test"})
_MIN_NAME = 4


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".", 1)[0].lower().strip("_")


def related_tests(
    primaries: Sequence[str],
    edges: Iterable[tuple[str, str, str]],
    ranks: Mapping[str, int],
    w: Weights,
) -> list[tuple[str, str]]:
    """``(test, primary)`` pairs, the tests of each primary file in order: the tests named
    after the file when there are any, else all of its tests; a ranked one by rank, then the
    one testing the fewest files (the most specific), then by path. At most
    ``related_per_primary`` for one file and ``related_tests`` in all."""
    tests_of: dict[str, set[str]] = defaultdict(set)
    subjects: dict[str, int] = defaultdict(int)
    for src, dst, kind in edges:
        if kind == "tests" and src != dst:
            tests_of[dst].add(src)
    for found in tests_of.values():
        for test in found:
            subjects[test] += 1
    chosen: list[tuple[str, str]] = []
    taken = set(primaries)
    for primary in primaries:
        stem = _stem(primary)
        mine = [t for t in tests_of.get(primary, ()) if t not in taken]
        named = [t for t in mine if len(stem) >= 2 and stem in _stem(t)]
        # a test named after the file is its test; others only when none is (a package's
        # tests all import each of its files)
        order = sorted(named or mine, key=lambda t: (ranks.get(t, len(ranks) + 1), subjects[t], t))
        for test in order[: w.related_per_primary]:
            if len(chosen) >= w.related_tests:
                return chosen
            chosen.append((test, primary))
            taken.add(test)
    return chosen


def names_to_find(
    symbols: Sequence[SymbolSpan], regions: Sequence[Region], total_lines: int
) -> frozenset[str]:
    """The names a primary file defines inside the regions a pack shows of it (every one,
    when it is shown whole), long enough to be telling."""
    spans = [(r.start_line, r.end_line) for r in regions] or [(1, total_lines)]
    return frozenset(
        s.name
        for s in symbols
        if len(s.name) >= _MIN_NAME
        and not s.name.startswith("__")
        and any(s.start_line <= hi and lo <= s.end_line for lo, hi in spans)
    )


def regions_of_test(
    lines: Sequence[str],
    symbols: Sequence[SymbolSpan],
    names: frozenset[str],
    w: Weights,
) -> tuple[Region, ...]:
    """The test functions that name most of ``names`` (at most ``related_regions``, whole
    when short, else a window at the first mention), else the file's head."""
    total = len(lines)
    if total == 0:
        return ()
    own = {s.name for s in symbols}
    wanted = names - own
    scored: list[tuple[int, int, SymbolSpan, int]] = []
    for sym in symbols:
        if sym.kind not in _TESTABLE or sym.end_line > total:
            continue
        hits: set[str] = set()
        first = 0
        for number in range(sym.start_line, sym.end_line + 1):
            found = wanted.intersection(_WORD.findall(lines[number - 1]))
            if found and not first:
                first = number
            hits |= found
        if hits:
            scored.append((-len(hits), sym.start_line, sym, first))
    scored.sort(key=lambda s: (s[0], s[1]))
    out: list[Region] = []
    for _, _, sym, first in scored:
        if len(out) >= w.related_regions:
            break
        if any(r.start_line <= sym.end_line and sym.start_line <= r.end_line for r in out):
            continue  # a method inside a test class already chosen, or the class around it
        if sym.end_line - sym.start_line < w.max_symbol_lines:
            out.append(Region(sym.start_line, sym.end_line, "symbol", 0.5, first, "test"))
        else:
            lo, hi = max(1, first - w.window), min(total, first + w.window)
            out.append(Region(lo, hi, "window", 0.5, first, "test"))
    if not out:
        end = min(total, w.head_lines)
        out.append(Region(1, end, "file" if end == total else "window", 0.1, 1, "head"))
    return tuple(sorted(out, key=lambda r: r.start_line))
