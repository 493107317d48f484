"""Index views made of values, for the ranking tests that need no SQLite: a file's row, a
definition, a ``MemoryView`` of them, and what ``rank_files`` makes of a task over it.

A ``MemoryView`` answers no lexical query (BM25 is the index's to compute), so a test that
ranks over one asserts what the other signals do: definitions, paths, scopes, components.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from excerpt.index.view import FileInfo, MemoryView, SymbolSpan
from excerpt.rank.score import RankedFile, rank_files
from excerpt.rank.task import analyze_task


def file_info(path: str) -> FileInfo:
    """A 100-line Python file's row (what ranking reads of it is its path)."""
    return FileInfo(
        path=path, size=1, sha256="0" * 64, language="python", encoding="utf-8", lines=100,
        status=None, is_test=False, git_blob=None,
    )  # fmt: skip


def symbol(
    kind: str, name: str, qualname: str, start: int, end: int, path: str = "m.py"
) -> SymbolSpan:
    return SymbolSpan(
        path=path, kind=kind, name=name, qualname=qualname, start_line=start, end_line=end
    )


def memory_view(
    paths: Iterable[str],
    symbols: Iterable[SymbolSpan] = (),
    frequencies: Mapping[str, int] | None = None,
) -> MemoryView:
    """The files ``paths``, defining ``symbols``; ``frequencies``: how many files hold each
    term (any term not given: none)."""
    return MemoryView(
        file_infos={p: file_info(p) for p in paths},
        symbols=list(symbols),
        frequencies=dict(frequencies or {}),
    )


def ranked(view: MemoryView, task: str) -> list[RankedFile]:
    """The files ``task`` ranks over ``view``, best first."""
    return rank_files(analyze_task(task), view)


def defining(view: MemoryView, task: str) -> set[str]:
    """The files the ranking credits with defining a name the task writes."""
    return {f.path for f in ranked(view, task) if any(r.signal == "defines" for r in f.reasons)}
