"""A tiny repository of one language, indexed for real: its symbols, edges and ranking.

Shared by the ``test_lang_*`` modules: each writes a fixture repository at test time and
asks what the index stored and what a task ranks first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from conftest import write_tree
from excerpt.deliver import build_plan
from excerpt.index.build import index_repository
from excerpt.index.store import IndexStore
from excerpt.pack import PackRequest

SymbolRow = tuple[str, str, str, int, int]  # path, kind, qualname, start_line, end_line
EdgeRow = tuple[str, str, str, str]  # src, dst, kind, evidence


@dataclass(frozen=True, slots=True)
class Indexed:
    root: Path
    cache: Path
    symbols: frozenset[SymbolRow]
    edges: frozenset[EdgeRow]
    languages: Mapping[str, str]  # path -> language
    tests: frozenset[str]  # the paths stored as tests

    def symbols_of(self, path: str) -> set[SymbolRow]:
        return {s for s in self.symbols if s[0] == path}

    def edges_of(self, kind: str) -> set[EdgeRow]:
        return {e for e in self.edges if e[2] == kind}

    def ranked(self, task: str) -> list[str]:
        """Candidate files for ``task``, best first."""
        plan = build_plan(
            PackRequest(repo=self.root, task=task, cache_dir=self.cache)
        ).plan.to_dict()
        return list(dict.fromkeys(c["path"] for c in plan["candidates"]))


def index_fixture(tmp: Path, files: Mapping[str, str]) -> Indexed:
    root = write_tree(tmp / "repo", files)
    cache = tmp / "cache"
    report = index_repository(root, cache_dir=cache)
    assert report.cache_dir is not None
    store = IndexStore.open(report.cache_dir)
    try:
        snap = store.snapshot()
    finally:
        store.close()
    return Indexed(
        root=root,
        cache=cache,
        symbols=frozenset((p, k, q, s, e) for p, k, _name, q, s, e in snap["symbols"]),
        edges=frozenset((e[0], e[1], e[2], e[3]) for e in snap["edges"]),
        languages={row[0]: row[4] for row in snap["files"]},
        tests=frozenset(row[0] for row in snap["files"] if row[8]),
    )


def imp(src: str, dst: str) -> EdgeRow:
    return (src, dst, "imports", "import")


def covers(src: str, dst: str, evidence: str) -> EdgeRow:
    """A ``tests`` edge: ``src`` is a test of ``dst``."""
    return (src, dst, "tests", evidence)
