"""Records that flow from file processing into the store."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

from excerpt.index.extract import Symbol
from excerpt.index.lang.base import Import

__all__ = ["LEXICAL_FIELDS", "FileRecord", "pack_lexicon", "unpack_lexicon"]

# Lexical fields of the full-text index, in column order.
LEXICAL_FIELDS = ("path", "symbols", "body")


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
    git_blob: str = ""  # git's object id of these bytes ("blob <n>\0" + data, SHA-1)
    package: str | None = None
    manifest: str | None = None
    symbols: tuple[Symbol, ...] = ()
    imports: tuple[Import, ...] = ()
    # zlib of the lexical fields joined by NUL; see ``pack_lexicon``
    lexicon_blob: bytes = b""

    def __reduce__(self) -> tuple[Any, ...]:
        # as Symbol's: pickled as its fields, in the order they are declared
        return (_file_record, tuple(getattr(self, f) for f in self.__slots__))

    @property
    def lexicon(self) -> tuple[str, str, str]:
        """Per lexical field, its terms separated by spaces (repeated by frequency)."""
        return unpack_lexicon(self.lexicon_blob)


def _file_record(*values: Any) -> FileRecord:
    return FileRecord(**dict(zip(FileRecord.__slots__, values, strict=True)))


def pack_lexicon(fields: tuple[str, str, str]) -> bytes:
    """The stored form of a file's lexical fields (what is indexed is exactly what is kept)."""
    return zlib.compress("\0".join(fields).encode("utf-8"), 1)


def unpack_lexicon(blob: bytes) -> tuple[str, str, str]:
    if not blob:
        return ("", "", "")
    path, symbols, body = zlib.decompress(blob).decode("utf-8").split("\0")
    return path, symbols, body
