"""What a cache holds, read for tests without changing it: the index stored for a repository
(``stored_index``), and every byte under a cache with each SQLite database's values decoded
(``cache_surfaces``), where a leaked secret would show."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import zlib
from pathlib import Path
from typing import Any

from excerpt.core.settings import repo_cache_dir
from excerpt.index.store import IndexStore


def stored_index(repo: Path, cache: Path) -> dict[str, Any]:
    """The index ``cache`` holds for ``repo``, as ``IndexStore.snapshot`` gives it."""
    store = IndexStore.open(repo_cache_dir(repo.resolve(), cache))
    try:
        return store.snapshot()
    finally:
        store.close()


def cache_surfaces(cache: Path, scratch: Path) -> list[tuple[str, bytes]]:
    """Every byte under ``cache``, plus each SQLite database's rows decoded.

    Raw bytes alone can hide a leak: zlib blobs and FTS5's prefix-compressed term pages. So
    each database (copied with its ``-wal`` into ``scratch``, leaving the cache untouched) is
    also dumped value by value, zlib blobs inflated, and every FTS5 table's vocabulary listed.
    """
    out: list[tuple[str, bytes]] = []
    databases: list[Path] = []
    for dirpath, _dirs, files in os.walk(cache):
        for name in files:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            out.append((str(path), data))
            if data.startswith(b"SQLite format 3\0"):
                databases.append(path)
    for n, db in enumerate(databases):
        copy_dir = scratch / f"db{n}"
        copy_dir.mkdir(parents=True)
        for suffix in ("", "-wal"):
            src = Path(f"{db}{suffix}")
            if src.exists():
                shutil.copyfile(src, copy_dir / f"copy.sqlite3{suffix}")
        out.extend(_dump_database(copy_dir / "copy.sqlite3", str(db)))
    return out


def _dump_database(db: Path, label: str) -> list[tuple[str, bytes]]:
    out: list[tuple[str, bytes]] = []
    conn = sqlite3.connect(db)
    try:
        tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
        for name, sql in tables:
            if "fts5" in (sql or "").lower():
                vocab = f"temp.vocab_{len(out)}"
                conn.execute(f"CREATE VIRTUAL TABLE {vocab} USING fts5vocab(main, '{name}', 'row')")
                terms = " ".join(t for (t,) in conn.execute(f"SELECT term FROM {vocab}"))
                out.append((f"{label}:{name}:vocab", terms.encode()))
                continue
            if (sql or "").upper().startswith("CREATE VIRTUAL"):
                continue
            for row in conn.execute(f'SELECT * FROM "{name}"'):
                for value in row:
                    out.extend((f"{label}:{name}", v) for v in _value_forms(value))
    finally:
        conn.close()
    return out


def _value_forms(value: object) -> list[bytes]:
    if isinstance(value, str):
        return [value.encode("utf-8", "surrogateescape")]
    if isinstance(value, bytes):
        forms = [value]
        with contextlib.suppress(zlib.error):
            forms.append(zlib.decompress(value))
        return forms
    return []
