"""Token savings: pack size against a naive dump of every text file and against the whole
files the pack touches, with the retrieval result beside it (a random pack saves as much as
a perfect one). Exact o200k counts come from ``bpe-openai``, which ships the vocabulary."""

from __future__ import annotations

import hashlib
import heapq
import statistics
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from excerpt.core.limits import DEFAULT_BUDGET
from excerpt.core.settings import repo_cache_dir
from excerpt.core.tokens import o200k_count
from excerpt.discover.walk import resolve_root
from excerpt.evals.corpus import RetrievalCorpus, load_corpus, materialise
from excerpt.evals.suites import Packer, SuiteResult, default_packer
from excerpt.index.build import index_repository
from excerpt.index.store import IndexStore
from excerpt.index.tokens import split_identifier
from excerpt.index.view import SymbolSpan
from excerpt.pack import PackRequest

__all__ = ["SavingsTask", "derived_tasks", "o200k_counter", "run_savings", "savings_suite"]

Counter = Callable[[str], int]


class _Thresholds(BaseModel):
    model_config = ConfigDict(extra="forbid")
    suite: str
    thresholds: dict[str, float]


@dataclass(frozen=True, slots=True)
class SavingsTask:
    task: str
    expected: tuple[str, ...] = ()


def o200k_counter() -> Counter:
    """Exact o200k_base token counts, offline."""
    return o200k_count


def _texts(root: Path, cache: Path | None) -> dict[str, str]:
    index_repository(root, cache_dir=cache)
    store = IndexStore.open(repo_cache_dir(root, cache))
    try:
        files = store.view().files()
    finally:
        store.close()
    out = {}
    for path, info in sorted(files.items()):
        if info.status is None and info.encoding in ("utf-8", "utf-8-sig"):
            try:
                out[path] = (root / path).read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
    return out


def derived_tasks(root: Path, cache: Path | None, count: int = 20) -> list[SavingsTask]:
    """Tasks made from the repository's own definitions ("fix the bug in <words>"), each
    expecting its defining file: deterministic, and a known answer to score against."""
    index_repository(root, cache_dir=cache)
    store = IndexStore.open(repo_cache_dir(root, cache))
    try:
        view = store.view()
        paths = sorted(p for p, f in view.files().items() if f.status is None and not f.is_test)

        def named() -> Iterator[SymbolSpan]:
            # the definitions a few thousand files at a time: a tree of 100,000 files holds
            # millions, and only ``count`` of them are kept
            for i in range(0, len(paths), 2000):
                for s in view.symbols_in(paths[i : i + 2000]):
                    if s.kind in ("function", "method", "class") and len(s.name) > 6:
                        yield s

        chosen = heapq.nsmallest(
            count,
            named(),
            key=lambda s: hashlib.sha256(f"{s.path}:{s.qualname}".encode()).hexdigest(),
        )
    finally:
        store.close()
    return [
        SavingsTask(f"fix the bug in {' '.join(split_identifier(s.name)[:4])}", (s.path,))
        for s in chosen
    ]


def run_savings(
    root: Path,
    tasks: Sequence[SavingsTask],
    *,
    budget: int = DEFAULT_BUDGET,
    cache: Path | None = None,
    packer: Packer = default_packer,
    count: Counter | None = None,
) -> list[dict[str, Any]]:
    """Per task: bytes and tokens of the pack, of the whole files it touches, of everything."""
    count = count or o200k_counter()
    texts = _texts(root, cache)
    naive = sum(count(t) for t in texts.values())
    rows = []
    for task in tasks:
        pack = packer(PackRequest(repo=root, task=task.task, budget=budget, cache_dir=cache))
        touched = sorted({i["path"] for i in pack["items"]})
        # what the model receives: the whole rendering when the packer gives its count
        rendered = pack["budget"].get("tokens", {}).get("o200k")
        pack_tokens = (
            rendered if rendered is not None else sum(count(i["text"]) for i in pack["items"])
        )
        touched_tokens = sum(count(texts.get(p, "")) for p in touched)
        rows.append({
            "task": task.task[:120],
            "pack_bytes": pack["budget"].get("rendered_bytes", pack["budget"]["used_bytes"]),
            "pack_tokens": pack_tokens,
            "touched_files_tokens": touched_tokens,
            "naive_tokens": naive,
            "saving_vs_naive": 1 - pack_tokens / naive if naive else 0.0,
            "saving_vs_touched": 1 - pack_tokens / touched_tokens if touched_tokens else 0.0,
            "hit": bool(task.expected) and any(p in touched for p in task.expected),
        })  # fmt: skip
    return rows


def savings_suite(packer: Packer = default_packer) -> SuiteResult:
    """Savings over the retrieval corpus, where the right files are known."""
    corpus: RetrievalCorpus = load_corpus("retrieval.json", RetrievalCorpus)
    thresholds = dict(load_corpus("savings.json", _Thresholds).thresholds)
    count = o200k_counter()
    rows: list[dict[str, Any]] = []
    for case in corpus.cases:
        if not case.expected_primary:
            continue
        with tempfile.TemporaryDirectory(prefix="excerpt-eval-") as tmp:
            root = materialise(case.repo_fixtures, Path(tmp))
            task = SavingsTask(case.task, tuple(case.expected_primary))
            rows += run_savings(
                root,
                [task],
                budget=corpus.budget,
                cache=Path(tmp) / "c",
                packer=packer,
                count=count,
            )
    return summarise("savings", rows, thresholds)


def summarise(name: str, rows: list[dict[str, Any]], thresholds: dict[str, float]) -> SuiteResult:
    metrics = {
        "median_saving_vs_naive": statistics.median(r["saving_vs_naive"] for r in rows)
        if rows
        else 0.0,
        "median_saving_vs_touched": statistics.median(r["saving_vs_touched"] for r in rows)
        if rows
        else 0.0,
        "hit_rate": sum(r["hit"] for r in rows) / len(rows) if rows else 0.0,
    }
    return SuiteResult(
        name=name, cases=len(rows), passed=sum(r["hit"] for r in rows), metrics=metrics,
        thresholds=thresholds, details=rows,
    )  # fmt: skip


def savings_for_repo(repo: str, tasks: Sequence[SavingsTask] | None, budget: int) -> SuiteResult:
    """``eval --savings REPO``: the given tasks, or tasks derived from the repository."""
    root = resolve_root(repo)
    chosen = list(tasks) if tasks else derived_tasks(root, None)
    return summarise("savings", run_savings(root, chosen, budget=budget), {})
