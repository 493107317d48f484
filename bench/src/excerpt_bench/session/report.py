"""``report.json`` and ``report.md`` of ``excerpt bench session``: per arm, the tokens until
the first and until every gold changed line was in front of the model, with bootstrap 95%
intervals, per repository and per language, beside the better baseline arm. Pure.

A pair is one task's sessions, one per arm. Its arms must share the task, the tree, the
tokenizer, the cap and the evidence denominator; a pair that breaks one, or whose tree holds
no gold changed line, is excluded and listed with its reason, never averaged. A session that
never showed the lines counts as everything it could spend (its charge, at least the cap).
A hook arm's figures also say what its seeds were: their shapes, sizes, and how often their
regions held gold changed lines.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from excerpt_bench.reach import LEVELS

__all__ = ["SCRIPTED_NOTE", "pair_problems", "render_report", "summarise"]

REPORT_SCHEMA = "excerpt.session-report/v1"
RESAMPLES = 1000
_MATCHED = ("task", "tree_sha256", "tokenizer", "cap", "evidence")
SCRIPTED_NOTE = (
    "Every session here is scripted: a deterministic policy that uses the clients' real tool"
    " contracts and stops when the gold changed lines have been shown. It measures what"
    " reaching the evidence costs, not a model's judgement, and not whether a change would"
    " succeed. Records of real agent runs go through `excerpt eval agent-runs`. The scripted"
    " grep agents are much weaker than a real one (a real GPT-4 agent on SWE-bench Lite had"
    " seen every changed line within about 2,300 tokens of tool output in 39% of its tasks,"
    " within 9,000 in 67%): read no saving against a real agent into their ratios; the gold"
    " reach shares come first for that reason."
)


def pair_problems(row: dict[str, Any]) -> list[str]:
    """Why a task's sessions are not a fair comparison (empty: they are)."""
    sessions = list(row["sessions"].values())
    problems = [
        f"arms differ in {field}"
        for field in _MATCHED
        if len({repr(s.get(field)) for s in sessions}) > 1
    ]
    if sessions and not problems and sessions[0]["evidence"] == 0:
        problems.append("the tree holds none of the gold changed lines")
    return problems


def _bootstrap(values: Sequence[float], stat: Callable[[Sequence[float]], float]) -> list[float]:
    rng = random.Random(len(values))  # fixed: the same rows give the same interval
    draws = sorted(stat(rng.choices(values, k=len(values))) for _ in range(RESAMPLES))
    return [round(draws[int(0.025 * RESAMPLES)], 1), round(draws[int(0.975 * RESAMPLES) - 1], 1)]


def _figure(values: Sequence[float]) -> dict[str, Any]:
    if not values:
        return {"median": None, "mean": None, "ci95": {"median": None, "mean": None}}
    return {
        "median": round(statistics.median(values), 1),
        "mean": round(statistics.fmean(values), 1),
        "ci95": {
            "median": _bootstrap(values, statistics.median),
            "mean": _bootstrap(values, statistics.fmean),
        },
    }


def _seeds(sessions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A hook arm's seeds: shares by shape, median tokens of those sent, and the shares
    whose regions held some and every gold changed line."""
    n = len(sessions)
    sent = [s["seed"]["tokens"] for s in sessions if s["seed"]["shape"] != "none"]
    held = [s["seed"]["gold_lines_in_regions"] for s in sessions]
    return {
        "shape": {k: round(sum(s["seed"]["shape"] == k for s in sessions) / n, 4)
                  for k in ("pack", "map", "none")},
        "tokens": {"median": statistics.median(sent) if sent else None},
        "some_gold_in_regions_share": round(sum(g > 0 for g in held) / n, 4),
        "all_gold_in_regions_share": round(
            sum(g >= s["evidence"] for g, s in zip(held, sessions, strict=True)) / n, 4
        ),
    }  # fmt: skip


def _reach(sessions: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Gold reach: the share of sessions that had seen every gold changed line within each
    level of tokens (``excerpt_bench.reach.LEVELS``), as ``bench localize`` reports a pack's."""
    n = len(sessions)
    if not n:
        return {}
    return {
        str(level): round(
            sum(s["reached_all"] and s["tokens_to_all_gold_censored"] <= level for s in sessions)
            / n,
            4,
        )
        for level in LEVELS
    }


def _arm_summary(sessions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    n = len(sessions)
    seeded = [s for s in sessions if "seed" in s]
    seeds = {"seed": _seeds(seeded)} if seeded else {}
    return {
        "n": n,
        "reach": _reach(sessions),
        "tokens_to_first_gold": _figure([s["tokens_to_first_gold_censored"] for s in sessions]),
        "tokens_to_all_gold": _figure([s["tokens_to_all_gold_censored"] for s in sessions]),
        "recall_at_cap": round(statistics.fmean(s["recall_at_cap"] for s in sessions), 4)
        if n else None,
        "irrelevant_bytes": {"median": statistics.median(s["irrelevant_bytes"] for s in sessions)
                             if n else None},
        "tool_calls": {"median": statistics.median(s["tool_calls"] for s in sessions)
                       if n else None},
        "reached_all_share": round(sum(s["reached_all"] for s in sessions) / n, 4) if n else None,
        "overhead_tokens_per_turn": max((s["overhead_tokens_per_turn"] for s in sessions),
                                        default=0),
        **seeds,
    }  # fmt: skip


def _arms(rows: Sequence[dict[str, Any]], arms: Sequence[str]) -> dict[str, Any]:
    return {a: _arm_summary([r["sessions"][a] for r in rows if a in r["sessions"]]) for a in arms}


def _against(arms: dict[str, Any]) -> dict[str, Any]:
    """Each excerpt arm beside the better baseline arm of the same rows."""
    baselines = {a: m for a, m in arms.items() if a.endswith("-baseline") and m["n"]}
    if not baselines:
        return {}

    def best(key: str, lower: bool = True) -> tuple[str, float]:
        pick = min if lower else max
        name = pick(baselines, key=lambda a: _value(baselines[a], key))
        return name, _value(baselines[name], key)

    out: dict[str, Any] = {}
    for arm, m in arms.items():
        if arm.endswith("-baseline") or not m["n"]:
            continue
        all_name, all_base = best("tokens_to_all_gold")
        first_name, first_base = best("tokens_to_first_gold")
        reach_name, reach_base = best("reached_all_share", lower=False)
        recall_name, recall_base = best("recall_at_cap", lower=False)
        irr_name, irr_base = best("irrelevant_bytes")
        out[arm] = {
            "tokens_to_all_gold_ratio": _ratio(_value(m, "tokens_to_all_gold"), all_base),
            "better_baseline_all_gold": all_name,
            "tokens_to_first_gold_ratio": _ratio(_value(m, "tokens_to_first_gold"), first_base),
            "better_baseline_first_gold": first_name,
            "reached_all_share": m["reached_all_share"],
            "better_baseline_reached_all_share": reach_base,
            "better_baseline_reached": reach_name,
            "recall_at_cap": m["recall_at_cap"],
            "better_baseline_recall_at_cap": recall_base,
            "better_baseline_recall": recall_name,
            "irrelevant_bytes_ratio": _ratio(_value(m, "irrelevant_bytes"), irr_base),
            "better_baseline_irrelevant": irr_name,
        }
    return out


def _value(summary: dict[str, Any], key: str) -> float:
    value = summary[key]
    if isinstance(value, dict):
        value = value["median"]
    return float(value) if value is not None else float("inf")


def _ratio(ours: float, theirs: float) -> float | None:
    return round(ours / theirs, 4) if theirs not in (0, float("inf")) else None


def summarise(rows: Sequence[dict[str, Any]], arms: Sequence[str], cap: int) -> dict[str, Any]:
    """The report of a run's rows (``run.run_session_bench``)."""
    kept, excluded = [], []
    for row in rows:
        problems = pair_problems(row)
        if problems:
            excluded.append({"instance_id": row["instance_id"], "reasons": problems})
        else:
            kept.append(row)
    arm_figures = _arms(kept, arms)
    report: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "n": len(kept),
        "cap": cap,
        "tokenizer": "o200k",
        "record_class": "scripted",
        "note": SCRIPTED_NOTE,
        "arms": arm_figures,
        "against_better_baseline": _against(arm_figures),
        "pairs_excluded": excluded,
    }
    for key, field in (("per_repo", "repo"), ("per_language", "language")):
        groups = sorted({r[field] for r in kept})
        report[key] = {}
        for group in groups:
            members = [r for r in kept if r[field] == group]
            figures = _arms(members, arms)
            report[key][group] = {
                "n": len(members), "arms": figures, "against_better_baseline": _against(figures),
            }  # fmt: skip
    return report


def _k(value: float | None) -> str:
    return "-" if value is None else f"{value / 1000:.1f}k"


def _seed_table(arms: dict[str, Any]) -> list[str]:
    seeded = {a: m["seed"] for a, m in arms.items() if m["n"] and "seed" in m}
    if not seeded:
        return []
    lines = [
        "",
        "| hook arm | seeds: pack / map / none | seed tokens (median) |"
        " regions hold some gold | regions hold all gold |",
        "| --- | --- | --- | --- | --- |",
    ]
    for arm, seed in seeded.items():
        shares = " / ".join(f"{seed['shape'][k] * 100:.0f}%" for k in ("pack", "map", "none"))
        tokens = seed["tokens"]["median"]
        lines.append(
            f"| {arm} | {shares} | {'-' if tokens is None else f'{tokens:,.0f}'}"
            f" | {seed['some_gold_in_regions_share'] * 100:.0f}%"
            f" | {seed['all_gold_in_regions_share'] * 100:.0f}% |"
        )
    lines += [
        "",
        "A hook arm's seed is charged first, in the request the prompt opens (no tool call,"
        " no tool definitions again); a map's regions hold gold it points at, not shows.",
    ]
    return lines


def render_report(report: dict[str, Any]) -> str:
    lines = [
        f"# Session benchmark ({report['n']} tasks, cap {report['cap']:,} o200k tokens)",
        "",
        report["note"],
        "",
        "Gold reach: the share of sessions that had seen every changed line within each number"
        " of o200k tokens.",
        "",
        "| arm | " + " | ".join(f"≤ {level:,}" for level in LEVELS) + " |",
        "| --- |" + " --- |" * len(LEVELS),
    ]
    for arm, m in report["arms"].items():
        if m["n"] and m.get("reach"):
            shares = " | ".join(f"{m['reach'][str(level)] * 100:.0f}%" for level in LEVELS)
            lines.append(f"| {arm} | {shares} |")
    lines += [
        "",
        "| arm | to first gold (median, 95% CI) | to all gold (median, 95% CI) | reached all |"
        " recall at cap | irrelevant bytes | tool calls | tool definitions a turn |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for arm, m in report["arms"].items():
        if not m["n"]:
            continue
        first, every = m["tokens_to_first_gold"], m["tokens_to_all_gold"]
        ci_f, ci_a = first["ci95"]["median"], every["ci95"]["median"]
        lines.append(
            f"| {arm} | {_k(first['median'])} ({_k(ci_f[0])}-{_k(ci_f[1])})"
            f" | {_k(every['median'])} ({_k(ci_a[0])}-{_k(ci_a[1])})"
            f" | {m['reached_all_share'] * 100:.0f}% | {m['recall_at_cap'] * 100:.0f}%"
            f" | {m['irrelevant_bytes']['median']:,.0f} | {m['tool_calls']['median']:g}"
            f" | {m['overhead_tokens_per_turn']:,} |"
        )
    lines += [
        "",
        "Tool definitions a turn: the tokens excerpt's MCP tool list and instructions"
        " add to every model request of an excerpt arm, charged in every figure above.",
    ]
    lines += _seed_table(report["arms"])
    for title, key in (("repository", "per_repo"), ("language", "per_language")):
        lines += [
            "",
            f"| {title} | tasks | arm | to all gold (median) | vs better baseline |"
            " to first gold | reached all |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for group, g in report[key].items():
            for arm, m in g["arms"].items():
                if not m["n"]:
                    continue
                vs = g["against_better_baseline"].get(arm, {}).get("tokens_to_all_gold_ratio")
                lines.append(
                    f"| {group} | {g['n']} | {arm} | {_k(m['tokens_to_all_gold']['median'])}"
                    f" | {'-' if vs is None else f'{vs:.2f}x'}"
                    f" | {_k(m['tokens_to_first_gold']['median'])}"
                    f" | {m['reached_all_share'] * 100:.0f}% |"
                )
    if report["pairs_excluded"]:
        lines += ["", f"Pairs excluded: {len(report['pairs_excluded'])}"]
        lines += [f"- {p['instance_id']}: {'; '.join(p['reasons'])}"
                  for p in report["pairs_excluded"]]  # fmt: skip
    return "\n".join(lines) + "\n"
