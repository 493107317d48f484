"""Retrieval and coverage metrics. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "gold_lines",
    "line_coverage",
    "mean",
    "mrr",
    "nearest_rank",
    "precision_at",
    "recall_at",
]


def precision_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """Relevant share of the top ``k``, over what was returned (not over ``k``)."""
    top = ranked[:k]
    return sum(p in relevant for p in top) / len(top) if top else 0.0


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return sum(p in relevant for p in ranked[:k]) / len(relevant) if relevant else 0.0


def nearest_rank(samples: Sequence[float], q: float) -> float:
    """The sample at quantile ``q`` (0 to 1) of ``samples`` (not empty), the nearest rank."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def mrr(ranked: Sequence[str], relevant: set[str]) -> float:
    return next((1.0 / i for i, p in enumerate(ranked, start=1) if p in relevant), 0.0)


def gold_lines(expected: Mapping[str, Sequence[Sequence[int]]]) -> set[tuple[str, int]]:
    """Every ``(path, line)`` of ``{path: [[start, end], …]}`` ranges."""
    return {(p, n) for p, ranges in expected.items() for s, e in ranges for n in range(s, e + 1)}


def line_coverage(
    expected: Mapping[str, Sequence[Sequence[int]]], served: Iterable[tuple[str, int, int]]
) -> float:
    """Share of expected lines that lie inside served ``(path, start, end)`` ranges."""
    want = gold_lines(expected)
    if not want:
        return 0.0
    got = {(p, n) for p, s, e in served for n in range(s, e + 1)}
    return len(want & got) / len(want)


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0
