"""The risk suite: paths and task texts classified, compared with the concepts expected.

A case passes when the classified set equals the expected set exactly; ``guards_passed`` is
the pass rate of the cases tagged ``guard`` (the SPEC's own examples, floor 1.0).
"""

from __future__ import annotations

from typing import Any

from excerpt.evals.corpus import RiskCase, RiskCorpus, load_corpus
from excerpt.evals.metrics import mean
from excerpt.evals.suites import SuiteResult
from excerpt.risk import classify_path, concepts_from_query

__all__ = ["run_risk"]


def _score(case: RiskCase) -> dict[str, Any]:
    if case.path is not None:
        kind, text, got = "path", case.path, classify_path(case.path)
    else:
        kind, text = "query", case.query or ""
        got = concepts_from_query(text)
    return {
        "id": case.id,
        "kind": kind,
        "input": text,
        "expected": sorted(case.expected),
        "got": list(got),
        "pass": set(got) == set(case.expected),
        "guard": "guard" in case.tags,
    }


def run_risk(corpus: RiskCorpus | None = None) -> SuiteResult:
    """Accuracy over every case and over the guards.

    Raises:
        UsageError: the corpus is missing or malformed.
        EnvironmentFault: the risk vocabulary is missing or malformed.
    """
    corpus = corpus or load_corpus("risk.json", RiskCorpus)
    details = [_score(case) for case in corpus.cases]
    guards = [float(d["pass"]) for d in details if d["guard"]]
    metrics = {
        "accuracy": mean(float(d["pass"]) for d in details),
        "guards_passed": mean(guards),  # 0.0 without guards: a corpus cannot lose them quietly
    }
    return SuiteResult(
        name="risk", cases=len(details), passed=sum(d["pass"] for d in details),
        metrics=metrics, thresholds=dict(corpus.thresholds), details=details,
    )  # fmt: skip
