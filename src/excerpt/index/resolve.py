"""Resolve imports to workspace files and associate tests with sources. Pure.

In: per-file facts (language, imports as written, Java package, manifest name). Out: edges
``(src, dst, kind, evidence)`` with kind ``imports`` (src imports dst) or ``tests`` (src is a
test of dst). External modules resolve to nothing; nothing here touches the disk. How a
language's imports resolve, and which of its files are tests, is its registry record's.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from excerpt.index.lang import by_name, is_test_path, rules_for_tests
from excerpt.index.lang.base import (
    TEST_DIRS,
    FileFacts,
    Resolve,
    ResolverFactory,
    Workspace,
)

__all__ = ["Edge", "resolve_graph", "resolve_imports"]


@dataclass(frozen=True, slots=True, order=True)
class Edge:
    src: str
    dst: str
    kind: str  # "imports" | "tests"
    evidence: str  # "import" | "name"


def _workspace(files: Iterable[FileFacts]) -> Workspace:
    by_path = {f.path: f for f in files}
    paths = tuple(sorted(by_path))
    dir_files: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        dir_files[posixpath.dirname(path)].append(path)
    return Workspace(by_path=by_path, paths=paths, dir_files=dict(dir_files), is_test=is_test_path)


def resolve_graph(files: Iterable[FileFacts]) -> list[Edge]:
    """Import edges and test associations among ``files``, sorted and unique."""
    ws = _workspace(files)
    imports = _import_edges(ws, ws.by_path)
    return sorted(imports | _test_edges(ws.by_path, imports))


def resolve_imports(files: Iterable[FileFacts], sources: Collection[str]) -> list[Edge]:
    """The edges the imports of ``sources`` make among ``files``: their import edges and the
    test associations those give, sorted and unique.

    This is all a change to those files' imports alone changes in ``resolve_graph``'s
    answer: a resolver's tables are built from the workspace's paths, languages, packages and
    manifests, never from its imports, and a test associated by name is found by its path.
    Only the facts of ``sources`` need their imports.
    """
    ws = _workspace(files)
    imports = _import_edges(ws, [p for p in sources if p in ws.by_path])
    return sorted(imports | _tests_by_import(imports, _families(ws.by_path)))


def _import_edges(ws: Workspace, sources: Iterable[str]) -> set[Edge]:
    resolvers: dict[ResolverFactory, Resolve] = {}  # a family's tables are built once
    edges: set[Edge] = set()
    for path in sources:
        facts = ws.by_path[path]
        lang = by_name(facts.language)
        if lang is None or lang.resolver is None or not facts.imports:
            continue
        resolve = resolvers.get(lang.resolver)
        if resolve is None:
            resolve = resolvers[lang.resolver] = lang.resolver(ws)
        for imp in facts.imports:
            for dst in resolve(path, imp):
                if dst != path:
                    edges.add(Edge(path, dst, "imports", "import"))
    return edges


def _tests_by_import(imports: set[Edge], families: Mapping[str, str]) -> set[Edge]:
    """A test of a parsed language is associated with each file it imports that is not one."""

    def test(path: str) -> bool:
        return path in families and is_test_path(path)

    return {
        Edge(e.src, e.dst, "tests", "import") for e in imports if test(e.src) and not test(e.dst)
    }


def _families(by_path: Mapping[str, FileFacts]) -> dict[str, str]:
    """Each file of a parsed language, with its language's family."""
    out: dict[str, str] = {}
    for path, facts in by_path.items():
        lang = by_name(facts.language)
        if lang is not None:
            out[path] = lang.family_name
    return out


def _test_edges(by_path: Mapping[str, FileFacts], imports: set[Edge]) -> set[Edge]:
    families = _families(by_path)
    tests = {p for p in families if is_test_path(p)}
    sources: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path, family in families.items():
        if path not in tests:
            stem = path.rsplit("/", 1)[-1].split(".", 1)[0].lower()
            sources[(family, stem)].append(path)
    out = _tests_by_import(imports, families)
    for test in sorted(tests):
        rules = rules_for_tests(test)
        subject = rules.subject(test) if rules is not None else None
        if subject is None:
            continue
        best = _closest(test, sources.get((families[test], subject), []))
        if best is not None:
            out.add(Edge(test, best, "tests", "name"))
    return out


def _closest(test: str, candidates: list[str]) -> str | None:
    """The candidate whose directories look most like the test's; None when ambiguous."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    words = set(re.split(r"[/_.-]+", test.rsplit("/", 1)[0].lower())) - TEST_DIRS - {""}
    scored = sorted(
        ((_shared_dirs(test, c) + _dir_overlap(words, c), c) for c in candidates), reverse=True
    )
    (best_score, best), (second_score, _) = scored[0], scored[1]
    return best if best_score > second_score else None


def _dir_overlap(words: set[str], path: str) -> int:
    return len(words & set(re.split(r"[/_.-]+", path.rsplit("/", 1)[0].lower())))


def _shared_dirs(a: str, b: str) -> int:
    """How alike two paths' directories are: common leading plus trailing components."""
    da, db = a.split("/")[:-1], b.split("/")[:-1]
    lead = next(
        (i for i, (x, y) in enumerate(zip(da, db, strict=False)) if x != y), min(len(da), len(db))
    )
    trail = next(
        (i for i, (x, y) in enumerate(zip(reversed(da), reversed(db), strict=False)) if x != y),
        min(len(da), len(db)),
    )
    return 2 * lead + trail
