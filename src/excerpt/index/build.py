"""Bring a repository's index up to date: discover, read what changed, write, resolve.

Crash-safe by construction: file rows are written in batched transactions, each row
self-contained; the graph is resolved again in the batch's wake: a file's own imports alone when
only its import rows changed (``graph_pending``), the whole graph when a file was added or
removed or its language, package or manifest changed (``graph_dirty``); a run that never
finished leaves ``clean=0`` so the next open checks integrity first.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from excerpt.core.durable import crash_point
from excerpt.core.settings import INDEX_DB, Limits, repo_cache_dir
from excerpt.discover.reader import Omission
from excerpt.discover.walk import (
    JUNK_DIRS,
    Discovery,
    FoundFile,
    discover,
    file_verdict,
    resolve_root,
)
from excerpt.errors import CacheFault
from excerpt.index.db import CorruptIndex, is_corruption, make_cache_dir, writer_lock
from excerpt.index.history import (
    HistoryReport,
    HistorySource,
    history_enabled,
    is_current,
    plan_history,
    source_of_root,
)
from excerpt.index.lang import extraction_signature, is_test_path, language_of
from excerpt.index.process import process_paths
from excerpt.index.records import FileRecord
from excerpt.index.resolve import resolve_graph, resolve_imports
from excerpt.index.store import DamagedRows, IndexStore
from excerpt.index.workers import CRASHED, WorkerPool

__all__ = ["IndexReport", "ProgressFn", "index_repository", "rebuild_index", "refresh_paths"]


class ProgressFn(Protocol):
    """Told ``(done, total, phase)`` as work goes on; ``total`` 0 when it is not known."""

    def __call__(self, done: int, total: int, phase: str | None = None) -> None: ...


_BATCH = 500
_CHUNK = 48
_PARALLEL_MIN = 200  # below this, worker start-up costs more than it saves
_PENDING_MAX = 500  # files whose own imports alone are resolved again; more: the whole graph
KEEP_RUNS = 100  # index runs the runs table keeps (the latest)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexReport:
    """What an index run found and did (SPEC §11 ``index --json`` keys first)."""

    files_discovered: int
    files_indexed: int
    symbols: int
    edges: int
    languages: dict[str, int]
    omitted: dict[str, int]
    discovery_truncated: bool
    seconds: float
    files_read: int = 0
    files_removed: int = 0
    rows_rebuilt: int = 0  # files read again because their rows in the cache were damaged
    rebuilt: str | None = None
    omitted_paths: tuple[tuple[str, str], ...] = ()
    cache_dir: Path | None = field(default=None, compare=False)
    # the past commits held for the history signal (ancestors of the head it was built for)
    history_commits: int = 0
    history_skipped: int = 0  # held but never matched: they changed too many files
    history_truncated: bool = False  # older ancestors left out by the cap
    history_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "files_discovered": self.files_discovered,
            "files_indexed": self.files_indexed,
            "symbols": self.symbols,
            "edges": self.edges,
            "languages": dict(self.languages),
            "omitted": dict(self.omitted),
            "discovery_truncated": self.discovery_truncated,
            "seconds": round(self.seconds, 3),
            "files_read": self.files_read,
            "files_removed": self.files_removed,
            "rows_rebuilt": self.rows_rebuilt,
            "cache_rebuilt": self.rebuilt,
            "history": {
                "commits": self.history_commits,
                "skipped_too_many_files": self.history_skipped,
                "truncated": self.history_truncated,
                "seconds": round(self.history_seconds, 3),
            },
        }


def index_repository(
    repo: str | os.PathLike[str],
    *,
    cache_dir: Path | None = None,
    limits: Limits | None = None,
    progress: ProgressFn | None = None,
    jobs: int | None = None,
    history: HistorySource | Literal["repository"] | None = "repository",
) -> IndexReport:
    """Build or refresh the index of ``repo`` and report what it holds.

    ``history`` is where the past commits come from: by default the git repository holding
    ``repo``, at its ``HEAD`` (none outside git); a ``HistorySource`` names a git directory
    and head commit; None holds none. Inside ``history_disabled`` the stored history is
    left as it is, unread and unused.

    Raises:
        NotADirectoryFault: ``repo`` is not a readable directory.
        GitFault: git refuses the repository.
        CacheFault: the cache cannot be used (CacheBusy: another writer holds it).
    """
    started = time.perf_counter()
    root = resolve_root(repo)
    limits = limits or Limits()
    cache = repo_cache_dir(root, cache_dir)
    make_cache_dir(cache)
    with writer_lock(cache):
        if progress is not None:
            progress(0, 0, "discover")
        found = discover(root, limits)
        if progress is not None:
            listed = len(found.candidates) + len(found.omitted)
            progress(listed, listed, "discover")
        store = IndexStore.open(cache)
        try:
            try:
                done = _run(store, root, found, limits, progress, jobs, history)
            except Exception as exc:
                if not is_corruption(exc):
                    raise
                store.close()
                store = IndexStore.rebuild(cache, f"damaged content ({type(exc).__name__})")
                done = _run(store, root, found, limits, progress, jobs, history)
            (read, removed, mended), past, summary, omitted_paths = done
        except sqlite3.Error as exc:
            raise CacheFault(f"the index database failed: {exc}") from exc
        finally:
            store.close()
    return IndexReport(
        files_discovered=len(found.candidates) + len(found.omitted),
        discovery_truncated=found.truncated,
        seconds=time.perf_counter() - started,
        files_read=read,
        files_removed=removed,
        rows_rebuilt=mended,
        rebuilt=store.rebuilt,
        cache_dir=cache,
        omitted_paths=omitted_paths,
        history_commits=past.commits,
        history_skipped=past.skipped,
        history_truncated=past.truncated,
        history_seconds=past.seconds,
        **summary,
    )


def _run(
    store: IndexStore,
    root: Path,
    found: Discovery,
    limits: Limits,
    progress: ProgressFn | None,
    jobs: int | None,
    history: HistorySource | Literal["repository"] | None,
) -> tuple[tuple[int, int, int], HistoryReport, dict[str, Any], tuple[tuple[str, str], ...]]:
    """One run over an open store: the update, the history, and what the report reads back
    (any of which may find the database damaged)."""
    counts = _update(store, found, limits, progress, jobs)
    past = _history(store, root, history, progress)
    shape = _discovery_shape(found)
    if store.meta("discovery") != shape:  # written when it changes, not every run
        store.set_meta(discovery=shape)
    return counts, past, store.summary(), tuple(store.omitted_paths())


def rebuild_index(
    repo: str | os.PathLike[str],
    why: str,
    *,
    cache_dir: Path | None = None,
    progress: ProgressFn | None = None,
    history: HistorySource | Literal["repository"] | None = "repository",
) -> IndexReport:
    """Throw away ``repo``'s index database (moved aside, as any damaged one is) and build it
    again; the report says why in ``rebuilt``.

    Raises:
        NotADirectoryFault, GitFault, CacheFault: as ``index_repository``.
    """
    root = resolve_root(repo)
    cache = repo_cache_dir(root, cache_dir)
    make_cache_dir(cache)
    with writer_lock(cache):
        IndexStore.rebuild(cache, why).close()
    report = index_repository(root, cache_dir=cache_dir, progress=progress, history=history)
    return dataclasses.replace(report, rebuilt=why)


_WALK = "walk"
_LINKS_MAX = 256  # links looked at on every refresh of named paths; more: the tree is walked
# a change to one of these can change which files discovery lists, or how: the whole tree
# is looked at again
_DISCOVERY_FILES = frozenset(
    {".gitignore", ".excerptignore", "excerpt.toml", "pyproject.toml", "pyvenv.cfg", ".git"}
)


def refresh_paths(
    repo: str | os.PathLike[str],
    paths: Collection[str],
    *,
    cache_dir: Path | None = None,
    limits: Limits | None = None,
    jobs: int | None = None,
) -> IndexReport | None:
    """The index of ``repo`` brought up to date when only ``paths`` (relative to its root,
    as a file-system watcher names them) can have changed since its last refresh: those
    files are looked at, not the tree. None when the change is not one of files already
    indexed being written (a file added, removed or replaced by another kind, a path
    discovery refused, a file that decides what discovery lists, the git directory): then
    only a whole refresh (``index_repository``) can say what changed.

    Every path discovery never lists (inside ``node_modules``, ``__pycache__``, …) is no
    change. The result equals ``index_repository``'s for the same tree, its history aside
    (the git directory is unchanged, so the stored history stands).

    Raises:
        NotADirectoryFault: ``repo`` is not a readable directory.
        CacheFault: the cache cannot be used (CacheBusy: another writer holds it).
    """
    started = time.perf_counter()
    root = resolve_root(repo)
    limits = limits or Limits()
    names = []
    for path in paths:
        parts = path.split("/")
        if not path or any(p in ("", ".", "..") for p in parts):
            return None
        if parts[-1] in _DISCOVERY_FILES or ".git" in parts:
            return None
        if any(p in JUNK_DIRS or p.endswith(".egg-info") for p in parts[:-1]):
            continue  # never listed, tracked or not
        names.append(path)
    cache = repo_cache_dir(root, cache_dir)
    if not (cache / INDEX_DB).is_file():
        return None
    with writer_lock(cache):
        store = IndexStore.open(cache)
        try:
            stored = store.file_states()
            found = _named(store, root, names, limits, stored)
            if found is None:
                return None
            read, removed, mended = _update(store, found, limits, None, jobs, stored=stored)
            summary = store.summary()
            omitted_paths = tuple(store.omitted_paths())
            past = _stored_history(store)
        except sqlite3.Error as exc:
            if is_corruption(exc):
                return None  # a whole refresh rebuilds it
            raise CacheFault(f"the index database failed: {exc}") from exc
        finally:
            store.close()
    return IndexReport(
        files_discovered=len(found.candidates) + len(found.omitted),
        discovery_truncated=False,
        seconds=time.perf_counter() - started,
        files_read=read,
        files_removed=removed,
        rows_rebuilt=mended,
        rebuilt=store.rebuilt,
        cache_dir=cache,
        omitted_paths=omitted_paths,
        history_commits=past.commits,
        history_skipped=past.skipped,
        history_truncated=past.truncated,
        **summary,
    )


def _named(
    store: IndexStore,
    root: Path,
    names: Sequence[str],
    limits: Limits,
    stored: dict[str, tuple[int, int, str]],
) -> Discovery | None:
    """What discovery would find now, when only ``names`` changed since the stored run: the
    stored files with the named ones and every link looked at again (a link's rows follow its
    target, which is written under the target's name); None when that cannot be told without
    walking the tree (see ``refresh_paths``)."""
    links = _links_of(store.meta("discovery"))
    if store.meta("clean") != "1" or links is None:
        return None  # a run cut short, a capped list, or too many links to look at
    omitted = store.omissions()
    refused = {o.path for o in omitted}
    fresh: dict[str, FoundFile] = {}
    prefix = f"{root}/"
    for name in names:
        if name in refused:
            return None  # a verdict that may change
        if name not in stored:
            if os.path.lexists(prefix + name) or store.holds_below(name):
                return None  # a new file, or a directory of indexed files moved or removed
            continue  # a file that came and went between two refreshes (an editor's)
        verdict = file_verdict(prefix, name, limits)
        if not isinstance(verdict, FoundFile) or verdict.is_link != (name in links):
            return None  # removed, refused now, or a file replaced by a link or back
        if not verdict.is_link and _linked(prefix + name):
            return None  # a second name of a file: discovery refuses a sensitive file's
        fresh[name] = verdict
    for link in links:
        verdict = file_verdict(prefix, link, limits)
        if not isinstance(verdict, FoundFile) or not verdict.is_link:
            return None  # a link that now points outside the tree, at nothing, or is gone
        fresh[link] = verdict
    candidates = tuple(
        fresh.get(path) or FoundFile(path, size, mtime_ns, False)
        for path, (size, mtime_ns, _) in sorted(stored.items())
    )
    return Discovery(
        root=root, in_git=False, candidates=candidates, omitted=omitted, truncated=False
    )


def _linked(path: str) -> bool:
    try:
        return os.lstat(path).st_nlink > 1
    except OSError:
        return True


def _discovery_shape(found: Discovery) -> str:
    """What ``refresh_paths`` needs of the last whole discovery (the ``discovery`` meta
    value): the links it listed, as JSON, when it listed every file and at most
    ``_LINKS_MAX`` links; ``walk`` otherwise."""
    links = [c.path for c in found.candidates if c.is_link]
    if found.truncated or len(links) > _LINKS_MAX:
        return _WALK
    return json.dumps({"links": links}, separators=(",", ":"))


def _links_of(shape: str | None) -> frozenset[str] | None:
    """The links of a stored discovery shape; None for ``walk``, none stored, or damage."""
    if shape is None or shape == _WALK:
        return None
    try:
        links = json.loads(shape)["links"]
    except (ValueError, TypeError, KeyError):
        return None
    if not isinstance(links, list) or not all(isinstance(p, str) for p in links):
        return None
    return frozenset(links)


def _stored_history(store: IndexStore) -> HistoryReport:
    if not history_enabled():
        return HistoryReport()
    commits, skipped = store.history_counts()
    truncated = store.meta("history_truncated") == "1"
    return HistoryReport(commits=commits, skipped=skipped, truncated=truncated)


def _history(
    store: IndexStore,
    root: Path,
    history: HistorySource | Literal["repository"] | None,
    progress: ProgressFn | None,
) -> HistoryReport:
    """Bring the stored past commits to those of ``history`` (see ``index_repository``)."""
    if not history_enabled():
        return HistoryReport()
    if progress is not None:
        progress(0, 0, "history")
    started = time.perf_counter()
    source = source_of_root(root) if history == "repository" else history
    key, head = store.meta("history_key") or "", store.meta("history_head") or ""
    if source is not None and is_current(key, head, source):
        change = None  # the usual refresh: the stored commit ids are not read
    else:
        change = plan_history(store.history_state(), source)
    removed = store.apply_history(change) if change is not None else 0
    commits, skipped = store.history_counts()
    return HistoryReport(
        commits=commits, skipped=skipped, added=len(change.add) if change else 0,
        removed=removed, truncated=store.meta("history_truncated") == "1",
        seconds=time.perf_counter() - started,
    )  # fmt: skip


def _changed(found: Discovery, stored: dict[str, tuple[int, int, str]]) -> list[FoundFile]:
    out = []
    for cand in found.candidates:
        old = stored.get(cand.path)
        if old is None or (old[0], old[1]) != (cand.size, cand.mtime_ns):
            out.append(cand)
    return out


def _update(
    store: IndexStore,
    found: Discovery,
    limits: Limits,
    progress: ProgressFn | None,
    jobs: int | None,
    *,
    mend: bool = True,
    stored: dict[str, tuple[int, int, str]] | None = None,
) -> tuple[int, int, int]:
    """Bring the store up to date with ``found``: ``(files read, removed, read again because
    their rows were damaged)``.

    Raises:
        CorruptIndex: rows damaged again after their files were read again (``mend`` off).
    """
    stored = store.file_states() if stored is None else stored
    signature = extraction_signature()
    if store.meta("extraction") != signature:
        # files stored by another registry (a language added, a query changed): read again
        todo = [c.path for c in found.candidates]
    else:
        todo = [c.path for c in _changed(found, stored)]
    keep = {c.path for c in found.candidates}
    repairs = store.repairs()
    mended = sorted(repairs & keep)
    todo += sorted(set(mended) - set(todo))
    if not todo and not set(stored) - keep and not store.graph_stale():
        # nothing changed: a refresh is a read, not a run (no write on every pack)
        store.replace_omitted(found.omitted)
        if store.meta("clean") != "1":  # a run killed after its last write
            store.set_meta(clean="1")
        store.clear_repairs(repairs)
        return 0, 0, 0
    store.set_meta(clean="0")
    run = store.conn.execute("INSERT INTO runs(started_ns) VALUES(?)", (time.time_ns(),)).lastrowid
    # a log of the recent runs, not of every run: edits all day must not grow the database
    store.conn.execute("DELETE FROM runs WHERE id <= ?", (int(run or 0) - KEEP_RUNS,))
    omitted: list[Omission] = list(found.omitted)
    batch: list[FileRecord] = []
    crashed = store.paths_with_status(CRASHED)
    for done, result in enumerate(_process(found.root, todo, limits, jobs, crashed), start=1):
        if isinstance(result, Omission) and result.reason == CRASHED:
            batch.append(_crashed(found, result.path, again=result.path in crashed))
        elif isinstance(result, Omission):
            omitted.append(result)
            keep.discard(result.path)
        else:
            batch.append(result)
        if len(batch) >= _BATCH:
            store.write_files(batch)
            batch = []
            crash_point("index.after_batch")
        if progress is not None:
            progress(done, len(todo), "parse")
    if batch:
        store.write_files(batch)
    removed = sorted(set(stored) - keep)
    store.delete_paths(removed)
    store.replace_omitted(omitted)
    store.clear_repairs(repairs)
    crash_point("index.before_graph")
    damaged = _resolve(store, progress) if store.graph_stale() else ()
    store.conn.execute(
        "UPDATE runs SET finished_ns = ?, files_written = ?, files_removed = ? WHERE id = ?",
        (time.time_ns(), len(todo), len(removed), run),
    )
    if damaged:  # read the files whose imports were damaged again, then resolve
        if not mend:
            raise CorruptIndex(f"{len(damaged)} file(s) with damaged rows after reading them")
        for path in damaged:
            store.request_repair(path)
        more = _update(store, found, limits, progress, jobs, mend=False)
        return len(todo) + more[0], len(removed) + more[1], len(mended) + more[2]
    crash_point("index.before_clean")
    store.set_meta(clean="1", extraction=signature)
    return len(todo), len(removed), len(mended)


def _resolve(store: IndexStore, progress: ProgressFn | None) -> tuple[str, ...]:
    """Resolve the graph again (the whole of it, or the imports of the files pending); the
    files whose import rows are damaged instead, if any."""
    if progress is not None:
        progress(0, 0, "graph")
    pending = [] if store.graph_dirty() else store.graph_pending()
    # past a few hundred files the whole graph is the cheaper resolution (and one query)
    sources = pending if pending and len(pending) <= _PENDING_MAX else None
    try:
        facts = store.facts(sources)
    except DamagedRows as exc:
        return exc.paths
    if sources is None:
        store.replace_edges(resolve_graph(facts))
    else:
        store.replace_edges(resolve_imports(facts, sources), sources=sources)
    return ()


def _crashed(found: Discovery, path: str, *, again: bool) -> FileRecord:
    """The row of a file that killed the workers reading it: omitted as ``worker_crashed``.

    The first time, it is stored as changed (``mtime_ns`` -1), so the next run reads it again,
    in a worker (a worker killed from outside is no fault of the file); when it kills workers
    on that run too, it is left alone until it changes.
    """
    cand = next(c for c in found.candidates if c.path == path)
    return FileRecord(
        path=path, size=cand.size, mtime_ns=cand.mtime_ns if again else -1, sha256="",
        language=language_of(path), encoding="", lines=0, status=CRASHED,
        is_test=is_test_path(path),
    )  # fmt: skip


def _process(
    root: Path, paths: list[str], limits: Limits, jobs: int | None, crashed: set[str]
) -> Iterator[FileRecord | Omission]:
    """A result per path, in order: read by worker processes when there are enough files to
    pay for starting them, or when one of them killed a worker before (``crashed``: such a
    file is never read in this process, which it would take with it)."""
    workers = jobs if jobs is not None else len(os.sched_getaffinity(0))
    if (workers > 1 and len(paths) >= _PARALLEL_MIN) or not crashed.isdisjoint(paths):
        pool = WorkerPool(str(root), limits, max(1, min(workers, len(paths))), _CHUNK)
        if pool.start():  # else the platform makes no processes: read the files here
            with pool:
                yield from pool.read(paths)
            return
    for i in range(0, len(paths), _CHUNK):
        chunk = [p for p in paths[i : i + _CHUNK] if p not in crashed]
        results = iter(process_paths(str(root), chunk, limits))
        for path in paths[i : i + _CHUNK]:
            yield Omission(path=path, reason=CRASHED) if path in crashed else next(results)
