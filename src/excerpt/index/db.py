"""Opening the index database safely: the single-writer lock, trust checks, migrations, and
moving an untrusted database aside.

A database that is not ours (``application_id``), from an unknown schema version, or that
fails ``integrity_check`` after an unclean shutdown is moved aside with its ``-wal``/``-shm``
and rebuilt, never trusted. One writer at a time: ``flock`` on ``writer.lock``, which the
kernel releases if the writer dies.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import sqlite3
import stat
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

from excerpt.errors import CacheBusy, CacheFault
from excerpt.index.checks import RowsCheck, terms_check
from excerpt.index.lang import is_test_path
from excerpt.index.migrations import APPLICATION_ID, MIGRATIONS

__all__ = [
    "CORRUPTION",
    "OPEN_ERRORS",
    "CorruptIndex",
    "connect",
    "is_corruption",
    "is_environmental",
    "make_cache_dir",
    "migrate",
    "quarantine",
    "untrusted_file",
    "verify",
    "writer_lock",
]


class CorruptIndex(Exception):
    """A stored row failed its check: the database content cannot be trusted."""


# What reading a damaged database raises; any of these means "rebuild", never "use".
CORRUPTION: tuple[type[BaseException], ...] = (
    CorruptIndex,
    UnicodeDecodeError,
    zlib.error,
    json.JSONDecodeError,
)


OPEN_ERRORS: tuple[type[BaseException], ...] = (sqlite3.DatabaseError, *CORRUPTION)


# What SQLite or its Python module say of a damaged file in an ``OperationalError`` (most
# of which are the environment: busy, full, read-only): a text column holding bytes that are
# no UTF-8, a damaged page or schema, a damaged full-text index.
_DAMAGED = re.compile(
    r"could not decode|malformed|corrupt|no such (?:fts5 )?(?:table|column)|vtable constructor",
    re.I,
)


def is_corruption(exc: BaseException) -> bool:
    """Whether ``exc`` says the database is damaged (rebuild it), not that the environment
    refused it (keep it)."""
    if isinstance(exc, sqlite3.OperationalError):
        return not is_environmental(exc) and _DAMAGED.search(str(exc)) is not None
    if isinstance(exc, sqlite3.DatabaseError):
        # "disk image is malformed", "file is not a database"
        return True
    return isinstance(exc, CORRUPTION)


# SQLite primary result codes by which the environment refuses (permissions, a read-only or
# full disk, another process): the database may be fine, so it must not be discarded.
_ENVIRONMENT_CODES = frozenset(
    {
        sqlite3.SQLITE_PERM, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM,
        sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_CANTOPEN,
    }
)  # fmt: skip


def is_environmental(exc: BaseException) -> bool:
    """Whether a SQLite error is the environment refusing rather than a damaged file."""
    code = getattr(exc, "sqlite_errorcode", None)
    return (
        isinstance(exc, sqlite3.Error)
        and isinstance(code, int)
        and (code & 0xFF) in _ENVIRONMENT_CODES
    )


_LOCK_WAIT_S = 30.0
_CACHE_HINT = "set EXCERPT_CACHE_DIR to a writable directory"


def make_cache_dir(cache_dir: Path) -> None:
    """Create a repository's cache directory, private to the user, if it is not there.

    Raises:
        CacheFault: it cannot be created (an unwritable or read-only parent, a file in the way).
    """
    try:
        cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheFault(
            f"cannot create cache directory {cache_dir}: {exc.strerror or exc} ({_CACHE_HINT})"
        ) from exc


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
        raise CacheFault(
            f"cannot create the cache lock in {cache_dir}: {exc.strerror or exc} ({_CACHE_HINT})"
        ) from exc
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


def untrusted_file(db: Path) -> str | None:
    """Why the database path must not be opened, or None.

    Raises:
        CacheFault: the cache directory cannot be looked into.
    """
    try:
        st = os.lstat(db)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CacheFault(f"cannot use the cache in {db.parent}: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(st.st_mode):
        return "the database path is not a regular file"
    return None


def _create(db: Path) -> None:
    """Create the database file, private to the user, when it is not there.

    An existing file is never opened here: closing a descriptor on a file drops every POSIX
    lock the process holds on it, SQLite's own included. Another process closing its last
    connection would then take this one's connections for gone and delete the WAL under
    them, and their next read would come back short (``SQLITE_IOERR_SHORT_READ``).

    Raises:
        OSError: the file cannot be created, or the path is no longer a regular file.
    """
    try:
        fd = os.open(db, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        if not stat.S_ISREG(os.lstat(db).st_mode):  # replaced since ``untrusted_file``
            raise OSError(errno.ELOOP, "the database path is not a regular file") from None
        return
    os.close(fd)


def connect(db: Path) -> sqlite3.Connection:
    _create(db)
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA foreign_keys=ON")
    # migrations that re-derive a per-path fact call the same rule new rows get
    conn.create_function(
        "excerpt_is_test", 1, lambda path: int(is_test_path(str(path))), deterministic=True
    )
    conn.create_aggregate("excerpt_rows_check", -1, RowsCheck)
    conn.create_function("excerpt_no_rows_check", 0, RowsCheck.none, deterministic=True)
    conn.create_function("excerpt_terms_check", 1, terms_check, deterministic=True)
    return conn


def verify(conn: sqlite3.Connection) -> str | None:
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


def migrate(conn: sqlite3.Connection) -> None:
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


def quarantine(cache_dir: Path, db: Path) -> None:
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
