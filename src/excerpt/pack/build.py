"""Plan and pack: the index refreshed, files ranked, regions chosen, fitted to the budget.

Every excerpt's bytes come from a fresh guarded read of the file, hashed as read: what the
pack says is what the workspace holds. Lines the secret detector flags are cut out and
listed as omitted; every ranked region left out is listed with the bytes it needed.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt.core import git
from excerpt.core.hashing import sha256_hex
from excerpt.core.lines import split_lines
from excerpt.core.secrets import secret_lines
from excerpt.core.settings import Limits, repo_cache_dir
from excerpt.discover.reader import FileContent, Omission, read_file
from excerpt.errors import UsageError
from excerpt.index.build import IndexReport, ProgressFn, index_repository, resolve_root
from excerpt.index.graph import load_graph
from excerpt.index.store import IndexStore
from excerpt.index.view import IndexView
from excerpt.pack.handles import format_handle
from excerpt.pack.model import Item, Omitted, Pack, Plan, PlanEntry
from excerpt.pack.regions import Region, choose_regions, line_matches
from excerpt.rank.score import Candidate, Reason, rank_files
from excerpt.rank.task import Task, analyze_task

__all__ = ["PackRequest", "build_pack", "build_plan"]

_MAX_BUDGET = 10_000_000
_REASON_FOR_SIGNAL = {
    "stack_frame": "lines pinned by a stack-trace frame",
    "defines": "definition of a symbol named in the task",
    "match": "lines matching task terms",
    "head": "start of the file",
}
_WARNINGS = (
    ("bidi-control", re.compile("[\u202a-\u202e\u2066-\u2069]")),
    ("zero-width", re.compile("[\u200b-\u200d\u2060\ufeff]")),
    ("ansi-escape", re.compile("\x1b[\\[\\]]")),
)


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

    def __post_init__(self) -> None:
        if not 0 <= self.budget <= _MAX_BUDGET:
            raise UsageError(f"--budget must be between 0 and {_MAX_BUDGET} bytes")
        if not self.task.strip():
            raise UsageError("the task is empty")


@dataclass(frozen=True, slots=True)
class _Piece:
    """One contiguous, secret-free run of lines of a region, ready to serve."""

    candidate: Candidate
    region: Region
    start: int
    end: int
    data: bytes


@dataclass
class _Prepared:
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


def build_plan(request: PackRequest, progress: ProgressFn | None = None) -> Plan:
    """Ranked regions with reasons and sizes, and no source text (SPEC §4).

    Raises:
        UsageError, EnvironmentFault: as ``build_pack``.
    """
    prep = _prepare(request, progress)
    entries: list[PlanEntry] = []
    for cand, region, size in _ordered_regions(prep):
        prep.omitted.extend(_secret_omissions(prep, cand.path, region))
        entries.append(
            PlanEntry(
                rank=len(entries) + 1,
                path=cand.path,
                start_line=region.start_line,
                end_line=region.end_line,
                score=_region_score(cand, region),
                reasons=_reasons(cand, region),
                bytes=size,
            )
        )
    firsts = [e.bytes for e in entries[:12]]
    suggested = min(_MAX_BUDGET, math.ceil(sum(firsts) * 1.1 / 1000.0) * 1000)
    return Plan(
        candidates=tuple(entries),
        suggested_budget=max(suggested, 1000),
        omitted=_unique_omissions(prep.omitted),
    )


def build_pack(request: PackRequest, progress: ProgressFn | None = None) -> Pack:
    """A context pack for the task within ``request.budget`` bytes (SPEC §3).

    Raises:
        UsageError: bad budget, empty task, bad changed path or graph file.
        EnvironmentFault: the repository or cache cannot be used.
    """
    prep = _prepare(request, progress)
    remaining = request.budget
    items: list[Item] = []
    omitted = list(prep.omitted)
    for cand, region, _size in _ordered_regions(prep):
        for piece in _pieces(prep, cand, region, omitted):
            size = len(piece.data)
            if size <= remaining:
                items.append(_item(prep, piece, len(items) + 1, truncated=False))
                remaining -= size
                continue
            cut = _fragment(prep, piece, remaining)
            if cut is not None:
                items.append(_item(prep, cut, len(items) + 1, truncated=True))
                remaining -= len(cut.data)
                omitted.extend(_cut_away(prep, piece, cut))
            else:
                omitted.append(_budget_omission(prep, piece))
    _remember(prep, items)
    return Pack(
        task_sha256=sha256_hex(request.task.encode("utf-8", "surrogatepass")),
        budget_bytes=request.budget,
        items=tuple(items),
        omitted=_unique_omissions(omitted),
        warnings=tuple(_warnings(items)),
        graph=prep.graph,
        stats=_stats(prep),
    )


# -- preparation ---------------------------------------------------------------------------


def _prepare(request: PackRequest, progress: ProgressFn | None) -> _Prepared:
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
        candidates = rank_files(task, view, changed=changed, edges=edges)
        prep = _Prepared(
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
    raise UsageError(f"--changed path is outside the repository: {raw}")


def _read_candidates(prep: _Prepared, view: IndexView) -> None:
    symbols: dict[str, list[Any]] = {}
    for sym in view.symbols_in(c.path for c in prep.candidates):
        symbols.setdefault(sym.path, []).append(sym)
    weights = _term_weights(prep.task, view)
    kept: list[Candidate] = []
    for cand in prep.candidates:
        content = read_file(prep.root, cand.path, Limits())
        if isinstance(content, Omission):
            prep.omitted.append(Omitted(path=cand.path, reason=content.reason, score=cand.score))
            continue
        if content.binary or content.encoding not in ("utf-8", "utf-8-sig"):
            reason = "binary" if content.binary else "not_utf8"
            prep.omitted.append(Omitted(path=cand.path, reason=reason, score=cand.score))
            continue
        lines = split_lines(content.data)
        text_lines = [line.decode("utf-8") for line in lines]
        matches = line_matches(text_lines, weights)
        prep.files[cand.path] = (content, lines)
        prep.regions[cand.path] = choose_regions(
            len(lines), symbols.get(cand.path, []), cand.anchors, matches
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


def _refused_mentions(prep: _Prepared, view: IndexView) -> None:
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


# -- selection -----------------------------------------------------------------------------


def _ordered_regions(prep: _Prepared) -> list[tuple[Candidate, Region, int]]:
    """Every candidate's first region in rank order, then every further region."""
    firsts: list[tuple[Candidate, Region, int]] = []
    rest: list[tuple[Candidate, Region, int]] = []
    for cand in prep.candidates:
        _, lines = prep.files[cand.path]
        secret = {n for s, e in prep.secrets.get(cand.path, []) for n in range(s, e + 1)}
        for i, region in enumerate(prep.regions[cand.path]):
            size = sum(
                len(lines[n - 1])
                for n in range(region.start_line, region.end_line + 1)
                if n not in secret
            )
            (firsts if i == 0 else rest).append((cand, region, size))
    return firsts + rest


def _secret_cuts(prep: _Prepared, path: str, region: Region) -> list[tuple[int, int]]:
    """The secret line ranges inside a region, clipped to it."""
    return sorted(
        (max(s, region.start_line), min(e, region.end_line))
        for s, e in prep.secrets.get(path, [])
        if s <= region.end_line and e >= region.start_line
    )


def _secret_omissions(prep: _Prepared, path: str, region: Region) -> list[Omitted]:
    return [
        Omitted(path=path, reason="secret", start_line=lo, end_line=hi)
        for lo, hi in _secret_cuts(prep, path, region)
    ]


def _unique_omissions(omitted: list[Omitted]) -> tuple[Omitted, ...]:
    return tuple(sorted(dict.fromkeys(omitted), key=Omitted.sort_key))


def _pieces(
    prep: _Prepared, cand: Candidate, region: Region, omitted: list[Omitted]
) -> list[_Piece]:
    """The region split around secret lines (those are listed as omitted, never served)."""
    _, lines = prep.files[cand.path]
    omitted.extend(_secret_omissions(prep, cand.path, region))
    pieces: list[_Piece] = []
    start = region.start_line
    for lo, hi in _secret_cuts(prep, cand.path, region):
        if start < lo:
            pieces.append(_piece(cand, region, lines, start, lo - 1))
        start = hi + 1
    if start <= region.end_line:
        pieces.append(_piece(cand, region, lines, start, region.end_line))
    return pieces


def _piece(cand: Candidate, region: Region, lines: list[bytes], start: int, end: int) -> _Piece:
    return _Piece(cand, region, start, end, b"".join(lines[start - 1 : end]))


def _fragment(prep: _Prepared, piece: _Piece, remaining: int) -> _Piece | None:
    """The largest run of whole lines around the region's focus line that fits."""
    _, lines = prep.files[piece.candidate.path]
    focus = min(max(piece.region.focus, piece.start), piece.end)
    if len(lines[focus - 1]) > remaining:
        return None
    lo = hi = focus
    used = len(lines[focus - 1])
    while True:
        grew = False
        for nxt in (hi + 1, lo - 1):
            if piece.start <= nxt <= piece.end and not lo <= nxt <= hi:
                size = len(lines[nxt - 1])
                if used + size <= remaining:
                    used += size
                    lo, hi = min(lo, nxt), max(hi, nxt)
                    grew = True
        if not grew:
            break
    return _Piece(piece.candidate, piece.region, lo, hi, b"".join(lines[lo - 1 : hi]))


def _cut_away(prep: _Prepared, piece: _Piece, cut: _Piece) -> list[Omitted]:
    _, lines = prep.files[piece.candidate.path]
    out = []
    for lo, hi in ((piece.start, cut.start - 1), (cut.end + 1, piece.end)):
        if lo <= hi:
            size = sum(len(line) for line in lines[lo - 1 : hi])
            out.append(
                Omitted(
                    path=piece.candidate.path,
                    reason="budget",
                    score=piece.candidate.score,
                    bytes_needed=size,
                    start_line=lo,
                    end_line=hi,
                )
            )
    return out


def _budget_omission(prep: _Prepared, piece: _Piece) -> Omitted:
    return Omitted(
        path=piece.candidate.path, reason="budget",
        score=_region_score(piece.candidate, piece.region),
        bytes_needed=len(piece.data), start_line=piece.start, end_line=piece.end,
    )  # fmt: skip


def _region_score(cand: Candidate, region: Region) -> float:
    return round(cand.score * (0.5 + region.weight), 4)


def _reasons(cand: Candidate, region: Region) -> tuple[Reason, ...]:
    lines = Reason("match", _REASON_FOR_SIGNAL.get(region.signal, "lines chosen"))
    return (*cand.reasons, lines)


def _item(prep: _Prepared, piece: _Piece, rank: int, *, truncated: bool) -> Item:
    content, lines = prep.files[piece.candidate.path]
    exact = (piece.start, piece.end) == (piece.region.start_line, piece.region.end_line)
    if truncated:
        kind = "fragment"
    elif piece.start == 1 and piece.end == len(lines):
        kind = "file"
    elif exact and piece.region.kind != "file":
        kind = piece.region.kind
    else:  # a region split around secret lines
        kind = "window"
    return Item(
        rank=rank,
        path=piece.candidate.path,
        start_line=piece.start,
        end_line=piece.end,
        source_sha256=content.sha256,
        excerpt_sha256=sha256_hex(piece.data),
        bytes=len(piece.data),
        handle=format_handle(piece.candidate.path, piece.start, piece.end, content.sha256),
        kind=kind,
        truncated=truncated,
        score=_region_score(piece.candidate, piece.region),
        reasons=_reasons(piece.candidate, piece.region),
        text=piece.data.decode("utf-8"),
    )


def _remember(prep: _Prepared, items: Sequence[Item]) -> None:
    rows = []
    for item in items:
        _, lines = prep.files[item.path]
        first = sha256_hex(lines[item.start_line - 1])
        rows.append((item.handle, item.excerpt_sha256, item.end_line - item.start_line + 1, first))
    store = IndexStore.open(prep.cache)
    try:
        store.remember_handles(rows)
    finally:
        store.close()


def _warnings(items: Sequence[Item]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        for code, pattern in _WARNINGS:
            text = item.text[1:] if item.start_line == 1 and code == "zero-width" else item.text
            if pattern.search(text):
                out.append({"code": code, "path": item.path, "rank": item.rank})
    return out


def _stats(prep: _Prepared) -> dict[str, Any]:
    report = prep.report
    return {
        "files_discovered": report.files_discovered,
        "files_indexed": report.files_indexed,
        "files_skipped": sum(report.omitted.values()),
        "discovery_truncated": report.discovery_truncated,
        "candidates": len(prep.candidates),
    }
