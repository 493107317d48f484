"""How likely each ranked file is one the change must touch. Pure.

In: ranked candidates (``excerpt.rank.score``) and the weights. Out: a confidence in [0, 1]
per candidate, a logistic function of features every ranking has: the file's score against
the top one and the next one, its share of the leading scores, its rank, its tier (a path the
task names, a stack frame) and the kinds of reasons it carries. Never a repository's name or
a path: what carries to a repository not seen is how the evidence looks, not where it is.

The coefficients are ``confidence_coefficients`` in ``weights.toml``, one per name of
``FEATURES`` in order, fitted by ``scripts/calibrate_confidence.py`` on the development sets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from excerpt.errors import UsageError
from excerpt.rank.score import RankedFile
from excerpt.rank.signals import TIER_PINNED
from excerpt.rank.weights import Weights

__all__ = ["FEATURES", "confidences", "features", "logistic"]

FEATURES = (
    "bias",
    "relative",  # score / top score
    "gap_next",  # (score - next score) / top score
    "share",  # score / the sum of the first five scores
    "inverse_rank",  # 1 / rank
    "first",  # ranked first
    "pinned",  # a named path or a stack frame lifted it into a tier
    "frame",  # a stack frame points into it
    "defines",  # defines a name the task gives
    "path",  # the task names its path, module or scope
    "title",  # the task's first line matches it
    "graph_only",  # only a neighbour of a stronger file
    "demoted",  # ranked down for its kind (test, docs, example, ...)
    "log_score",  # log(1 + score): how much evidence in absolute terms
)
_LEADING = 5


def features(candidates: Sequence[RankedFile]) -> list[tuple[float, ...]]:
    """One vector of ``FEATURES`` per candidate, in rank order."""
    if not candidates:
        return []
    top = max((c.score for c in candidates), default=0.0) or 1.0
    leading = sum(c.score for c in candidates[:_LEADING]) or 1.0
    out: list[tuple[float, ...]] = []
    for rank, cand in enumerate(candidates, start=1):
        nxt = candidates[rank].score if rank < len(candidates) else 0.0
        signals = {r.signal for r in cand.reasons}
        title = any(r.signal == "lexical" and "first line" in r.detail for r in cand.reasons)
        evidence = signals - {"graph", "demoted", "match", "risk"}
        out.append(
            (
                1.0,
                min(cand.score / top, 1.0),
                max(-1.0, min((cand.score - nxt) / top, 1.0)),
                min(cand.score / leading, 1.0),
                1.0 / rank,
                float(rank == 1),
                float(cand.tier >= TIER_PINNED),
                float("stack_frame" in signals),
                float("defines" in signals),
                float("path" in signals),
                float(title),
                float("graph" in signals and not evidence),
                float("demoted" in signals),
                math.log1p(max(cand.score, 0.0)),
            )
        )
    return out


def logistic(x: Sequence[float], coefficients: Sequence[float]) -> float:
    """``1 / (1 + e^-(x . coefficients))``, computed without overflow."""
    z = sum(a * b for a, b in zip(x, coefficients, strict=True))
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def confidences(candidates: Sequence[RankedFile], w: Weights) -> tuple[float, ...]:
    """Each candidate's confidence, rounded to 4 places (the same input, the same bytes). A
    file offered only because nothing matched (the repository's overview) has none: no
    evidence puts the change there.

    Raises:
        UsageError: ``confidence_coefficients`` does not have one number per feature.
    """
    coefficients = w.confidence_coefficients
    if len(coefficients) != len(FEATURES):
        raise UsageError(f"confidence_coefficients needs {len(FEATURES)} numbers")
    return tuple(
        0.0 if _fallback_only(c) else round(logistic(x, coefficients), 4)
        for c, x in zip(candidates, features(candidates), strict=True)
    )


def _fallback_only(cand: RankedFile) -> bool:
    return {r.signal for r in cand.reasons} <= {"fallback", "match", "risk"}
