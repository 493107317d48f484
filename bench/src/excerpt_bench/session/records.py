"""A session benchmark's rows as ``eval agent-runs`` records (``record_class: scripted``),
so the report that reads real runs reads these too. One record per task and arm; a task's
sessions of one client form a pair (its baseline, excerpt and excerpt-stop-short arms). The
hook arms have no record: the record's ``arm`` names no hook arm, and a pair takes one
``excerpt`` arm (``report.json`` has their figures)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from excerpt.tooling import AgentRunRecord
from excerpt_bench.session.arms import arm_named

__all__ = ["session_records"]

_AGENT = {"claude": "claude-code", "codex": "codex"}


def _quality(session: dict[str, Any]) -> str:
    if session["reached_all"]:
        return "pass"
    return "partial" if session["gold_shown"] else "fail"


def session_records(rows: Sequence[dict[str, Any]]) -> Iterator[AgentRunRecord]:
    """Validated records of every row whose pair is fair (its evidence is not empty)."""
    for row in rows:
        for name, s in row["sessions"].items():
            if s["evidence"] == 0:
                continue
            arm = arm_named(name)
            if arm.hook is not None:
                continue
            kind = (
                "baseline" if not arm.excerpt else "excerpt" if arm.fill else "excerpt-stop-short"
            )
            total = sum(c["bytes"] for c in s["calls"])
            yield AgentRunRecord.model_validate(
                {
                    "runId": f"{row['instance_id']}:{name}",
                    "pairId": f"{row['instance_id']}:{arm.client}",
                    "fixture": row["instance_id"],
                    "category": "issue-triage",
                    "agent": _AGENT[arm.client],
                    "provider": "none (scripted)",
                    "model": "scripted-policy/1",
                    "arm": kind,
                    "recordClass": "scripted",
                    "outcomeBasis": "diff-match",
                    "requiredEvidence": s["evidence"],
                    "evidenceFound": s["gold_shown"],
                    "providerTokens": None,
                    "latencyMs": 0,
                    "selectionPrecision": round(1 - s["irrelevant_bytes"] / total, 6)
                    if total else None,
                    "selectionRecall": s["recall_at_cap"],
                    "quality": _quality(s),
                    "cacheHotBytesChanged": 0,
                    "session": {
                        "armName": name, "tokenizer": s["tokenizer"], "cap": s["cap"],
                        "treeSha256": s["tree_sha256"],
                        "tokensToFirstGold": s["tokens_to_first_gold"],
                        "tokensToAllGold": s["tokens_to_all_gold"],
                        "toolCalls": s["tool_calls"], "irrelevantBytes": s["irrelevant_bytes"],
                        "overheadTokensPerTurn": s["overhead_tokens_per_turn"],
                        "calls": [
                            {"tool": c["tool"], "arguments": c["arguments"],
                             "bytes": c["bytes"], "tokens": c["tokens"]}
                            for c in s["calls"]
                        ],
                    },
                }
            )  # fmt: skip
