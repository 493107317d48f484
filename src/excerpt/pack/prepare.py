"""Everything a plan or pack needs before selection: the index refreshed, the task analysed,
files ranked and read (guarded), regions chosen, secret lines found.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt.core import git
from excerpt.core.lines import split_lines
from excerpt.core.secrets import secret_lines
from excerpt.core.settings import Limits, repo_cache_dir
from excerpt.discover.reader import FileContent, Omission, read_file
from excerpt.errors import UsageError
from excerpt.index.build import IndexReport, ProgressFn, index_repository, resolve_root
from excerpt.index.graph import load_graph
from excerpt.index.store import IndexStore
from excerpt.index.view import IndexView
from excerpt.pack.model import Omitted
from excerpt.pack.regions import Region, choose_regions, line_matches
from excerpt.rank.score import Candidate, rank_files
from excerpt.rank.task import Task, analyze_task

__all__ = ["MAX_BUDGET", "PackRequest", "Prepared", "prepare"]

MAX_BUDGET = 10_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class PackRequest:
    """What a plan or pack is asked for."""

    repo: str | os.PathLike[str]
    task: str
    budget: int = 32_000
    changed: tuple[str, ...] = ()
    changed_from_git: bool = False
    graph_file: Path | None = None
    cache_dir: Path | None = None
    use_graph: bool = True  # False: rank without graph neighbours (for equal-budget evals)

    def __post_init__(self) -> None:
        if not 0 <= self.budget <= MAX_BUDGET:
            raise UsageError(f"--budget must be between 0 and {MAX_BUDGET} bytes")
        if not self.task.strip():
            raise UsageError("the task is empty")


@dataclass
class Prepared:
    root: Path
    cache: Path
    report: IndexReport
    candidates: list[Candidate]
    files: dict[str, tuple[FileContent, list[bytes]]]
    regions: dict[str, list[Region]]
    secrets: dict[str, list[tuple[int, int]]]
    omitted: list[Omitted]
    graph: dict[str, Any] | None
    task: Task


def prepare(request: PackRequest, progress: ProgressFn | None) -> Prepared:
    root = resolve_root(request.repo)
    report = index_repository(root, cache_dir=request.cache_dir, progress=progress)
    cache = repo_cache_dir(root, request.cache_dir)
    store = IndexStore.open(cache)
    try:
        view = IndexView(store.conn)
        task = analyze_task(request.task)
        changed = _changed_paths(root, view, request)
        graph: dict[str, Any] | None = None
        edges = None
        if request.graph_file is not None:
            edges, digest = load_graph(request.graph_file)
            graph = {
                "source": "file",
                "sha256": digest,
                "integrity": "valid",
                "note": "integrity valid, freshness unverified",
            }
        if not request.use_graph:
            edges = []
        if progress is not None:
            progress(0, 0, "rank")
        candidates = rank_files(task, view, changed=changed, edges=edges)
        prep = Prepared(
            root=root, cache=cache, report=report, candidates=candidates, files={}, regions={},
            secrets={}, omitted=[], graph=graph, task=task,
        )  # fmt: skip
        _read_candidates(prep, view)
        _refused_mentions(prep, view)
        return prep
    finally:
        store.close()


def _changed_paths(root: Path, view: IndexView, request: PackRequest) -> list[str]:
    changed = [_changed_path(root, raw) for raw in request.changed]
    if request.changed_from_git:
        files = view.files()
        head = git.head_blobs(root) if git.work_tree_top(root) is not None else None
        if head is not None:
            changed += [
                p for p, f in files.items() if f.status is None and head.get(p) != f.git_blob
            ]
            changed += [p for p in git.staged_paths(root) if p in files]
        else:
            changed += [p for p, f in files.items() if f.status is None]
    return sorted(set(changed))


def _changed_path(root: Path, raw: str) -> str:
    """A ``--changed`` path as a workspace path: absolute, or relative to the repository
    (as git prints them), or else to the current directory.

    Raises:
        UsageError: it is outside the repository.
    """
    path = Path(raw)
    options = [path] if path.is_absolute() else [root / path, Path.cwd() / path]
    inside: list[str] = []
    for option in options:
        try:
            rel = option.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            continue
        if option.exists():
            return rel
        inside.append(rel)
    if inside:
        return inside[0]  # a deleted file: still a changed path
    raise UsageError("a changed path is outside the repository")


def _read_candidates(prep: Prepared, view: IndexView) -> None:
    symbols: dict[str, list[Any]] = {}
    for sym in view.symbols_in(c.path for c in prep.candidates):
        symbols.setdefault(sym.path, []).append(sym)
    weights = _term_weights(prep.task, view)
    kept: list[Candidate] = []
    first_with: dict[str, str] = {}  # content hash -> the first ranked path holding it
    for cand in prep.candidates:
        content = read_file(prep.root, cand.path, Limits())
        if isinstance(content, Omission):
            prep.omitted.append(Omitted(path=cand.path, reason=content.reason, score=cand.score))
            continue
        if content.data and first_with.setdefault(content.sha256, cand.path) != cand.path:
            # a symlink or a copy of a file ranked above: its lines are already on offer
            same = first_with[content.sha256]
            prep.omitted.append(
                Omitted(path=cand.path, reason="duplicate", score=cand.score, duplicate_of=same)
            )
            continue
        if content.binary or content.encoding not in ("utf-8", "utf-8-sig"):
            reason = "binary" if content.binary else "not_utf8"
            prep.omitted.append(Omitted(path=cand.path, reason=reason, score=cand.score))
            continue
        lines = split_lines(content.data)
        text_lines = [line.decode("utf-8") for line in lines]
        matches = line_matches(text_lines, weights)
        prep.files[cand.path] = (content, lines)
        # the strongest files get more of their matching places to choose from
        depth = _DEEP_REGIONS if len(kept) < _DEEP_FILES else _SHALLOW_REGIONS
        prep.regions[cand.path] = choose_regions(
            len(lines), symbols.get(cand.path, []), cand.anchors, matches, depth, text_lines
        )
        found = secret_lines("".join(text_lines))
        prep.secrets[cand.path] = [(f.start_line, f.end_line) for f in found]
        # a region that is nothing but secret lines has nothing to serve or to plan: it is
        # listed as omitted, and the file's next region takes its place
        regions = []
        for region in prep.regions[cand.path]:
            if _all_secret(region, prep.secrets[cand.path]):
                prep.omitted.append(
                    Omitted(
                        path=cand.path,
                        reason="secret",
                        start_line=region.start_line,
                        end_line=region.end_line,
                    )
                )
            else:
                regions.append(region)
        prep.regions[cand.path] = regions
        if prep.regions[cand.path]:
            kept.append(cand)
    prep.candidates = kept


_LINE_TERMS = 24
_DEEP_FILES, _DEEP_REGIONS, _SHALLOW_REGIONS = 8, 12, 2


def _all_secret(region: Region, secrets: list[tuple[int, int]]) -> bool:
    covered = {
        n for s, e in secrets for n in range(max(s, region.start_line), min(e, region.end_line) + 1)
    }
    return len(covered) == region.end_line - region.start_line + 1


def _term_weights(task: Task, view: IndexView) -> dict[str, float]:
    """IDF of the task's most telling terms, for finding lines: the rarest ones that occur,
    and none that most files hold (they would mark half of every file)."""
    df = view.document_frequencies(task.terms)
    n = max(len(view.files()), 1)
    ordered = sorted((d, t) for t, d in df.items() if d > 0)
    telling = [(d, t) for d, t in ordered if d <= n * 0.25]
    # a small repository can hold every word of the task in most files: keep the rarest few
    chosen = telling if len(telling) >= 3 else ordered[:3]
    return {t: math.log((n - d + 0.5) / (d + 0.5) + 1.0) for d, t in chosen[:_LINE_TERMS]}


def _refused_mentions(prep: Prepared, view: IndexView) -> None:
    """Paths the task names that discovery refused: listed, never opened."""
    refused = dict(view.omitted())
    for path, status in ((p, f.status) for p, f in view.files().items() if f.status):
        refused[path] = status or "binary"
    listed = {o.path for o in prep.omitted}
    for mention in prep.task.paths:
        for path, reason in refused.items():
            named = path == mention or path.endswith("/" + mention)
            if named and path not in listed:
                prep.omitted.append(Omitted(path=path, reason=reason))
                listed.add(path)
