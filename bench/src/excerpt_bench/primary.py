"""The localization benchmark's figures on primary files, stopping short and related tests.

Per task: precision and recall of the ``primary`` files against the gold files, the share of
each budget a pack used (by default, and stopping short), the features and labels the confidence is
calibrated on, and whether a test file the fix touched reached the largest pack. Summaries
are per-task means; the related-tests share counts only the tasks whose fix commit the git
directory holds and whose fix touched a test file, and says how many those were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from excerpt.tooling import Pack, Prepared, features, gold_lines, mean, region_features
from excerpt_bench.fixes import FixCommits

__all__ = [
    "calibration_rows",
    "primary_metrics",
    "primary_summary",
    "primary_table",
    "region_calibration_rows",
    "related_tests_hit",
]

CALIBRATION_TOP = 30  # candidates per task kept for calibration
RELATED_BUDGET = 32000  # the pack a related test must reach


def primary_metrics(
    prep: Prepared,
    packs: Sequence[Pack],
    short: Sequence[Pack],
    budgets: Sequence[int],
    gold: set[str],
) -> dict[str, Any]:
    """One task's primary files and their precision and recall (None without gold files),
    the share of each budget used (by default and stopping short), whether the latter
    stopped short, and the paths each default pack served."""
    primary = set(prep.primary)
    hit = len(primary & gold)
    return {
        "primary": sorted(primary),
        "primary_precision": hit / len(primary) if primary and gold else None,
        "primary_recall": hit / len(gold) if gold else None,
        "bytes_used": {str(b): _share(p) for b, p in zip(budgets, packs, strict=True)},
        "bytes_used_short": {str(b): _share(p) for b, p in zip(budgets, short, strict=True)},
        "stopped_short": {
            str(b): p.stopped_short is not None for b, p in zip(budgets, short, strict=True)
        },
        "served": {
            str(b): sorted({i.path for i in p.items}) for b, p in zip(budgets, packs, strict=True)
        },
    }


def _share(pack: Pack) -> float:
    shown = pack.used_bytes if pack.rendered_bytes is None else pack.rendered_bytes
    return round(shown / pack.budget_bytes, 4) if pack.budget_bytes else 0.0


def calibration_rows(prep: Prepared, gold: set[str]) -> dict[str, Any]:
    """The confidence features of the first candidates, and whether each is a gold file."""
    top = prep.candidates[:CALIBRATION_TOP]
    return {
        "x": [[round(v, 5) for v in x] for x in features(top)],
        "y": [int(c.path in gold) for c in top],
    }


def region_calibration_rows(
    prep: Prepared, gold: set[str], lines: Mapping[str, Sequence[Sequence[int]]]
) -> dict[str, Any]:
    """The region features (``excerpt.pack.build.REGION_FEATURES``) of every region of each
    gold file among the first candidates, and whether it holds a changed line: what the
    regions' share among those of a changed file is fitted on."""
    want = gold_lines(lines)
    xs: list[list[float]] = []
    ys: list[int] = []
    for cand in prep.candidates[:CALIBRATION_TOP]:
        if cand.path not in gold or cand.path not in lines:
            continue
        for index, region in enumerate(prep.regions[cand.path]):
            xs.append([round(v, 5) for v in region_features(index, region)])
            span = range(region.start_line, region.end_line + 1)
            ys.append(int(any((cand.path, n) in want for n in span)))
    return {"x": xs, "y": ys}


def related_tests_hit(
    fixes: FixCommits, git_dir: Path | None, task: Any, row: dict[str, Any]
) -> dict[str, Any] | None:
    """The test files the task's fix commit modified, and whether the largest pack (32 KB,
    or the largest budget run) served one of them; None when there is no fix commit here."""
    if git_dir is None or not task.base_commit:
        return None
    touched = fixes.tests_touched(git_dir, task.base_commit, task.problem_statement)
    if touched is None:
        return None
    served = row["excerpt"]["served"]
    budget = str(RELATED_BUDGET) if str(RELATED_BUDGET) in served else max(served, key=int)
    return {
        "touched": list(touched),
        "budget": int(budget),
        "in_pack": bool(set(touched) & set(served[budget])),
    }


def primary_summary(rows: Sequence[dict[str, Any]], budgets: Sequence[int]) -> dict[str, Any]:
    """Means over tasks: primary precision and recall, bytes used, coverage when stopping short,
    the share of such packs that did, and the related-tests share."""
    runs = [r["excerpt"] for r in rows]
    precision = [r["primary_precision"] for r in runs if r.get("primary_precision") is not None]
    recall = [r["primary_recall"] for r in runs if r.get("primary_recall") is not None]
    out: dict[str, Any] = {
        "primary": {
            "precision": round(mean(precision), 4),
            "recall": round(mean(recall), 4),
            "files": round(mean(len(r.get("primary", [])) for r in runs), 2),
            "tasks": len(recall),
        }
    }
    for key in ("bytes_used", "bytes_used_short", "line_coverage_short", "stopped_short"):
        out[key] = {
            str(b): round(mean(float(r[key][str(b)]) for r in runs if key in r), 4) for b in budgets
        }
    scored = [r["related_tests"] for r in rows if r.get("related_tests")]
    touched = [s for s in scored if s["touched"]]
    out["related_tests"] = {
        "fix_commits_found": len(scored),
        "tasks_touching_tests": len(touched),
        "share_in_pack": round(mean(float(s["in_pack"]) for s in touched), 4),
        "unscored": len(rows) - len(scored),
    }
    return out


def primary_table(report: dict[str, Any], budgets: Sequence[int]) -> list[str]:
    """Rows for the benchmark's Markdown table (excerpt only: BM25 has no such figures)."""
    if "primary" not in report:
        return []
    p = report["primary"]
    lines = [
        f"| primary precision ({p['tasks']} tasks, {p['files']} files a task) |"
        f" {p['precision'] * 100:.1f} | — |",
        f"| primary recall | {p['recall'] * 100:.1f} | — |",
    ]
    for b in budgets:
        key = str(b)
        lines.append(
            f"| line coverage @ {b} B, stop-short |"
            f" {report['line_coverage_short'][key] * 100:.1f} | — |"
        )
        lines.append(
            f"| budget used @ {b} B (stop-short) | {report['bytes_used'][key] * 100:.1f}"
            f" ({report['bytes_used_short'][key] * 100:.1f}) | — |"
        )
        lines.append(
            f"| stop-short packs that did @ {b} B | {report['stopped_short'][key] * 100:.1f} | — |"
        )
    rel = report["related_tests"]
    lines.append(
        f"| fix's test file in the pack ({rel['tasks_touching_tests']} tasks touching tests,"
        f" {rel['unscored']} without a fix commit) | {rel['share_in_pack'] * 100:.1f} | — |"
    )
    return lines
