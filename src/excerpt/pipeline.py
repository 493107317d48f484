"""The pipeline's steps, in the order they run: discover → index → rank → read (selection
and rendering are ``excerpt.deliver``'s, the packing API above it).

Each step is one call into its package, and this module is the only place they meet:

1. **discover** the repository root (``excerpt.discover`` through ``resolve_root``);
2. **index** it: an incremental refresh (``excerpt.index.build``), then one read-only view;
3. **rank** the task's files (``excerpt.rank``), with the paths a change touches and the
   graph the caller supplied;
4. **read** the ranked files and choose their regions (``excerpt.pack.prepare_ranked``).

``prepare`` runs them for a request and returns the ``Prepared`` ranking that selection
fits to a budget; callers reach it through ``excerpt.deliver``. Beside it: handles
retrieved (``get_excerpts``) and the file graph exported (``export_graph``).

Below this module nothing refreshes an index or opens a store on its own initiative:
ranking reads an ``IndexView``, selection a ``Prepared``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from excerpt.core import git
from excerpt.core.settings import INDEX_DB, repo_cache_dir
from excerpt.discover.walk import resolve_root
from excerpt.errors import UsageError
from excerpt.index.build import ProgressFn, index_repository, rebuild_index
from excerpt.index.db import OPEN_ERRORS, is_corruption
from excerpt.index.graph import graph_document, load_graph
from excerpt.index.history import HistorySource
from excerpt.index.store import IndexStore
from excerpt.index.view import IndexView
from excerpt.pack.prepare import PackRequest, Prepared, WorkspaceFiles, prepare_ranked
from excerpt.pack.retrieve import Retrieved, retrieve
from excerpt.rank.task import analyze_task
from excerpt.rank.weights import default_weights

logger = logging.getLogger(__name__)

__all__ = ["export_graph", "get_excerpts", "prepare"]


def prepare(request: PackRequest, progress: ProgressFn | None = None) -> Prepared:
    """Steps 1 to 4 for ``request``: everything selection needs.

    A database found damaged while ranking or reading (a page, a text column, the full-text
    index) is thrown away and built again, once, and the pack says so (``stats``); rows of a
    file that fail their digest are read again from the file and the ranking made again, so
    a pack never rests on them. The cache is excerpt's own, never something to give up on.

    Raises:
        UsageError: a bad changed path or graph file.
        EnvironmentFault: the repository or cache cannot be used.
    """
    root = resolve_root(request.repo)
    history: HistorySource | Literal["repository"] = request.history or "repository"
    try:
        prepared, damaged = _prepare(request, root, history, progress)
        if not damaged:
            return prepared
        # the damaged files were asked to be read again: a refresh reads them, then the
        # ranking is made again; rows still damaged after that (a damaged page the refresh
        # never reads) leave the database to be built again
        report = index_repository(
            root, cache_dir=request.cache_dir, progress=progress, history=history
        )
        prepared, damaged = _prepare(
            dataclasses.replace(request, index=report), root, history, progress
        )
        if not damaged:
            return prepared
        why = "rows that fail their digest after their files were read again"
    except OPEN_ERRORS as exc:
        if not is_corruption(exc):
            raise
        why = f"damaged content ({type(exc).__name__})"
    report = rebuild_index(
        root, why, cache_dir=request.cache_dir, progress=progress, history=history
    )
    return _prepare(dataclasses.replace(request, index=report), root, history, progress)[0]


def _prepare(
    request: PackRequest,
    root: Path,
    history: HistorySource | Literal["repository"],
    progress: ProgressFn | None,
) -> tuple[Prepared, bool]:
    """Steps 1 to 4 on the resolved ``root``, and whether the view found rows that fail
    their digest."""
    report = request.index or index_repository(
        root, cache_dir=request.cache_dir, progress=progress, history=history
    )
    cache = repo_cache_dir(root, request.cache_dir)
    with IndexStore.open(cache) as store:
        view = store.view()
        changed = _changed_paths(root, view, request)
        edges, graph = _graph_file(request)
        if progress is not None:
            progress(0, 0, "rank")
        weights = None
        if request.candidates is not None:
            weights = dataclasses.replace(default_weights(), candidates=request.candidates)
        prepared = prepare_ranked(
            analyze_task(request.task), view, WorkspaceFiles(root),
            root=root, cache=cache, report=report, changed=changed, edges=edges, graph=graph,
            weights=weights,
        )  # fmt: skip
        for path in prepared.suspect:  # definitions that do not match their file's bytes
            store.request_repair(path)
        return prepared, bool(view.damaged or prepared.suspect)


def get_excerpts(
    repo: str | os.PathLike[str], handles: Sequence[str], *, cache_dir: Path | None = None
) -> list[Retrieved]:
    """Retrieve each handle: fresh text, or ``stale``/``missing``/``refused`` (SPEC §3.3).

    Raises:
        NotADirectoryFault: ``repo`` is not a readable directory.
    """
    root = resolve_root(repo)
    cache = repo_cache_dir(root, cache_dir)
    known: dict[str, tuple[str, int, str]] = {}
    if (cache / INDEX_DB).exists():
        try:
            with IndexStore.open(cache) as store:
                known = store.known_handles(handles)
        except OPEN_ERRORS as exc:
            if not is_corruption(exc):
                raise
            # what the damaged cache knew of earlier packs (where a moved excerpt went) is
            # lost; each handle is still checked against its file's bytes, which is all a
            # fresh or stale answer rests on
            logger.warning("the handle records are damaged: %s", exc)
    return [retrieve(root, handle, known) for handle in handles]


def export_graph(repo: str | os.PathLike[str], *, cache_dir: Path | None = None) -> dict[str, Any]:
    """The current file graph as an ``excerpt.graph/v1`` document with its digest."""
    root = resolve_root(repo)
    index_repository(root, cache_dir=cache_dir)
    with IndexStore.open(repo_cache_dir(root, cache_dir)) as store:
        view = store.view()
        nodes = [p for p, f in view.files().items() if f.status is None]
        return graph_document(nodes, view.edges())


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


def _graph_file(
    request: PackRequest,
) -> tuple[Sequence[tuple[str, str, str]] | None, dict[str, Any] | None]:
    """The edges of ``--graph FILE`` (None: the index's own), and how the pack describes it."""
    edges: Sequence[tuple[str, str, str]] | None = None
    graph: dict[str, Any] | None = None
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
    return edges, graph
