"""The index's rows as ``StoreView`` reads them: one named tuple per query, whose fields
are the columns the query selects, checked by name as the rows come back, so that no value
is read by its position."""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple, TypeVar

from excerpt.index.checks import FILE_COLUMNS, SymbolRow

__all__ = [
    "FILES",
    "CommitFile",
    "CommitHit",
    "Database",
    "EdgeRow",
    "FileRow",
    "LexicalHit",
    "OmittedRow",
    "SymbolRecord",
    "SymbolsCheck",
    "TermDocs",
    "covered",
    "select",
    "select_in",
    "symbol_row",
]

_CHUNK = 500  # values of an ``IN`` list per query (SQLite bounds the parameters of one)
Row = TypeVar("Row", bound=NamedTuple)


class FileRow(NamedTuple):
    """A row of ``files``: its id, the columns its digest covers (``FILE_COLUMNS``), its git
    blob and its digest."""

    id: int
    path: str
    size: int
    mtime_ns: int
    sha256: str
    language: str
    encoding: str
    lines: int
    status: str | None
    is_test: int
    package: str | None
    manifest: str | None
    git_blob: str | None
    checksum: int


class SymbolRecord(NamedTuple):
    """A row of ``symbols``: a definition in a file."""

    file_id: int
    kind: str
    name: str
    qualname: str
    start_line: int
    end_line: int


class EdgeRow(NamedTuple):
    """A row of ``edges`` (without its evidence): the files by id."""

    src_id: int
    dst_id: int
    kind: str


class LexicalHit(NamedTuple):
    """A file a lexical query matched, with its BM25 score (lower is better)."""

    file_id: int
    score: float


class CommitHit(NamedTuple):
    """A past commit a query matched, with its BM25 score and its message."""

    commit_id: int
    score: float
    subject: str
    body: str
    sha: str
    time: int
    changed: int


class CommitFile(NamedTuple):
    """A file a past commit changed."""

    commit_id: int
    path: str


class TermDocs(NamedTuple):
    """How many files hold a term (of ``fts5vocab``)."""

    term: str
    doc: int


class SymbolsCheck(NamedTuple):
    """The stored digest of a file's definitions."""

    id: int
    symbols_check: int | None


class Database(NamedTuple):
    """A database of the connection (``PRAGMA database_list``); ``file`` is empty for
    one in memory or a temporary one."""

    seq: int
    name: str
    file: str


class OmittedRow(NamedTuple):
    """A path discovery refused, and why."""

    path: str
    reason: str


# the values a file row's digest covers, in the order it covers them (a plain tuple)
covered: Callable[[FileRow], tuple[object, ...]] = operator.attrgetter(*FILE_COLUMNS.split(", "))
# a symbol row as its file's digest covers it (``checks.SymbolRow``)
symbol_row: Callable[[SymbolRecord], SymbolRow] = operator.attrgetter(
    "kind", "name", "qualname", "start_line", "end_line"
)


def select(
    conn: sqlite3.Connection, row: type[Row], sql: str, params: Sequence[object] = ()
) -> Iterator[Row]:
    """The rows of ``sql`` as ``row``s: its columns are named as the fields of ``row`` (in
    their order), which is checked, so no value is read by its position."""
    cursor = conn.execute(sql, params)
    names = tuple(column[0] for column in cursor.description)
    if names != row._fields:
        raise AssertionError(f"the query gives {names}, not the fields of {row.__name__}")
    return map(row._make, cursor)


# every column of a file row, selected by the names of ``FileRow``'s fields
FILES = f"SELECT {', '.join(FileRow._fields)} FROM files"


def select_in(
    conn: sqlite3.Connection, row: type[Row], sql: str, values: Sequence[object]
) -> Iterator[Row]:
    """The rows of ``sql`` (its ``{}`` the list of an ``IN``) for every one of ``values``,
    as ``row``s, asked ``_CHUNK`` at a time."""
    for i in range(0, len(values), _CHUNK):
        chunk = values[i : i + _CHUNK]
        yield from select(conn, row, sql.format(",".join("?" * len(chunk))), chunk)
