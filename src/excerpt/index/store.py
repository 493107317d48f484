"""The SQLite index store: one database per repository in the cache, never in the repository.

WAL journal, batched ``BEGIN IMMEDIATE`` transactions, numbered migrations under
``PRAGMA user_version`` and an ``application_id`` that marks the file as ours. A database that
is not ours, from an unknown schema version, or that fails ``quick_check`` after an unclean
shutdown is moved aside (with its ``-wal``/``-shm``) and rebuilt, never trusted. One writer at a
time: ``flock`` on ``writer.lock``, which the kernel releases if the writer dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import stat
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from excerpt.discover.reader import Omission
from excerpt.errors import CacheBusy, CacheFault
from excerpt.index.extract import Import
from excerpt.index.migrations import APPLICATION_ID, MIGRATIONS
from excerpt.index.records import FileRecord, unpack_lexicon
from excerpt.index.resolve import Edge, FileFacts

__all__ = ["CORRUPTION", "CorruptIndex", "IndexStore", "is_corruption", "writer_lock"]

DB_NAME = "index.sqlite3"


class CorruptIndex(Exception):
    """A stored row failed its check: the database content cannot be trusted."""


# What reading a damaged database raises; any of these means "rebuild", never "use".
CORRUPTION: tuple[type[BaseException], ...] = (
    CorruptIndex,
    UnicodeDecodeError,
    zlib.error,
    json.JSONDecodeError,
)


_OPEN_ERRORS: tuple[type[BaseException], ...] = (sqlite3.DatabaseError, *CORRUPTION)


def is_corruption(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.DatabaseError):
        # "disk image is malformed", "file is not a database"; not busy/full/readonly
        return not isinstance(exc, sqlite3.OperationalError)
    return isinstance(exc, CORRUPTION)


def _row_check(values: Sequence[object]) -> int:
    return zlib.crc32(repr(tuple(values)).encode("utf-8", "surrogateescape"))


_LOCK_WAIT_S = 30.0


@contextlib.contextmanager
def writer_lock(cache_dir: Path, wait_s: float = _LOCK_WAIT_S) -> Iterator[None]:
    """Hold the single-writer lock of a repository's cache.

    Raises:
        CacheBusy: another process held it for longer than ``wait_s``.
        CacheFault: the lock file cannot be created.
    """
    try:
        fd = os.open(cache_dir / "writer.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise CacheFault(f"cannot create the cache lock in {cache_dir}: {exc.strerror}") from exc
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise CacheBusy("another excerpt process is indexing this repository") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the lock


class IndexStore:
    """Read and write one repository's index database."""

    def __init__(self, conn: sqlite3.Connection, rebuilt: str | None) -> None:
        self.conn = conn
        self.rebuilt = rebuilt  # why an existing database was discarded, if it was

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, cache_dir: Path) -> IndexStore:
        """Open (creating, migrating or rebuilding) the index in ``cache_dir``.

        Raises:
            CacheFault: the cache directory or database cannot be used at all.
        """
        try:
            cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheFault(f"cannot create cache directory {cache_dir}: {exc.strerror}") from exc
        db = cache_dir / DB_NAME
        problem = _untrusted_file(db)
        if problem is None:
            conn = None
            try:
                conn = _connect(db)
                problem = _verify(conn)
                if problem is None:
                    _migrate(conn)
                    return cls(conn, None)
            except _OPEN_ERRORS as exc:
                problem = f"unreadable database ({type(exc).__name__})"
            if conn is not None:
                conn.close()
        _quarantine(cache_dir, db)
        try:
            conn = _connect(db)
            _migrate(conn)
        except sqlite3.Error as exc:
            raise CacheFault(f"cannot create the index database: {exc}") from exc
        return cls(conn, problem)

    def close(self) -> None:
        self.conn.close()

    @classmethod
    def rebuild(cls, cache_dir: Path, why: str) -> IndexStore:
        """Move the current database aside and start an empty one.

        Raises:
            CacheFault: the database cannot be moved or created.
        """
        _quarantine(cache_dir, cache_dir / DB_NAME)
        store = cls.open(cache_dir)
        store.rebuilt = why
        return store

    # -- runs and meta ---------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, **values: str) -> None:
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO meta(key, value) VALUES(?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                sorted(values.items()),
            )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- files -----------------------------------------------------------------------------

    def file_states(self) -> dict[str, tuple[int, int, str]]:
        """``{path: (size, mtime_ns, sha256)}`` of every stored file.

        Raises:
            CorruptIndex: a row does not match its checksum.
        """
        out: dict[str, tuple[int, int, str]] = {}
        for row in self.conn.execute(f"SELECT {_FILE_COLUMNS}, checksum FROM files"):
            if _row_check(row[:-1]) != row[-1]:
                raise CorruptIndex("a file row does not match its checksum")
            out[row[0]] = (row[1], row[2], row[3])
        return out

    def write_files(self, records: Sequence[FileRecord]) -> None:
        """Insert or replace files with all their derived rows, in one transaction."""
        with self.transaction() as c:
            c.execute("UPDATE meta SET value = '1' WHERE key = 'graph_dirty'")
            for rec in records:
                _write_file(c, rec)

    def delete_paths(self, paths: Iterable[str]) -> None:
        ids = [
            (row[0],)
            for p in paths
            for row in self.conn.execute("SELECT id FROM files WHERE path = ?", (p,))
        ]
        if not ids:
            return
        with self.transaction() as c:
            c.execute("UPDATE meta SET value = '1' WHERE key = 'graph_dirty'")
            _delete_children(c, ids)
            c.executemany("DELETE FROM files WHERE id = ?", ids)

    def replace_omitted(self, omissions: Iterable[Omission]) -> None:
        rows = sorted({(o.path, o.reason, o.size) for o in omissions})
        with self.transaction() as c:
            c.execute("DELETE FROM omitted")
            c.executemany("INSERT OR REPLACE INTO omitted(path, reason, size) VALUES(?,?,?)", rows)

    # -- graph -----------------------------------------------------------------------------

    def graph_dirty(self) -> bool:
        return self.meta("graph_dirty") != "0"

    def facts(self) -> list[FileFacts]:
        imports: dict[int, list[Import]] = {}
        for file_id, module, names, line, kind in self.conn.execute(
            "SELECT file_id, module, names, line, kind FROM imports ORDER BY file_id, rowid"
        ):
            imp = Import(module=module, names=tuple(json.loads(names)), line=line, kind=kind)
            imports.setdefault(file_id, []).append(imp)
        return [
            FileFacts(
                path=path,
                language=language,
                imports=tuple(imports.get(file_id, ())),
                package=package,
                manifest=manifest,
            )
            for file_id, path, language, package, manifest in self.conn.execute(
                "SELECT id, path, language, package, manifest FROM files WHERE status IS NULL"
            )
        ]

    def replace_edges(self, edges: Iterable[Edge]) -> None:
        with self.transaction() as c:
            ids = dict(c.execute("SELECT path, id FROM files"))
            c.execute("DELETE FROM edges")
            c.executemany(
                "INSERT OR IGNORE INTO edges(src_id, dst_id, kind, evidence) VALUES(?,?,?,?)",
                [(ids[e.src], ids[e.dst], e.kind, e.evidence) for e in edges],
            )
            c.execute("UPDATE meta SET value = '0' WHERE key = 'graph_dirty'")

    # -- reporting -------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        c = self.conn
        languages = dict(
            c.execute(
                "SELECT language, COUNT(*) FROM files WHERE status IS NULL GROUP BY language"
                " ORDER BY language"
            )
        )
        omitted: Counter[str] = Counter(
            dict(c.execute("SELECT reason, COUNT(*) FROM omitted GROUP BY reason"))
        )
        for reason, n in c.execute(
            "SELECT status, COUNT(*) FROM files WHERE status IS NOT NULL GROUP BY status"
        ):
            omitted[reason] += n
        return {
            "files_indexed": _scalar(c, "SELECT COUNT(*) FROM files WHERE status IS NULL"),
            "symbols": _scalar(c, "SELECT COUNT(*) FROM symbols"),
            "edges": _scalar(c, "SELECT COUNT(*) FROM edges"),
            "languages": languages,
            "omitted": dict(sorted(omitted.items())),
        }

    def omitted_paths(self) -> list[tuple[str, str]]:
        """Every path not indexed, with its reason, sorted by path."""
        rows = self.conn.execute(
            "SELECT path, reason FROM omitted UNION ALL"
            " SELECT path, status FROM files WHERE status IS NOT NULL ORDER BY 1, 2"
        )
        return [(str(p), str(r)) for p, r in rows]

    def remember_handles(self, rows: Iterable[tuple[str, str, int, str]]) -> None:
        """Record ``(handle, excerpt sha256, line count, first line sha256)`` of served
        excerpts, so a later stale retrieval can say where the same bytes moved."""
        with self.transaction() as c:
            c.executemany(
                "INSERT OR IGNORE INTO handles(handle, excerpt_sha256, lines, first_line_sha256)"
                " VALUES(?,?,?,?)",
                list(rows),
            )

    def known_handles(self, handles: Iterable[str]) -> dict[str, tuple[str, int, str]]:
        out: dict[str, tuple[str, int, str]] = {}
        for handle in handles:
            if not _encodable(handle):
                continue  # not a handle any pack handed out: SQLite text is UTF-8
            row = self.conn.execute(
                "SELECT excerpt_sha256, lines, first_line_sha256 FROM handles WHERE handle = ?",
                (handle,),
            ).fetchone()
            if row is not None:
                out[handle] = (str(row[0]), int(row[1]), str(row[2]))
        return out

    def snapshot(self) -> dict[str, Any]:
        """The whole index as plain data keyed by path (ids left out): for comparisons."""
        c = self.conn
        paths = dict(c.execute("SELECT id, path FROM files"))
        return {
            "files": sorted(c.execute(
                "SELECT path, size, mtime_ns, sha256, language, encoding, lines, status, is_test,"
                " package, manifest FROM files"
            ).fetchall()),
            "symbols": sorted((paths[r[0]], *r[1:]) for r in c.execute("SELECT * FROM symbols")),
            "imports": sorted((paths[r[0]], *r[1:]) for r in c.execute(
                "SELECT file_id, module, names, line, kind FROM imports")),
            "lexicon": sorted((paths[r[0]], unpack_lexicon(r[1])) for r in c.execute(
                "SELECT file_id, data FROM lexicon_docs")),
            "lexicon_rows": _scalar(c, "SELECT COUNT(*) FROM lexicon"),
            "edges": sorted((paths[r[0]], paths[r[1]], r[2], r[3]) for r in c.execute(
                "SELECT src_id, dst_id, kind, evidence FROM edges")),
            "omitted": sorted(c.execute("SELECT path, reason, size FROM omitted").fetchall()),
        }  # fmt: skip


_FILE_COLUMNS = (
    "path, size, mtime_ns, sha256, language, encoding, lines, status, is_test, package, manifest"
)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _scalar(c: sqlite3.Connection, sql: str) -> int:
    return int(c.execute(sql).fetchone()[0])


def _write_file(c: sqlite3.Connection, rec: FileRecord) -> None:
    row = c.execute("SELECT id FROM files WHERE path = ?", (rec.path,)).fetchone()
    values = (
        rec.size, rec.mtime_ns, rec.sha256, rec.language, rec.encoding, rec.lines, rec.status,
        int(rec.is_test), rec.package, rec.manifest,
    )  # fmt: skip
    checked = (*values, _row_check((rec.path, *values)))
    if row is None:
        file_id = c.execute(
            f"INSERT INTO files({_FILE_COLUMNS}, checksum, git_blob)"
            " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (rec.path, *checked, rec.git_blob),
        ).lastrowid
    else:
        file_id = row[0]
        _delete_children(c, [(file_id,)])
        c.execute(
            "UPDATE files SET size=?, mtime_ns=?, sha256=?, language=?, encoding=?, lines=?,"
            " status=?, is_test=?, package=?, manifest=?, checksum=?, git_blob=? WHERE id = ?",
            (*checked, rec.git_blob, file_id),
        )
    c.executemany(
        "INSERT INTO symbols(file_id, kind, name, qualname, start_line, end_line)"
        " VALUES(?,?,?,?,?,?)",
        [(file_id, s.kind, s.name, s.qualname, s.start_line, s.end_line) for s in rec.symbols],
    )
    c.executemany(
        "INSERT INTO imports(file_id, module, names, line, kind) VALUES(?,?,?,?,?)",
        [(file_id, i.module, json.dumps(list(i.names)), i.line, i.kind) for i in rec.imports],
    )
    if rec.lexicon_blob:
        c.execute(
            "INSERT INTO lexicon(rowid, path, symbols, body) VALUES(?,?,?,?)",
            (file_id, *rec.lexicon),
        )
        c.execute(
            "INSERT INTO lexicon_docs(file_id, data) VALUES(?,?)", (file_id, rec.lexicon_blob)
        )


def _delete_children(c: sqlite3.Connection, ids: list[tuple[int]]) -> None:
    for (file_id,) in ids:
        row = c.execute("SELECT data FROM lexicon_docs WHERE file_id = ?", (file_id,)).fetchone()
        if row is not None:
            # a contentless FTS5 row is deleted by repeating exactly what was indexed
            c.execute(
                "INSERT INTO lexicon(lexicon, rowid, path, symbols, body)"
                " VALUES('delete', ?, ?, ?, ?)",
                (file_id, *unpack_lexicon(row[0])),
            )
    for table in ("symbols", "imports", "lexicon_docs"):
        c.executemany(f"DELETE FROM {table} WHERE file_id = ?", ids)
    c.executemany("DELETE FROM edges WHERE src_id = ? OR dst_id = ?", [(i, i) for (i,) in ids])


# -- opening helpers -----------------------------------------------------------------------


def _untrusted_file(db: Path) -> str | None:
    try:
        st = os.lstat(db)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return "the database path is not a regular file"
    return None


def _connect(db: Path) -> sqlite3.Connection:
    fd = os.open(db, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    os.close(fd)
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def _verify(conn: sqlite3.Connection) -> str | None:
    """Why an existing database must not be trusted, or None when it is fine."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if app_id == 0 and version == 0:
        tables = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
        return None if tables == 0 else "not an excerpt database"
    if app_id != APPLICATION_ID:
        return "not an excerpt database"
    if not 1 <= version <= len(MIGRATIONS):
        return f"unknown schema version {version}"
    clean = conn.execute("SELECT value FROM meta WHERE key = 'clean'").fetchone()
    if clean is None or clean[0] != "1":
        result = conn.execute("PRAGMA integrity_check").fetchone()[0]
        if result != "ok":
            return "integrity check failed after an interrupted run"
    return None


def _migrate(conn: sqlite3.Connection) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def _quarantine(cache_dir: Path, db: Path) -> None:
    """Move a database and its WAL/SHM aside together, so a rebuild starts clean."""
    parts = [p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if os.path.lexists(p)]
    if not parts:
        return
    target = cache_dir / f"corrupt-{time.time_ns()}"
    try:
        target.mkdir(mode=0o700)
        for part in parts:
            os.replace(part, target / part.name)
    except OSError as exc:
        raise CacheFault(f"cannot move an untrusted index aside: {exc.strerror}") from exc
