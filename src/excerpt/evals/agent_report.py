"""The agent-run report: pair integrity, per-pair deltas, coverage of the benchmark matrix.

In: validated ``AgentRunRecord`` values. Out: an ``AgentRunReport``. Pure: no I/O, no clock.

A pair is the records sharing a ``pairId``; it is valid with exactly one ``baseline`` and one
``excerpt`` arm agreeing on everything that makes the comparison fair (fixture, category,
agent, provider, model, record class, outcome basis, evidence denominator, handoff
direction). Only a valid ``measured`` pair with provider tokens on both arms and no quality
regression counts as benchmark evidence; ``benchmarkEvidenceComplete`` needs such a pair for
every category and agent and for both handoff directions.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from excerpt.evals.agent_records import AGENTS, CATEGORIES, HANDOFF_DIRECTIONS, AgentRunRecord

__all__ = [
    "REPORT_SCHEMA",
    "AgentRunReport",
    "GroupSummary",
    "InvalidPair",
    "PairResult",
    "pair_problems",
    "report",
]

REPORT_SCHEMA = "excerpt.agent-runs-report/v1"
ARMS = ("baseline", "excerpt")
_QUALITY_RANK = {"fail": 0, "partial": 1, "pass": 2}
# (attribute, label) of every field the two arms must share; the label names the mismatch.
_MATCHED = (
    ("fixture", "fixture"),
    ("category", "category"),
    ("agent", "agent"),
    ("provider", "provider"),
    ("model", "model"),
    ("record_class", "record class"),
    ("outcome_basis", "outcome basis"),
    ("required_evidence", "denominator"),
    ("handoff_direction", "handoff direction"),
    ("pair_terms", "tokenizer, cap or tree"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidPair:
    """Records sharing a ``pairId`` that do not form a fair comparison, and every reason why."""

    pair_id: str
    run_ids: tuple[str, ...]
    reasons: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.reasons:
            raise ValueError("an invalid pair needs a reason")

    def to_dict(self) -> dict[str, Any]:
        return {"pairId": self.pair_id, "runIds": list(self.run_ids), "reasons": list(self.reasons)}


@dataclass(frozen=True, slots=True, kw_only=True)
class PairResult:
    """A valid pair: the baseline arm and the excerpt arm of the same run."""

    baseline: AgentRunRecord
    excerpt: AgentRunRecord

    def __post_init__(self) -> None:
        if (self.baseline.arm, self.excerpt.arm) != ARMS:
            raise ValueError("arms out of place")
        if self.baseline.pair_id != self.excerpt.pair_id:
            raise ValueError("records of different pairs")

    @property
    def has_tokens(self) -> bool:
        """Both arms carry provider-reported tokens."""
        return None not in (self.baseline.provider_tokens, self.excerpt.provider_tokens)

    @property
    def baseline_tokens(self) -> int | None:
        tokens = self.baseline.provider_tokens
        return tokens.total if tokens is not None else None

    @property
    def excerpt_tokens(self) -> int | None:
        tokens = self.excerpt.provider_tokens
        return tokens.total if tokens is not None else None

    @property
    def token_delta(self) -> int | None:
        """Excerpt minus baseline total tokens (negative: excerpt spent fewer)."""
        if self.baseline_tokens is None or self.excerpt_tokens is None:
            return None
        return self.excerpt_tokens - self.baseline_tokens

    @property
    def token_ratio(self) -> float | None:
        """Excerpt over baseline total tokens; None when unreported or the baseline is zero."""
        if self.baseline_tokens is None or self.excerpt_tokens is None:
            return None
        return self.excerpt_tokens / self.baseline_tokens if self.baseline_tokens else None

    @property
    def latency_delta_ms(self) -> int:
        return self.excerpt.latency_ms - self.baseline.latency_ms

    @property
    def quality_regression(self) -> bool:
        """The excerpt arm did worse than the baseline (pass > partial > fail)."""
        return _QUALITY_RANK[self.excerpt.quality] < _QUALITY_RANK[self.baseline.quality]

    @property
    def measured_with_tokens(self) -> bool:
        return self.baseline.record_class == "measured" and self.has_tokens

    @property
    def counts_as_evidence(self) -> bool:
        return self.measured_with_tokens and not self.quality_regression

    def to_dict(self) -> dict[str, Any]:
        b = self.baseline
        shared = {
            "pairId": b.pair_id,
            **{k: v for k, v in b.to_dict().items() if k in _SHARED_KEYS},
            "runIds": self._arms("run_id"),
        }
        return {**shared, **self._measures(), "countsAsEvidence": self.counts_as_evidence}

    def _measures(self) -> dict[str, Any]:
        ratio = self.token_ratio
        return {
            "tokens": {
                "baseline": self.baseline_tokens,
                "excerpt": self.excerpt_tokens,
                "delta": self.token_delta,
                "ratio": round(ratio, 4) if ratio is not None else None,
            },
            "latencyMs": {**self._arms("latency_ms"), "delta": self.latency_delta_ms},
            "quality": {**self._arms("quality"), "regression": self.quality_regression},
            "evidenceFound": self._arms("evidence_found"),
            "selectionPrecision": self._arms("selection_precision"),
            "selectionRecall": self._arms("selection_recall"),
            "cacheHotBytesChanged": self._arms("cache_hot_bytes_changed"),
        }

    def _arms(self, attribute: str) -> dict[str, Any]:
        return {
            "baseline": getattr(self.baseline, attribute),
            "excerpt": getattr(self.excerpt, attribute),
        }


_SHARED_KEYS = (
    "fixture",
    "category",
    "agent",
    "provider",
    "model",
    "recordClass",
    "outcomeBasis",
    "requiredEvidence",
    "handoffDirection",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSummary:
    """Valid pairs of one category, agent or handoff direction, summed up."""

    pairs: int
    measured_pairs_with_tokens: int
    evidence_pairs: int
    median_token_ratio: float | None  # over measured pairs with tokens only
    regressions: int

    def to_dict(self) -> dict[str, Any]:
        ratio = self.median_token_ratio
        return {
            "pairs": self.pairs,
            "measuredPairsWithTokens": self.measured_pairs_with_tokens,
            "evidencePairs": self.evidence_pairs,
            "medianTokenRatio": round(ratio, 4) if ratio is not None else None,
            "regressions": self.regressions,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentRunReport:
    """Everything ``excerpt eval agent-runs`` reports about one file of records."""

    records: int
    pairs: tuple[PairResult, ...]
    invalid_pairs: tuple[InvalidPair, ...]
    by_category: tuple[tuple[str, GroupSummary], ...]
    by_agent: tuple[tuple[str, GroupSummary], ...]
    by_handoff_direction: tuple[tuple[str, GroupSummary], ...]
    gaps: tuple[tuple[str, str], ...]  # (what is missing, why), in matrix order

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(item for item, _ in self.gaps)

    @property
    def benchmark_evidence_complete(self) -> bool:
        return not self.gaps

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": REPORT_SCHEMA,
            "records": self.records,
            "validPairs": len(self.pairs),
            "pairs": [pair.to_dict() for pair in self.pairs],
            "invalidPairs": [pair.to_dict() for pair in self.invalid_pairs],
            "byCategory": {name: s.to_dict() for name, s in self.by_category},
            "byAgent": {name: s.to_dict() for name, s in self.by_agent},
            "byHandoffDirection": {name: s.to_dict() for name, s in self.by_handoff_direction},
            "benchmarkEvidenceComplete": self.benchmark_evidence_complete,
            "missing": list(self.missing),
            "gaps": dict(self.gaps),
        }


def report(records: Sequence[AgentRunRecord]) -> AgentRunReport:
    """Check every pair in ``records`` and sum up what the valid pairs show."""
    pairs: list[PairResult] = []
    invalid: list[InvalidPair] = []
    for pair_id, members in _groups(records):
        reasons = pair_problems(members)
        if reasons:
            run_ids = tuple(m.run_id for m in members)
            invalid.append(InvalidPair(pair_id=pair_id, run_ids=run_ids, reasons=reasons))
        else:
            pairs.append(_pair(members))
    return AgentRunReport(
        records=len(records),
        pairs=tuple(pairs),
        invalid_pairs=tuple(invalid),
        by_category=_summaries(pairs, CATEGORIES, lambda p: p.baseline.category),
        by_agent=_summaries(pairs, AGENTS, lambda p: p.baseline.agent),
        by_handoff_direction=_summaries(
            pairs, HANDOFF_DIRECTIONS, lambda p: p.baseline.handoff_direction
        ),
        gaps=_gaps(pairs),
    )


def pair_problems(members: Sequence[AgentRunRecord]) -> tuple[str, ...]:
    """Every reason the records of one ``pairId`` are not a fair pair (empty: they are)."""
    reasons: list[str] = []
    for arm in ARMS:
        count = sum(1 for m in members if m.arm == arm)
        if count == 0:
            reasons.append(f"missing {arm} arm")
        elif count > 1:
            reasons.append(f"duplicate {arm} arm")
    for attribute, label in _MATCHED:
        if len({getattr(m, attribute) for m in members}) > 1:
            reasons.append(f"{label} mismatch")
    return tuple(reasons)


def _groups(records: Sequence[AgentRunRecord]) -> list[tuple[str, list[AgentRunRecord]]]:
    """Records by ``pairId``, pairs sorted by id, records in file order."""
    groups: dict[str, list[AgentRunRecord]] = {}
    for record in records:
        groups.setdefault(record.pair_id, []).append(record)
    return sorted(groups.items())


def _pair(members: Sequence[AgentRunRecord]) -> PairResult:
    by_arm = {m.arm: m for m in members}
    return PairResult(baseline=by_arm["baseline"], excerpt=by_arm["excerpt"])


def _summaries(
    pairs: Sequence[PairResult],
    names: Sequence[str],
    key: Callable[[PairResult], str | None],
) -> tuple[tuple[str, GroupSummary], ...]:
    return tuple((name, _summary([p for p in pairs if key(p) == name])) for name in names)


def _summary(pairs: Sequence[PairResult]) -> GroupSummary:
    measured = [p for p in pairs if p.measured_with_tokens]
    ratios = [r for r in (p.token_ratio for p in measured) if r is not None]
    return GroupSummary(
        pairs=len(pairs),
        measured_pairs_with_tokens=len(measured),
        evidence_pairs=sum(1 for p in pairs if p.counts_as_evidence),
        median_token_ratio=statistics.median(ratios) if ratios else None,
        regressions=sum(1 for p in pairs if p.quality_regression),
    )


def _gaps(pairs: Sequence[PairResult]) -> tuple[tuple[str, str], ...]:
    """Each cell of the benchmark matrix without evidence, with the reason it has none."""
    cells: list[tuple[str, list[PairResult]]] = [
        (f"{agent}: {category}", [p for p in pairs if _cell(p) == (agent, category)])
        for agent in AGENTS
        for category in CATEGORIES
    ]
    cells += [
        (f"handoff {direction}", [p for p in pairs if p.baseline.handoff_direction == direction])
        for direction in HANDOFF_DIRECTIONS
    ]
    return tuple((item, why) for item, cell in cells if (why := _shortfall(cell)) is not None)


def _cell(pair: PairResult) -> tuple[str, str]:
    return (pair.baseline.agent, pair.baseline.category)


def _shortfall(cell: Sequence[PairResult]) -> str | None:
    """Why no pair of ``cell`` counts as evidence, naming the furthest any pair got."""
    if any(p.counts_as_evidence for p in cell):
        return None
    if not cell:
        return "no valid pair"
    measured = [p for p in cell if p.baseline.record_class == "measured"]
    if not measured:
        return "no measured pair"
    if not any(p.has_tokens for p in measured):
        return "provider tokens not reported"
    return "quality regression"
