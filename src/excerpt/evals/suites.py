"""The accuracy and context suites: cases packed by a packer, scored, compared to floors."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import excerpt.deliver as deliver
from excerpt.evals.corpus import (
    ContextCase,
    ContextCorpus,
    RetrievalCase,
    RetrievalCorpus,
    load_corpus,
    materialise,
)
from excerpt.evals.metrics import line_coverage, mean, mrr, precision_at, recall_at
from excerpt.pack import PackRequest

__all__ = ["Packer", "SuiteResult", "default_packer", "run_accuracy", "run_context"]

Packer = Callable[[PackRequest], dict[str, Any]]
ARMS = ("lexical", "+changed", "+graph")
CATEGORIES = (
    "monorepo-bug-fix", "issue-triage", "ci-log-diagnosis", "multi-file-refactor",
    "json-tool-output", "cross-agent-handoff",
)  # fmt: skip


def default_packer(request: PackRequest) -> dict[str, Any]:
    """The pack a model receives: its whole rendering fitted to the budget."""
    return dict(deliver.build_pack(request).pack.to_dict())


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteResult:
    name: str
    cases: int
    passed: int
    metrics: dict[str, float]
    thresholds: dict[str, float]
    details: list[dict[str, Any]] = field(default_factory=list)
    tables: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(self.metrics.get(k, 0.0) >= floor - 1e-9 for k, floor in self.thresholds.items())

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "passed": self.passed,
            "metrics": {k: round(v, 4) for k, v in sorted(self.metrics.items())},
            "thresholds": dict(sorted(self.thresholds.items())),
            "pass": self.ok,
            "details": self.details,
            **({"tables": self.tables} if self.tables else {}),
        }


def _ranked(pack: dict[str, Any]) -> list[str]:
    """The pack's files in the ranking's order (``file_rank``; a test the ranking never
    reached after them, in reading order): excerpts are read by their chance of holding a
    changed line, so the reading order is not the ranking."""
    files = list(dict.fromkeys(item["path"] for item in pack["items"]))
    rank = {i["path"]: i.get("file_rank", len(files) + 1_000_000) for i in pack["items"]}
    return sorted(files, key=lambda p: rank[p])


def _score_retrieval(case: RetrievalCase, pack: dict[str, Any], k: int) -> dict[str, Any]:
    ranked = _ranked(pack)
    relevant = set(case.expected_primary) | set(case.expected_any_of)
    if not relevant:  # pure fallback: something sane must come back
        passed = bool(pack["items"])
        return {"id": case.id, "pass": passed, "ranked": ranked[:k], "fallback": True}
    passed = all(p in ranked[:k] for p in case.expected_primary) and (
        not case.expected_any_of or any(p in ranked for p in case.expected_any_of)
    )
    primary = _primary(pack)
    return {
        "id": case.id,
        "pass": passed,
        "ranked": ranked[:k],
        "primary": primary,
        "precision@k": precision_at(ranked, relevant, k),
        "recall@k": recall_at(ranked, relevant, k),
        "mrr": mrr(ranked, relevant),
        **_seed_precision(case, primary, relevant),
    }


def _primary(pack: dict[str, Any]) -> list[str]:
    """The files a pack marks ``primary``: what it returns as the files to change."""
    return list(dict.fromkeys(i["path"] for i in pack["items"] if i.get("role") == "primary"))


def _seed_precision(
    case: RetrievalCase, primary: Sequence[str], relevant: set[str]
) -> dict[str, float]:
    """Precision with the returned files as denominator (the returned files are the primary
    ones), and recall of the expected primary files among them (with none expected, of any
    one of the acceptable files)."""
    returned = set(primary)
    precision = len(returned & relevant) / len(returned) if returned else 0.0
    if case.expected_primary:
        want = set(case.expected_primary)
        recall = len(returned & want) / len(want)
    else:
        recall = float(bool(returned & set(case.expected_any_of)))
    return {"precision": precision, "recall": recall}


def _request(root: Path, cache: Path, task: str, budget: int, **kw: Any) -> PackRequest:
    return PackRequest(repo=root, task=task, budget=budget, cache_dir=cache, **kw)


def run_accuracy(
    packer: Packer = default_packer, corpus: RetrievalCorpus | None = None
) -> SuiteResult:
    """The retrieval corpus: precision@k, recall@k, MRR, the pass rate, and precision and
    recall of the primary files (precision's denominator: the files returned as primary)."""
    corpus = corpus or load_corpus("retrieval.json", RetrievalCorpus)
    details = []
    for case in corpus.cases:
        with tempfile.TemporaryDirectory(prefix="excerpt-eval-") as tmp:
            root = materialise(case.repo_fixtures, Path(tmp))
            changed = tuple(str(root / c) for c in case.changed)
            # filled: the rank metrics read the ranking as far as the budget goes; the
            # primary files, which precision and recall read, are the same either way
            request = _request(
                root, Path(tmp) / "cache", case.task, corpus.budget, changed=changed, fill=True
            )
            pack = packer(request)
        details.append(_score_retrieval(case, pack, corpus.k))
    scored = [d for d in details if not d.get("fallback")]
    metrics = {
        "pass_rate": mean(float(d["pass"]) for d in details),
        "precision@k": mean(d["precision@k"] for d in scored),
        "recall@k": mean(d["recall@k"] for d in scored),
        "mrr": mean(d["mrr"] for d in scored),
        "precision": mean(d["precision"] for d in scored),
        "recall": mean(d["recall"] for d in scored),
    }
    return SuiteResult(
        name="accuracy", cases=len(details), passed=sum(d["pass"] for d in details),
        metrics=metrics, thresholds=dict(corpus.thresholds), details=details,
    )  # fmt: skip


def _arm_request(case: ContextCase, root: Path, cache: Path, budget: int, arm: str) -> PackRequest:
    changed = () if arm == "lexical" else tuple(str(root / c) for c in case.changed)
    return _request(root, cache, case.task, budget, changed=changed, use_graph=arm == "+graph")


def _score_context(case: ContextCase, pack: dict[str, Any]) -> dict[str, float]:
    served = [(i["path"], i["start_line"], i["end_line"]) for i in pack["items"]]
    paths = {p for p, _, _ in served}
    return {
        "file_recall": sum(f in paths for f in case.expected_files) / len(case.expected_files),
        "line_coverage": line_coverage(case.expected_lines, served),
    }


def run_context(
    packer: Packer = default_packer, corpus: ContextCorpus | None = None
) -> SuiteResult:
    """The six task categories, each case packed three ways at the same budget."""
    corpus = corpus or load_corpus("context.json", ContextCorpus)
    details: list[dict[str, Any]] = []
    for case in corpus.cases:
        with tempfile.TemporaryDirectory(prefix="excerpt-eval-") as tmp:
            root = materialise(case.repo_fixtures, Path(tmp))
            arms = {
                arm: _score_context(
                    case, packer(_arm_request(case, root, Path(tmp) / "cache", corpus.budget, arm))
                )
                for arm in ARMS
            }
        details.append({"id": case.id, "category": case.category, "arms": arms})
    table = _category_table(details)
    not_worse = [
        row["+graph"]["line_coverage"] >= row["lexical"]["line_coverage"] - 1e-9
        and row["+graph"]["file_recall"] >= row["lexical"]["file_recall"] - 1e-9
        for row in table.values()
    ]
    metrics = {
        "line_coverage": mean(d["arms"]["+graph"]["line_coverage"] for d in details),
        "file_recall": mean(d["arms"]["+graph"]["file_recall"] for d in details),
        "lexical_line_coverage": mean(d["arms"]["lexical"]["line_coverage"] for d in details),
        "categories_not_worse_than_lexical": mean(float(x) for x in not_worse),
    }
    passed = sum(d["arms"]["+graph"]["file_recall"] == 1.0 for d in details)
    return SuiteResult(
        name="context", cases=len(details), passed=passed, metrics=metrics,
        thresholds=dict(corpus.thresholds), details=details, tables={"categories": table},
    )  # fmt: skip


def _category_table(details: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    table: dict[str, dict[str, dict[str, float]]] = {}
    for category in CATEGORIES:
        rows = [d for d in details if d["category"] == category]
        if rows:
            table[category] = {
                arm: {
                    metric: round(mean(r["arms"][arm][metric] for r in rows), 4)
                    for metric in ("file_recall", "line_coverage")
                }
                for arm in ARMS
            }
    return table
