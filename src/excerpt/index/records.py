"""Records that flow from file processing into the store."""

from __future__ import annotations

from dataclasses import dataclass

from excerpt.index.extract import Import, Symbol

__all__ = ["FIELDS", "FileRecord"]

# Lexical fields, in the order their ids are stored.
FIELDS = ("path", "symbols", "body")


@dataclass(frozen=True, slots=True, kw_only=True)
class FileRecord:
    """Everything the index keeps about one regular file that was read."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    language: str
    encoding: str
    lines: int
    status: str | None  # None: indexed; else an omission reason ("binary")
    is_test: bool
    package: str | None = None
    manifest: str | None = None
    symbols: tuple[Symbol, ...] = ()
    imports: tuple[Import, ...] = ()
    # (term, field id, term frequency), sorted
    postings: tuple[tuple[str, int, int], ...] = ()
    field_lengths: tuple[int, int, int] = (0, 0, 0)
