"""``excerpt eval agent-runs FILE``: records of real baseline-vs-excerpt agent runs, checked.

In: a file of records (``load_records``). Out: an ``AgentRunReport`` (``report``) listing every
invalid pair with its reasons, per-pair token and latency deltas, per-category, per-agent and
per-handoff-direction summaries, and ``benchmarkEvidenceComplete`` with what is still missing.
The schema lives in ``agent_records``, the report in ``agent_report``; this module is the
entry point the CLI uses.
"""

from __future__ import annotations

from excerpt.evals.agent_records import (
    AGENTS,
    CATEGORIES,
    HANDOFF_CATEGORY,
    HANDOFF_DIRECTIONS,
    AgentRunRecord,
    ProviderTokens,
    load_records,
)
from excerpt.evals.agent_report import (
    REPORT_SCHEMA,
    AgentRunReport,
    GroupSummary,
    InvalidPair,
    PairResult,
    pair_problems,
    report,
)

__all__ = [
    "AGENTS",
    "CATEGORIES",
    "HANDOFF_CATEGORY",
    "HANDOFF_DIRECTIONS",
    "REPORT_SCHEMA",
    "AgentRunRecord",
    "AgentRunReport",
    "GroupSummary",
    "InvalidPair",
    "PairResult",
    "ProviderTokens",
    "load_records",
    "pair_problems",
    "report",
]
