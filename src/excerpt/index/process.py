"""Turn one workspace path into a ``FileRecord``: read (guarded), hash, parse, tokenize.

Runs in worker processes; pure apart from the guarded read.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from excerpt.core.lines import line_count
from excerpt.core.secrets import without_secret_lines
from excerpt.core.settings import Limits
from excerpt.discover.reader import FileContent, Omission, read_file
from excerpt.index.extract import Extraction, extract
from excerpt.index.lang import is_test_path, language_of, manifest_of
from excerpt.index.records import FileRecord, pack_lexicon
from excerpt.index.tokens import lexicon_text

__all__ = ["git_blob_id", "process_paths", "record_from_content"]

_TEXT_CODECS = {
    "utf-8": "utf-8",
    "utf-8-sig": "utf-8-sig",
    "utf-16-le": "utf-16",
    "utf-16-be": "utf-16",
}


def git_blob_id(data: bytes) -> str:
    """The object id git gives these bytes (SHA-1 of ``blob <size>\\0`` + data)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _decode(content: FileContent) -> str:
    codec = _TEXT_CODECS.get(content.encoding)
    if codec is None:
        return content.data.decode("latin-1")
    return content.data.decode(codec, "replace")


def record_from_content(content: FileContent) -> FileRecord:
    """The index record of a file's verified bytes."""
    path = content.path
    language = language_of(path)
    if content.binary:
        return FileRecord(
            path=path, size=content.size, mtime_ns=content.mtime_ns, sha256=content.sha256,
            language=language, encoding=content.encoding, lines=0, status="binary",
            is_test=is_test_path(path), git_blob=git_blob_id(content.data),
        )  # fmt: skip
    parsed = content.encoding in ("utf-8", "utf-8-sig")
    extraction = extract(language, content.data) if parsed else Extraction()
    if extraction.omitted is not None:  # past a parse budget: listed, not indexed
        return FileRecord(
            path=path, size=content.size, mtime_ns=content.mtime_ns, sha256=content.sha256,
            language=language, encoding=content.encoding, lines=line_count(content.data),
            status=extraction.omitted, is_test=is_test_path(path),
            git_blob=git_blob_id(content.data),
        )  # fmt: skip
    lexicon = (
        lexicon_text(path.replace("/", " ").replace(".", " ").replace("-", " ")),
        lexicon_text(" ".join(s.name for s in extraction.symbols)),
        lexicon_text(without_secret_lines(_decode(content))),
    )
    return FileRecord(
        path=path, size=content.size, mtime_ns=content.mtime_ns, sha256=content.sha256,
        language=language, encoding=content.encoding, lines=line_count(content.data),
        status=None, is_test=is_test_path(path), git_blob=git_blob_id(content.data),
        package=extraction.package,
        manifest=manifest_of(path, content.data), symbols=extraction.symbols,
        imports=extraction.imports, lexicon_blob=pack_lexicon(lexicon),
    )  # fmt: skip


def process_paths(root: str, paths: list[str], limits: Limits) -> list[FileRecord | Omission]:
    """Records (or omissions) for ``paths`` under ``root``; the unit of work of a worker."""
    base = Path(root)
    out: list[FileRecord | Omission] = []
    for path in paths:
        content = read_file(base, path, limits)
        out.append(content if isinstance(content, Omission) else record_from_content(content))
    return out
