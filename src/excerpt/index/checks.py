"""Digests of a file's derived rows, stored with its file row and compared when the rows are
read back: a symbol, span, import or set of indexed terms changed in the cache after it was
written (a flipped byte, an edited row) is found instead of served.

A digest guards against damage, not against someone who can write the cache: it has no key.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

__all__ = [
    "FILE_COLUMNS",
    "ImportRow",
    "RowsCheck",
    "SymbolRow",
    "file_row_check",
    "imports_check",
    "symbols_check",
    "terms_check",
]

SymbolRow = tuple[str, str, str, int, int]  # kind, name, qualname, start_line, end_line
ImportRow = tuple[str, str, int, str]  # module, names (JSON), line, kind


# the columns of a file row its digest covers, in the order it covers them
FILE_COLUMNS = (
    "path, size, mtime_ns, sha256, language, encoding, lines, status, is_test, package, manifest"
)


def file_row_check(values: tuple[object, ...]) -> int:
    """The digest of a file row: its ``FILE_COLUMNS`` values, in order."""
    return zlib.crc32(repr(values).encode("utf-8", "surrogateescape"))


def _rows_check(rows: Iterable[tuple[object, ...]]) -> int:
    # sorted: rows come back from SQLite in no guaranteed order
    return zlib.crc32(repr(sorted(rows)).encode("utf-8", "surrogateescape"))


def symbols_check(rows: Iterable[SymbolRow]) -> int:
    """The digest of one file's symbol rows."""
    return _rows_check(rows)


def imports_check(rows: Iterable[ImportRow]) -> int:
    """The digest of one file's import rows."""
    return _rows_check(rows)


def terms_check(blob: bytes | None) -> int:
    """The digest of one file's indexed terms (the stored lexicon blob; None: it has none)."""
    return zlib.crc32(blob or b"")


class RowsCheck:
    """The digest of a file's rows as an SQLite aggregate (``excerpt_rows_check``), for
    migrations that give rows from before a digest."""

    def __init__(self) -> None:
        self.rows: list[tuple[object, ...]] = []

    def step(self, *values: object) -> None:
        self.rows.append(values)

    def finalize(self) -> int:
        return _rows_check(self.rows)

    @staticmethod
    def none() -> int:
        """The digest of no rows (what the aggregate would give for a file without any)."""
        return _rows_check(())
