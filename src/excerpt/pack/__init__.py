"""Context packs, plans and retrieval.

In: a repository, a task, a budget (and changed paths, a graph). Out: a ``Pack`` of exact,
hashed excerpts with reasons and an honest list of what was left out; a ``Plan`` without
text; ``Retrieved`` excerpts for handles, refused when stale. Reads the workspace only through
the guarded reader; writes only to the cache.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from excerpt.core.settings import repo_cache_dir
from excerpt.index.build import index_repository, resolve_root
from excerpt.index.graph import graph_document
from excerpt.index.store import IndexStore
from excerpt.pack.build import PackRequest, build_pack, build_plan
from excerpt.pack.model import Item, Omitted, Pack, Plan, pack_schema
from excerpt.pack.retrieve import Retrieved, retrieve

__all__ = [
    "Item",
    "Omitted",
    "Pack",
    "PackRequest",
    "Plan",
    "Retrieved",
    "build_pack",
    "build_plan",
    "export_graph",
    "get_excerpts",
    "pack_schema",
]


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
    if (cache / "index.sqlite3").exists():
        store = IndexStore.open(cache)
        try:
            known = store.known_handles(handles)
        finally:
            store.close()
    return [retrieve(root, handle, known) for handle in handles]


def export_graph(repo: str | os.PathLike[str], *, cache_dir: Path | None = None) -> dict[str, Any]:
    """The current file graph as an ``excerpt.graph/v1`` document with its digest."""
    root = resolve_root(repo)
    index_repository(root, cache_dir=cache_dir)
    store = IndexStore.open(repo_cache_dir(root, cache_dir))
    try:
        view = store.view()
        nodes = [p for p, f in view.files().items() if f.status is None]
        return graph_document(nodes, view.edges())
    finally:
        store.close()
