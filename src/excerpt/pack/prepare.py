"""Everything a plan or pack needs before selection: the index refreshed, the task analysed,
files ranked and read (guarded), regions chosen, secret lines found.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from excerpt.core.limits import DEFAULT_BUDGET, MAX_BUDGET
from excerpt.core.lines import split_lines
from excerpt.core.memo import Memo, register
from excerpt.core.secrets import secret_lines
from excerpt.core.settings import Limits
from excerpt.core.vocabulary import OmissionReason
from excerpt.discover.reader import FileContent, Omission, read_file
from excerpt.errors import UsageError
from excerpt.index.build import IndexReport
from excerpt.index.history import HistorySource
from excerpt.index.view import IndexView, ReplayMiss, SymbolSpan, edges_near
from excerpt.pack.handles import Handle, parse_handle
from excerpt.pack.model import Omitted
from excerpt.pack.regions import Region, choose_regions, line_matches
from excerpt.pack.related import names_to_find, regions_of_test, related_tests
from excerpt.rank.confidence import confidences
from excerpt.rank.score import RankedFile, rank_files
from excerpt.rank.signals import TIER_CHANGED
from excerpt.rank.task import Task
from excerpt.rank.weights import Weights, default_weights

__all__ = [
    "MAX_BUDGET",
    "FileSource",
    "PackRequest",
    "Prepared",
    "WorkspaceFiles",
    "prepare_ranked",
]


MAX_HELD = 10_000  # handles a pack request may say it holds


@dataclass(frozen=True, slots=True, kw_only=True)
class PackRequest:
    """What a plan or pack is asked for."""

    repo: str | os.PathLike[str]
    task: str
    budget: int = DEFAULT_BUDGET
    changed: tuple[str, ...] = ()
    changed_from_git: bool = False
    graph_file: Path | None = None
    cache_dir: Path | None = None
    use_graph: bool = True  # False: rank without graph neighbours (for equal-budget evals)
    fill: bool = True  # False: stop short of the budget when confidence says the rest is noise
    # handles the caller already holds: their lines are not sent again while their file is
    # unchanged (parsed, so a malformed one is refused before any work)
    held: tuple[str, ...] = ()
    # where the history signal's past commits come from (None: the repository's own git);
    # a tree exported from a commit names its git directory and commit
    history: HistorySource | None = None
    # the report of a refresh the caller knows the index is still current after (a watcher
    # saw no change since it began): the pack reads the index as it is, without refreshing
    index: IndexReport | None = None
    # files read for selection (None: the ranking's own number, ``Weights.candidates``); a
    # small pack that is never filled past its first files reads fewer and answers sooner
    candidates: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.budget <= MAX_BUDGET:
            raise UsageError(f"--budget must be between 0 and {MAX_BUDGET} bytes")
        if not self.task.strip():
            raise UsageError("the task is empty")
        if len(self.held) > MAX_HELD:
            raise UsageError(f"at most {MAX_HELD:,} held handles")
        for handle in self.held:
            parse_handle(handle)
        if self.candidates is not None and self.candidates < 1:
            raise UsageError("at least one candidate file must be read")

    def held_handles(self) -> tuple[Handle, ...]:
        return tuple(parse_handle(h) for h in self.held)


class FileSource(Protocol):
    """Where a pack reads a ranked file's bytes: the workspace, or a recording of it."""

    def read(self, path: str) -> FileContent | Omission:
        """The file's content, or why it is not read (never raises for the file's state)."""
        ...


@dataclass(frozen=True, slots=True)
class WorkspaceFiles:
    """``FileSource`` over the repository, through the guarded reader."""

    root: Path
    limits: Limits = field(default_factory=Limits)

    def read(self, path: str) -> FileContent | Omission:
        return read_file(self.root, path, self.limits)


@dataclass(frozen=True, slots=True, kw_only=True)
class Prepared:
    """A ranking with the files read: what selection needs, and nothing it must fetch."""

    root: Path
    cache: Path
    report: IndexReport
    candidates: tuple[RankedFile, ...]
    files: Mapping[str, tuple[FileContent, tuple[bytes, ...]]]
    regions: Mapping[str, tuple[Region, ...]]
    secrets: Mapping[str, tuple[tuple[int, int], ...]]
    omitted: tuple[Omitted, ...]
    graph: dict[str, Any] | None
    task: Task
    weights: Weights
    # each candidate's confidence that the change touches it; the primary files (the first
    # always); the tests of primary files (test, primary) and the lines to show of each
    confidence: Mapping[str, float] = field(default_factory=dict)
    primary: tuple[str, ...] = ()
    related: tuple[tuple[str, str | None], ...] = ()
    related_regions: Mapping[str, tuple[Region, ...]] = field(default_factory=dict)
    # files whose definitions the index holds do not match their bytes (a span past the end,
    # a name its span never writes): their definitions were not used, and their rows are to
    # be read again
    suspect: tuple[str, ...] = ()


def prepare_ranked(
    task: Task,
    view: IndexView,
    source: FileSource,
    *,
    root: Path,
    cache: Path,
    report: IndexReport,
    changed: Sequence[str] = (),
    edges: Sequence[tuple[str, str, str]] | None = None,
    graph: dict[str, Any] | None = None,
    weights: Weights | None = None,
) -> Prepared:
    """Rank the files for ``task`` and read the ranked ones: regions and secret lines.

    Touches nothing but ``view`` and ``source``, so a recorded view and recorded files give
    the same result with no index and no tree.
    """
    w = weights or default_weights()
    candidates = rank_files(task, view, changed=changed, edges=edges, weights=w)
    read = _read_candidates(task, candidates, view, source, w)
    refused = _refused_mentions(task, view, read.omitted)
    sure = dict(zip((c.path for c in read.kept), confidences(read.kept, w), strict=True))
    # the first file, a file the change is known to touch, and every confident one
    primary = tuple(
        c.path
        for n, c in enumerate(read.kept)
        if n == 0 or c.tier >= TIER_CHANGED or sure[c.path] >= w.primary_confidence
    )
    related = _read_related(read, primary, view, source, edges, w)
    return Prepared(
        root=root, cache=cache, report=report, candidates=tuple(read.kept), files=read.files,
        regions=read.regions, secrets=read.secrets, omitted=(*read.omitted, *refused),
        graph=graph, task=task, weights=w, confidence=sure, primary=primary,
        related=tuple(related), related_regions=read.related_regions,
        suspect=tuple(sorted(read.suspect)),
    )  # fmt: skip


@dataclass(slots=True)
class _Read:
    kept: list[RankedFile] = field(default_factory=list)
    files: dict[str, tuple[FileContent, tuple[bytes, ...]]] = field(default_factory=dict)
    regions: dict[str, tuple[Region, ...]] = field(default_factory=dict)
    secrets: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    omitted: list[Omitted] = field(default_factory=list)
    symbols: dict[str, list[SymbolSpan]] = field(default_factory=dict)
    related_regions: dict[str, tuple[Region, ...]] = field(default_factory=dict)
    suspect: set[str] = field(default_factory=set)


def _read_candidates(
    task: Task, candidates: Sequence[RankedFile], view: IndexView, source: FileSource, w: Weights
) -> _Read:
    out = _Read()
    symbols = out.symbols
    for sym in view.symbols_in(c.path for c in candidates):
        symbols.setdefault(sym.path, []).append(sym)
    weights = _term_weights(task, view, w)
    first_with: dict[str, str] = {}  # content hash -> the first ranked path holding it
    for cand in candidates:
        content = source.read(cand.path)
        if isinstance(content, Omission):
            # discovery's reasons are SPEC §3.1's (Omitted checks each on construction)
            reason = cast("OmissionReason", content.reason)
            out.omitted.append(Omitted(path=cand.path, reason=reason, score=cand.score))
            continue
        if content.data and first_with.setdefault(content.sha256, cand.path) != cand.path:
            # a symlink or a copy of a file ranked above: its lines are already on offer
            same = first_with[content.sha256]
            out.omitted.append(
                Omitted(path=cand.path, reason="duplicate", score=cand.score, duplicate_of=same)
            )
            continue
        if content.binary or content.encoding not in ("utf-8", "utf-8-sig"):
            reason = "binary" if content.binary else "not_utf8"
            out.omitted.append(Omitted(path=cand.path, reason=reason, score=cand.score))
            continue
        lines = split_lines(content.data)
        text_lines = [line.decode("utf-8") for line in lines]
        _check_symbols(out, cand.path, text_lines)
        matches = line_matches(text_lines, weights)
        out.files[cand.path] = (content, tuple(lines))
        out.secrets[cand.path] = _secrets(content.sha256, text_lines)
        # the strongest files get more of their matching places to choose from
        depth = w.deep_regions if len(out.kept) < w.deep_files else w.shallow_regions
        chosen = choose_regions(
            len(lines), symbols.get(cand.path, []), cand.anchors, matches, depth, text_lines,
            geometry=w,
        )  # fmt: skip
        secrets = out.secrets[cand.path]
        # a region that is nothing but secret lines has nothing to serve or to plan: it is
        # listed as omitted, and the file's next region takes its place
        regions = []
        for region in chosen:
            if _all_secret(region, secrets):
                out.omitted.append(
                    Omitted(
                        path=cand.path,
                        reason="secret",
                        start_line=region.start_line,
                        end_line=region.end_line,
                    )
                )
            else:
                regions.append(region)
        out.regions[cand.path] = tuple(regions)
        if regions:
            out.kept.append(cand)
    return out


def _check_symbols(read: _Read, path: str, text_lines: Sequence[str]) -> None:
    """Leave out the definitions the index holds for ``path`` when they do not match the
    file's lines just read, and mark the file ``suspect`` (its rows are read again)."""
    if not _spans_hold_names(text_lines, read.symbols.get(path, ())):
        read.suspect.add(path)
        read.symbols[path] = []  # none of them is relied on


def _spans_hold_names(text_lines: Sequence[str], symbols: Sequence[SymbolSpan]) -> bool:
    """Whether each definition the index holds for a file lies within the file's lines and
    writes its name there: what a pack serves of a definition rests on the file's bytes,
    not on rows that could have been changed in the cache (a digest has no key)."""
    if not symbols:
        return True
    starts = [0, *itertools.accumulate(map(len, text_lines))]
    text = "".join(text_lines)
    total = len(text_lines)
    for sym in symbols:
        if not 1 <= sym.start_line <= sym.end_line <= total:
            return False
        if text.find(sym.name, starts[sym.start_line - 1], starts[sym.end_line]) < 0:
            return False
    return True


# files' secret lines remembered by content hash: a few hundred KB
_secrets_seen: Memo[str, tuple[tuple[int, int], ...]] = register(
    Memo("secret_lines", max_entries=8192)
)


def _secrets(sha256: str, text_lines: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """The secret lines of a file, by the hash of its bytes: a long-lived process (the MCP
    server) scans each version of a file once, however many packs rank it. The key is the
    hash of the bytes just read, never a stored row, so nothing on disk can vouch for them."""
    return _secrets_seen.get_or_make(
        sha256,
        lambda: tuple((f.start_line, f.end_line) for f in secret_lines("".join(text_lines))),
    )


def _read_related(
    read: _Read,
    primary: Sequence[str],
    view: IndexView,
    source: FileSource,
    edges: Sequence[tuple[str, str, str]] | None,
    w: Weights,
) -> list[tuple[str, str | None]]:
    """The tests of the primary files (the index's test association), read, with the test
    functions to show of each (those naming the primary file's definitions); then the test
    files the task's own words rank best, with their best regions: a fix's test is often one
    the association misses (a package's tests, a test named for a behaviour)."""
    ranks = {c.path: n for n, c in enumerate(read.kept, start=1)}

    edges_of = functools.partial(edges_near, view, edges)
    # the primary files' tests, and every file each of those tests (the most specific first)
    chosen = set(primary)
    tests = {src for src, dst, kind in edges_of(chosen) if kind == "tests" and dst in chosen}
    graph = edges_of({*primary, *tests})
    out: list[tuple[str, str | None]] = []
    for test, subject in related_tests(primary, graph, ranks, w):
        if test not in read.files and not _read_one(read, test, view, source):
            continue
        lines = read.files[test][1]
        text_lines = [line.decode("utf-8") for line in lines]
        names = names_to_find(
            read.symbols.get(subject, []), read.regions.get(subject, ()),
            len(read.files[subject][1]),
        )  # fmt: skip
        regions = regions_of_test(text_lines, read.symbols.get(test, []), names, w)
        regions = tuple(r for r in regions if not _all_secret(r, read.secrets[test]))
        if regions:
            read.related_regions[test] = regions
            out.append((test, subject))
    files = view.files()
    taken = {t for t, _ in out} | set(primary)
    ranked = [c.path for c in read.kept if c.path not in taken and files[c.path].is_test]
    for test in ranked[: w.related_ranked]:
        best = read.regions[test][: w.related_regions]
        read.related_regions[test] = tuple(sorted(best, key=lambda r: r.start_line))
        out.append((test, None))
    return out


def _read_one(read: _Read, path: str, view: IndexView, source: FileSource) -> bool:
    """Read a file outside the ranking (a related test) into ``read``; False when it cannot
    be served. A recording made before related tests were read lacks it: left out, so a
    replay of an older recording serves fewer tests than a live run, never others."""
    try:
        content = source.read(path)
        found = view.symbols_in([path])
    except ReplayMiss:
        return False
    if isinstance(content, Omission) or content.binary:
        return False
    if content.encoding not in ("utf-8", "utf-8-sig"):
        return False
    lines = split_lines(content.data)
    text_lines = [line.decode("utf-8") for line in lines]
    read.files[path] = (content, tuple(lines))
    read.secrets[path] = _secrets(content.sha256, text_lines)
    read.symbols[path] = list(found)
    _check_symbols(read, path, text_lines)
    return True


def _all_secret(region: Region, secrets: Sequence[tuple[int, int]]) -> bool:
    covered = {
        n for s, e in secrets for n in range(max(s, region.start_line), min(e, region.end_line) + 1)
    }
    return len(covered) == region.end_line - region.start_line + 1


def _term_weights(task: Task, view: IndexView, w: Weights) -> dict[str, float]:
    """IDF of the task's most telling terms, for finding lines: the rarest ones that occur,
    and none that most files hold (they would mark half of every file)."""
    df = view.document_frequencies(task.terms)
    n = max(len(view.files()), 1)
    ordered = sorted((d, t) for t, d in df.items() if d > 0)
    telling = [(d, t) for d, t in ordered if d <= n * w.line_term_share]
    # a small repository can hold every word of the task in most files: keep the rarest few
    chosen = telling if len(telling) >= 3 else ordered[:3]
    return {t: math.log((n - d + 0.5) / (d + 0.5) + 1.0) for d, t in chosen[: w.line_terms]}


def _refused_mentions(task: Task, view: IndexView, omitted: Sequence[Omitted]) -> list[Omitted]:
    """Paths the task names that discovery refused: listed, never opened."""
    refused = dict(view.omitted())
    for path, status in ((p, f.status) for p, f in view.files().items() if f.status):
        refused[path] = status or "binary"
    listed = {o.path for o in omitted}
    out = []
    for mention in task.paths:
        for path, reason in refused.items():
            named = path == mention or path.endswith("/" + mention)
            if named and path not in listed:
                out.append(Omitted(path=path, reason=cast("OmissionReason", reason)))
                listed.add(path)
    return out
