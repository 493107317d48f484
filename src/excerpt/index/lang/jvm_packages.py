"""Package tables for the JVM languages that import by ``package`` (Kotlin, Scala).

A class file is found by its package and file name (``a/b/C.kt`` of ``package a.b`` holds
``a.b.C``), the way Java's resolver finds ``.java`` files; Java files are in the tables too,
since Kotlin and Scala import Java classes. What a file defines is not known at resolution
time, so a class in a file named otherwise is found only when its package has a single file.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from excerpt.index.lang.base import Workspace

__all__ = ["Packages", "packages_of"]


@dataclass(frozen=True, slots=True)
class Packages:
    """Files by ``package.Stem`` and by package, for one set of languages."""

    ws: Workspace
    classes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    members: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def package_files(self, src: str, package: str) -> list[str]:
        """The files of ``package`` but ``src``; a test's own package includes tests."""
        return [
            p
            for p in self.members.get(package, [])
            if p != src and (self.ws.is_test(src) or not self.ws.is_test(p))
        ]

    def class_file(self, src: str, dotted: str, least: int = 2) -> list[str]:
        """Files of the longest prefix of ``dotted`` naming a class (``a.b.C.member``), of at
        least ``least`` parts; else the single file of its package."""
        parts = dotted.split(".")
        for k in range(len(parts), max(least, 2) - 1, -1):  # members follow their class
            hit = self.classes.get(".".join(parts[:k]))
            if hit:
                return hit
        if len(parts) - 1 < max(least - 1, 1):
            return []
        return self.single_file(src, ".".join(parts[:-1]))

    def single_file(self, src: str, package: str) -> list[str]:
        """The one file of ``package``, which must hold what is imported from it."""
        files = self.package_files(src, package)
        return files if len(files) == 1 else []


def packages_of(ws: Workspace, languages: Collection[str]) -> Packages:
    """The package tables of the files of ``languages`` that declare a package."""
    tables = Packages(ws)
    for path in _declaring(ws, languages):
        package = ws.by_path[path].package or ""
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        tables.classes[f"{package}.{stem}" if package else stem].append(path)
        tables.members[package].append(path)
    return tables


def _declaring(ws: Workspace, languages: Collection[str]) -> Iterable[str]:
    for path in ws.paths:
        facts = ws.by_path[path]
        if facts.language in languages and facts.package is not None:
            yield path
