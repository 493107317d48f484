"""Gold reach: how many o200k tokens of a delivered pack, read top to bottom, until every
line the fix changes has been shown; and what else the pack holds.

The question a pack answers is not whether the right file ranks first but whether the lines
to change are in front of the model, and at what cost. Per task: the reach in tokens (None
when the pack never shows them all), whether each budget's pack holds them all, the share
of the pack's bytes outside the gold files and outside the gold functions, and, where the
right file ranked first but its lines were not reached within ``CAUSE_LEVEL`` tokens, why.
BM25's pack (whole files in rank order) is measured the same way beside it.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from excerpt.tooling import Pack, gold_lines, language_of, mean

__all__ = [
    "CAUSE_LEVEL",
    "LEVELS",
    "REACH_BUDGET",
    "Shown",
    "bm25_pack",
    "outside_shares",
    "reach_cause",
    "reach_summary",
    "reach_table",
    "reach_tokens",
    "shown_of",
    "task_language",
]

REACH_BUDGET = 32_000  # the pack whose reach is measured
LEVELS = (500, 1000, 2000, 4000, 8000)  # tokens: the shares reported
CAUSE_LEVEL = 2000  # a first-ranked gold file not reached within this many tokens: why


@dataclass(frozen=True, slots=True)
class Shown:
    """One excerpt as the model reads it: its file, first line and text."""

    path: str
    start_line: int
    text: str


Lines = Mapping[str, Sequence[Sequence[int]]]


def shown_of(pack: Pack) -> list[Shown]:
    return [Shown(i.path, i.start_line, i.text) for i in pack.items]


def reach_tokens(
    rendered: str, shown: Sequence[Shown], expected: Lines, count: Callable[[str], int]
) -> int | None:
    """The tokens of ``rendered`` up to the end of the last gold line it shows, read top to
    bottom (each excerpt's text found in order); None when some gold line is never shown or
    there is none."""
    want = gold_lines(expected)
    if not want:
        return None
    last = 0
    pos = 0
    for item in shown:
        at = rendered.find(item.text, pos)
        if at < 0:
            continue  # cut from the rendering: not shown
        pos = at + len(item.text)
        end = at
        for k, line in enumerate(item.text.splitlines(keepends=True)):
            end += len(line)
            key = (item.path, item.start_line + k)
            if key in want:
                want.discard(key)
                last = max(last, end)
    return None if want else count(rendered[:last])


def bm25_pack(
    read: Callable[[str], bytes | None], ranked: Iterable[str], budget: int
) -> tuple[str, list[Shown]]:
    """BM25's pack: whole files in rank order (the last cut to whole lines) within
    ``budget`` bytes of source, rendered with a header and a fence each."""
    shown: list[Shown] = []
    parts: list[str] = []
    remaining = budget
    for path in ranked:
        if remaining <= 0:
            break
        data = read(path)
        if data is None:
            continue
        used = 0
        kept: list[bytes] = []
        for line in data.splitlines(keepends=True):
            if used + len(line) > remaining:
                break
            used += len(line)
            kept.append(line)
        if not kept:
            continue
        text = b"".join(kept).decode("utf-8", "replace")
        shown.append(Shown(path, 1, text))
        parts.append(f"## {path}\n```\n{text}{'' if text.endswith(chr(10)) else chr(10)}```\n")
        remaining -= used
    return "".join(parts), shown


def outside_shares(
    shown: Sequence[Shown], gold_files: set[str], spans: Mapping[str, Sequence[tuple[int, int]]]
) -> tuple[float, float]:
    """Shares of the shown bytes outside the gold files, and outside the gold functions
    (``spans``: each gold file's definitions holding a changed line, or the line itself)."""
    total = outside_files = outside_functions = 0
    for item in shown:
        for k, line in enumerate(item.text.splitlines(keepends=True)):
            size = len(line.encode("utf-8"))
            total += size
            if item.path not in gold_files:
                outside_files += size
                outside_functions += size
                continue
            n = item.start_line + k
            if not any(s <= n <= e for s, e in spans.get(item.path, ())):
                outside_functions += size
    if not total:
        return 0.0, 0.0
    return round(outside_files / total, 4), round(outside_functions / total, 4)


def reach_cause(
    pack: Pack, expected: Lines, first: str | None, gold: set[str], reached: int | None
) -> str | None:
    """Why the first-ranked file, a gold one, did not have its lines reached within
    ``CAUSE_LEVEL`` tokens (None: it is not gold, or they were): ``second_file_missing``
    (another gold file shows none of its lines), ``cut_short`` (a line to change is in a
    region served only in part), ``not_served`` (its region was left out), ``late`` (every
    line is in the pack, past the level)."""
    if first is None or first not in gold or (reached is not None and reached <= CAUSE_LEVEL):
        return None
    served = {(i.path, n) for i in pack.items for n in range(i.start_line, i.end_line + 1)}
    want = gold_lines(expected)
    missing = want - served
    if not missing:
        return "late"
    files_shown = {p for p, _ in want & served}
    if any(p != first and p not in files_shown for p, _ in missing):
        return "second_file_missing"
    truncated = {i.path for i in pack.items if i.truncated}
    cut = {
        (o.path, n)
        for o in pack.omitted
        if o.path in truncated and o.reason == "budget" and o.start_line and o.end_line
        for n in range(o.start_line, o.end_line + 1)
    }
    if missing & cut:
        return "cut_short"
    return "not_served"


def task_language(gold: Sequence[str]) -> str:
    """A task's language group: its first gold file's language."""
    return language_of(gold[0]) if gold else "none"


def _within(values: Sequence[int | None], level: int) -> float:
    return round(mean(float(v is not None and v <= level) for v in values), 4)


def _median(values: Sequence[int | None]) -> float | None:
    """The median reach, unreached tasks counted as beyond every reached one (None when
    half or more are unreached: the median is then no number of tokens)."""
    ordered = sorted(v for v in values if v is not None)
    if not values or len(ordered) * 2 <= len(values):
        return None
    padded = ordered + [10**9] * (len(values) - len(ordered))
    return float(statistics.median(padded))


def _levels(values: Sequence[int | None]) -> dict[str, Any]:
    return {
        "within": {str(level): _within(values, level) for level in LEVELS},
        "reached": _within(values, 10**9),
        "median_tokens": _median(values),
    }


def reach_summary(rows: Sequence[dict[str, Any]], budgets: Sequence[int]) -> dict[str, Any]:
    """``report.json``'s ``reach``: per system the shares within each level, the median,
    the shares whose pack at each budget holds every line, the default pack's size and
    reach, the irrelevant shares; per repository and language; the causes, counted."""
    out: dict[str, Any] = {"budget": REACH_BUDGET, "levels": list(LEVELS)}
    for system in ("excerpt", "bm25"):
        reach = [r[system]["reach"] for r in rows]
        out[system] = {
            **_levels([x["tokens"] for x in reach]),
            "all_lines": {
                str(b): round(mean(float(x["all_lines"][str(b)]) for x in reach), 4)
                for b in budgets
                if all(str(b) in x["all_lines"] for x in reach)
            },
            "pack_tokens_median": float(statistics.median(x["pack_tokens"] for x in reach))
            if reach
            else 0.0,
            "outside_gold_files": round(mean(x["outside_gold_files"] for x in reach), 4),
            "outside_gold_functions": round(mean(x["outside_gold_functions"] for x in reach), 4),
        }
    default = [r["excerpt"]["default"] for r in rows]
    out["default"] = {
        "pack_tokens_median": float(statistics.median(d["pack_tokens"] for d in default))
        if default
        else 0.0,
        **_levels([d["tokens"] for d in default]),
    }
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {"repo": {}, "language": {}}
    for r in rows:
        groups["repo"].setdefault(r["repo"], []).append(r)
        groups["language"].setdefault(r.get("language", "none"), []).append(r)
    for kind, by in groups.items():
        out[f"per_{kind}"] = {
            name: {
                "n": len(members),
                **{
                    system: _levels([m[system]["reach"]["tokens"] for m in members])
                    for system in ("excerpt", "bm25")
                },
            }
            for name, members in sorted(by.items())
        }
    causes: dict[str, int] = {}
    for r in rows:
        cause = r.get("reach_cause")
        if cause is not None:
            causes[cause] = causes.get(cause, 0) + 1
    out["causes"] = dict(sorted(causes.items()))
    return out


def reach_table(reach: Mapping[str, Any]) -> list[str]:
    """The gold-reach tables of ``report.md``."""
    levels = reach["levels"]

    def cells(m: Mapping[str, Any]) -> str:
        shares = " | ".join(f"{m['within'][str(level)] * 100:.1f}" for level in levels)
        median = "—" if m["median_tokens"] is None else f"{m['median_tokens']:,.0f}"
        return f"{shares} | {m['reached'] * 100:.1f} | {median}"

    head = " | ".join(f"≤ {level:,}" for level in levels)
    lines = [
        "",
        f"Gold reach: tokens of the {reach['budget']:,}-byte pack, read top to bottom, until"
        " every changed line was shown (share of tasks within each level).",
        "",
        f"| pack | {head} | reached | median tokens |",
        "| --- |" + " --- |" * (len(levels) + 2),
        f"| excerpt | {cells(reach['excerpt'])} |",
        f"| BM25 | {cells(reach['bm25'])} |",
        f"| excerpt default pack ({reach['default']['pack_tokens_median']:,.0f} tokens median)"
        f" | {cells(reach['default'])} |",
    ]
    lines += [
        "",
        "| pack | median tokens | outside gold files | outside gold functions |",
        "| --- | --- | --- | --- |",
    ]
    for system, name in (("excerpt", "excerpt"), ("bm25", "BM25")):
        m = reach[system]
        lines.append(
            f"| {name} | {m['pack_tokens_median']:,.0f} | {m['outside_gold_files'] * 100:.1f}%"
            f" | {m['outside_gold_functions'] * 100:.1f}% |"
        )
    if reach["excerpt"]["all_lines"]:
        budgets = list(reach["excerpt"]["all_lines"])
        lines += [
            "",
            "| every changed line in the pack of | " + " | ".join(f"{b} B" for b in budgets) + " |",
            "| --- |" + " --- |" * len(budgets),
        ]
        for system, name in (("excerpt", "excerpt"), ("bm25", "BM25")):
            shares = " | ".join(f"{reach[system]['all_lines'][b] * 100:.1f}" for b in budgets)
            lines.append(f"| {name} | {shares} |")
    for kind in ("language", "repo"):
        lines += [
            "",
            f"| {kind} | tasks | excerpt ≤ 2,000 | BM25 ≤ 2,000 | excerpt ≤ 8,000 | BM25 ≤ 8,000 |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for name, m in reach[f"per_{kind}"].items():
            e, b = m["excerpt"]["within"], m["bm25"]["within"]
            lines.append(
                f"| {name} | {m['n']} | {e['2000'] * 100:.1f} | {b['2000'] * 100:.1f}"
                f" | {e['8000'] * 100:.1f} | {b['8000'] * 100:.1f} |"
            )
    if reach["causes"]:
        lines += [
            "",
            f"First file right, its lines not within {CAUSE_LEVEL:,} tokens: "
            + ", ".join(f"{c} {n}" for c, n in reach["causes"].items()),
        ]
    return lines
