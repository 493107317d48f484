"""The SQLite index store: one database per repository in the cache, never in the repository.

WAL journal, batched ``BEGIN IMMEDIATE`` transactions, rows checked on read. Opening, trust
checks and the writer lock are in ``excerpt.index.db``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from excerpt.core.settings import INDEX_DB
from excerpt.discover.reader import Omission
from excerpt.errors import CacheFault
from excerpt.index.checks import (
    FILE_COLUMNS,
    file_row_check,
    imports_check,
    symbols_check,
    terms_check,
)
from excerpt.index.db import (
    OPEN_ERRORS,
    CorruptIndex,
    connect,
    is_environmental,
    make_cache_dir,
    migrate,
    quarantine,
    untrusted_file,
    verify,
)
from excerpt.index.history import HistoryChange, HistoryCommit, HistoryState
from excerpt.index.lang.base import FileFacts, Import
from excerpt.index.records import FileRecord, unpack_lexicon
from excerpt.index.resolve import Edge
from excerpt.index.tokens import lexicon_text
from excerpt.index.view import StoreView

__all__ = ["DamagedRows", "IndexStore"]

logger = logging.getLogger(__name__)


class DamagedRows(Exception):
    """Some files' derived rows failed their digest: read those files again."""

    def __init__(self, paths: Sequence[str]) -> None:
        super().__init__(f"{len(paths)} file(s) with damaged rows")
        self.paths = tuple(paths)


class IndexStore:
    """Read and write one repository's index database."""

    def __init__(self, conn: sqlite3.Connection, rebuilt: str | None) -> None:
        self.conn = conn
        self.rebuilt = rebuilt  # why an existing database was discarded, if it was

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, cache_dir: Path) -> IndexStore:
        """Open (creating, migrating or rebuilding) the index in ``cache_dir``.

        A database that is damaged or not excerpt's is moved aside and rebuilt; one that
        cannot be opened or written (permissions, a read-only or full disk, busy) is an error,
        never a reason to discard it.

        Raises:
            CacheFault: the cache directory or database cannot be used at all.
        """
        make_cache_dir(cache_dir)
        db = cache_dir / INDEX_DB
        problem = untrusted_file(db)
        if problem is None:
            conn = None
            try:
                conn = connect(db)
                problem = verify(conn)
                if problem is None:
                    migrate(conn)
                    return cls(conn, None)
            except OSError as exc:
                raise CacheFault(
                    f"cannot open the index database {db}: {exc.strerror or exc}"
                ) from exc
            except OPEN_ERRORS as exc:
                if is_environmental(exc):
                    if conn is not None:
                        conn.close()
                    code = getattr(exc, "sqlite_errorname", None)  # SQLITE_IOERR_SHMMAP…
                    detail = f"{exc} ({code})" if code else str(exc)
                    raise CacheFault(f"cannot use the index database {db}: {detail}") from exc
                problem = f"unreadable database ({type(exc).__name__})"
            if conn is not None:
                conn.close()
        quarantine(cache_dir, db)
        try:
            conn = connect(db)
            migrate(conn)
        except (OSError, sqlite3.Error) as exc:
            raise CacheFault(f"cannot create the index database in {cache_dir}: {exc}") from exc
        return cls(conn, problem)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> IndexStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def view(self) -> StoreView:
        """The read-only queries ranking and packing make, over this connection; a file whose
        rows it finds damaged is left out of its answers and asked to be read again."""
        return StoreView(self.conn, on_damage=self.request_repair)

    @classmethod
    def rebuild(cls, cache_dir: Path, why: str) -> IndexStore:
        """Move the current database aside and start an empty one.

        Raises:
            CacheFault: the database cannot be moved or created.
        """
        quarantine(cache_dir, cache_dir / INDEX_DB)
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
        """``{path: (size, mtime_ns, sha256)}`` of every stored file, for finding what changed.

        Unchecked (a refresh reads it whole, every pack): a damaged value costs a file read
        again at most, and a row is checked against its digest where it is served
        (``StoreView.files``), which has the next run read a damaged one again.
        """
        rows = self.conn.execute("SELECT path, size, mtime_ns, sha256 FROM files")
        return {row[0]: row[1:] for row in rows}

    def holds_below(self, directory: str) -> bool:
        """Whether a stored file lies under ``directory`` (a path relative to the root)."""
        row = self.conn.execute(
            "SELECT 1 FROM files WHERE path > ? AND path < ? LIMIT 1",
            (directory + "/", directory + "0"),  # "0" follows "/": every path below it
        ).fetchone()
        return row is not None

    def omissions(self) -> tuple[Omission, ...]:
        """The stored omissions, as the run that stored them found them."""
        rows = self.conn.execute("SELECT path, reason, size FROM omitted ORDER BY path, reason")
        return tuple(Omission(path=str(p), reason=str(r), size=z) for p, r, z in rows)

    def paths_with_status(self, status: str) -> set[str]:
        """The stored files omitted for ``status``."""
        rows = self.conn.execute("SELECT path FROM files WHERE status = ?", (status,))
        return {str(row[0]) for row in rows}

    def request_repair(self, path: str) -> None:
        """Have the next run read ``path`` again: its rows failed their digest. Best effort:
        should the database refuse the write (busy, read-only), the rows stay unserved and
        the next reader asks again."""
        try:
            with self.transaction() as c:
                c.execute("INSERT OR IGNORE INTO repairs(path) VALUES(?)", (path,))
        except sqlite3.OperationalError as exc:
            logger.warning("cannot record that %r needs reading again: %s", path, exc)

    def repairs(self) -> set[str]:
        """The files to read again whatever their state, because their rows were damaged."""
        return {str(row[0]) for row in self.conn.execute("SELECT path FROM repairs")}

    def clear_repairs(self, paths: Iterable[str]) -> None:
        done = [(p,) for p in paths]
        if done:
            with self.transaction() as c:
                c.executemany("DELETE FROM repairs WHERE path = ?", done)

    def write_files(self, records: Sequence[FileRecord]) -> None:
        """Insert or replace files with all their derived rows, in one transaction.

        What the graph needs next is recorded in the same transaction: nothing when what
        resolution reads of every file is unchanged (an edit inside a function keeps its
        edges); the file's path in ``graph_pending`` when only its import rows changed (only
        its own imports are resolved again); the whole graph (``graph_dirty``) for a new file
        or a changed language, package, manifest or status, from which the resolvers' tables
        are built.
        """
        with self.transaction() as c:
            changes = [(rec.path, _write_file(c, rec)) for rec in records]
            if any(change == "layout" for _, change in changes):
                c.execute("UPDATE meta SET value = '1' WHERE key = 'graph_dirty'")
            c.executemany(
                "INSERT OR IGNORE INTO graph_pending(path) VALUES(?)",
                [(path,) for path, change in changes if change == "imports"],
            )

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
        """Store this run's omissions; nothing is written when they are what is stored."""
        rows = sorted({(o.path, o.reason, o.size) for o in omissions})
        stored = self.conn.execute("SELECT path, reason, size FROM omitted").fetchall()
        if rows == sorted(stored):
            return
        with self.transaction() as c:
            c.execute("DELETE FROM omitted")
            c.executemany("INSERT OR REPLACE INTO omitted(path, reason, size) VALUES(?,?,?)", rows)

    # -- graph -----------------------------------------------------------------------------

    def graph_dirty(self) -> bool:
        """Whether the whole graph must be resolved again."""
        return self.meta("graph_dirty") != "0"

    def graph_pending(self) -> list[str]:
        """The files whose own imports must be resolved again, and nothing else."""
        return [
            str(r[0]) for r in self.conn.execute("SELECT path FROM graph_pending ORDER BY path")
        ]

    def graph_stale(self) -> bool:
        return (
            self.graph_dirty()
            or self.conn.execute("SELECT 1 FROM graph_pending LIMIT 1").fetchone() is not None
        )

    def facts(self, importing: Collection[str] | None = None) -> list[FileFacts]:
        """What graph resolution needs of every indexed file: with ``importing``, the import
        rows of those files alone (the others' are not read: no resolver's tables depend on
        them).

        Raises:
            DamagedRows: some files' import rows (of those read) do not match their digest.
        """
        files = self.conn.execute(
            "SELECT id, path, language, package, manifest, imports_check FROM files"
            " WHERE status IS NULL"
        ).fetchall()
        if importing is None:
            query = "SELECT file_id, module, names, line, kind FROM imports ORDER BY file_id, rowid"
            read = files
        else:
            wanted = set(importing)
            read = [r for r in files if r[1] in wanted]
            marks = ",".join("?" * len(read))
            query = (
                "SELECT file_id, module, names, line, kind FROM imports"
                f" WHERE file_id IN ({marks}) ORDER BY file_id, rowid"
            )
        rows: dict[int, list[tuple[str, str, int, str]]] = {}
        for file_id, module, names, line, kind in self.conn.execute(
            query, [] if importing is None else [r[0] for r in read]
        ):
            rows.setdefault(file_id, []).append((module, names, line, kind))
        damaged = [r[1] for r in read if imports_check(rows.get(r[0], ())) != r[5]]
        if damaged:
            raise DamagedRows(damaged)
        return [
            FileFacts(
                path=path,
                language=language,
                imports=tuple(
                    Import(module=module, names=tuple(json.loads(names)), line=line, kind=kind)
                    for module, names, line, kind in rows.get(file_id, ())
                ),
                package=package,
                manifest=manifest,
            )
            for file_id, path, language, package, manifest, _ in files
        ]

    def replace_edges(
        self, edges: Iterable[Edge], *, sources: Collection[str] | None = None
    ) -> None:
        """Store the resolved graph, writing only the rows that differ from the stored ones.

        With ``sources``, ``edges`` are what those files' imports give (their import edges
        and the test associations made by import); the rest of the graph is kept.
        """
        with self.transaction() as c:
            ids = dict(c.execute("SELECT path, id FROM files"))
            new = {(ids[e.src], ids[e.dst], e.kind, e.evidence) for e in edges}
            if sources is None:
                old = set(c.execute("SELECT src_id, dst_id, kind, evidence FROM edges"))
                c.execute("DELETE FROM graph_pending")
                c.execute("UPDATE meta SET value = '0' WHERE key = 'graph_dirty'")
            else:
                src_ids = [(ids[p],) for p in sources if p in ids]
                old = {
                    tuple(row)
                    for (src_id,) in src_ids
                    for row in c.execute(
                        "SELECT src_id, dst_id, kind, evidence FROM edges WHERE src_id = ?"
                        " AND (kind = 'imports' OR evidence = 'import')",
                        (src_id,),
                    )
                }
                c.executemany("DELETE FROM graph_pending WHERE path = ?", [(p,) for p in sources])
            c.executemany(
                "DELETE FROM edges WHERE src_id = ? AND dst_id = ? AND kind = ? AND evidence = ?",
                sorted(old - new),
            )
            c.executemany(
                "INSERT OR IGNORE INTO edges(src_id, dst_id, kind, evidence) VALUES(?,?,?,?)",
                sorted(new - old),
            )

    # -- history ---------------------------------------------------------------------------

    def history_state(self) -> HistoryState:
        """What the stored history was built for, and its commit ids."""
        shas = frozenset(str(r[0]) for r in self.conn.execute("SELECT sha FROM history_commits"))
        return HistoryState(
            key=self.meta("history_key") or "", head=self.meta("history_head") or "",
            truncated=self.meta("history_truncated") == "1", shas=shas,
        )  # fmt: skip

    def history_counts(self) -> tuple[int, int]:
        """``(commits held, of them skipped for changing too many files)``."""
        row = self.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(skipped), 0) FROM history_commits"
        ).fetchone()
        return int(row[0]), int(row[1])

    def apply_history(self, change: HistoryChange) -> int:
        """Drop, add and record the head in one transaction (a crash leaves the history of
        the old head or of the new one, never a mixture); past ``max_commits`` the oldest by
        commit time go. Returns how many commits were dropped."""
        with self.transaction() as c:
            dropped = _delete_commits(c, sorted(change.remove))
            for commit in change.add:
                _insert_commit(c, commit)
            truncated = change.truncated
            over = _scalar(c, "SELECT COUNT(*) FROM history_commits") - change.max_commits
            if over > 0:
                oldest = c.execute(
                    "SELECT sha FROM history_commits ORDER BY time, sha LIMIT ?", (over,)
                )
                dropped += _delete_commits(c, [str(r[0]) for r in oldest.fetchall()])
                truncated = True
            c.executemany(
                "INSERT INTO meta(key, value) VALUES(?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [("history_head", change.head), ("history_key", change.key),
                 ("history_truncated", "1" if truncated else "0")],
            )  # fmt: skip
        return dropped

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


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _scalar(c: sqlite3.Connection, sql: str) -> int:
    return int(c.execute(sql).fetchone()[0])


GraphChange = Literal["same", "imports", "layout"]
"""What a rewritten file changes of the graph's input: nothing; its own import rows alone;
or what the resolvers' tables are built from (a new file, its language, package, manifest or
status)."""


def _write_file(c: sqlite3.Connection, rec: FileRecord) -> GraphChange:
    """Write one file's rows; what changed of what graph resolution reads of it."""
    row = c.execute(
        "SELECT id, language, package, manifest, status FROM files WHERE path = ?", (rec.path,)
    ).fetchone()
    values = (
        rec.size, rec.mtime_ns, rec.sha256, rec.language, rec.encoding, rec.lines, rec.status,
        int(rec.is_test), rec.package, rec.manifest,
    )  # fmt: skip
    symbols = [(s.kind, s.name, s.qualname, s.start_line, s.end_line) for s in rec.symbols]
    imports = [(i.module, json.dumps(list(i.names)), i.line, i.kind) for i in rec.imports]
    checked = (
        *values, file_row_check((rec.path, *values)), rec.git_blob,
        symbols_check(symbols), imports_check(imports), terms_check(rec.lexicon_blob),
    )  # fmt: skip
    change: GraphChange = "layout"
    if row is None:
        file_id = c.execute(
            f"INSERT INTO files({FILE_COLUMNS}, checksum, git_blob, symbols_check,"
            " imports_check, terms_check) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (rec.path, *checked),
        ).lastrowid
    else:
        file_id = row[0]
        if tuple(row[1:]) == (rec.language, rec.package, rec.manifest, rec.status):
            before = c.execute(
                "SELECT module, names, line, kind FROM imports WHERE file_id = ? ORDER BY rowid",
                (file_id,),
            ).fetchall()
            change = "same" if [tuple(r) for r in before] == imports else "imports"
        # the edges stay until the graph is resolved again (in the transaction that does it)
        _delete_children(c, [(file_id,)], edges=change == "layout")
        c.execute(
            "UPDATE files SET size=?, mtime_ns=?, sha256=?, language=?, encoding=?, lines=?,"
            " status=?, is_test=?, package=?, manifest=?, checksum=?, git_blob=?,"
            " symbols_check=?, imports_check=?, terms_check=? WHERE id = ?",
            (*checked, file_id),
        )
    c.executemany(
        "INSERT INTO symbols(file_id, kind, name, qualname, start_line, end_line)"
        " VALUES(?,?,?,?,?,?)",
        [(file_id, *row) for row in symbols],
    )
    c.executemany(
        "INSERT INTO imports(file_id, module, names, line, kind) VALUES(?,?,?,?,?)",
        [(file_id, *row) for row in imports],
    )
    if rec.lexicon_blob:
        c.execute(
            "INSERT INTO lexicon(rowid, path, symbols, body) VALUES(?,?,?,?)",
            (file_id, *rec.lexicon),
        )
        c.execute(
            "INSERT INTO lexicon_docs(file_id, data) VALUES(?,?)", (file_id, rec.lexicon_blob)
        )
    return change


def _delete_children(c: sqlite3.Connection, ids: list[tuple[int]], *, edges: bool = True) -> None:
    """Delete the rows derived from these files (their graph edges too, unless ``edges`` is
    off: a file rewritten with what resolution reads of it unchanged keeps them).

    Raises:
        CorruptIndex: a file's indexed terms do not match their digest: deleting them from
            the full-text index needs exactly what was indexed, so it cannot be mended.
    """
    for (file_id,) in ids:
        row = c.execute(
            "SELECT d.data, f.terms_check FROM lexicon_docs d JOIN files f ON f.id = d.file_id"
            " WHERE d.file_id = ?",
            (file_id,),
        ).fetchone()
        if row is not None:
            if not isinstance(row[0], bytes) or terms_check(row[0]) != row[1]:
                raise CorruptIndex("a file's indexed terms do not match their digest")
            # a contentless FTS5 row is deleted by repeating exactly what was indexed
            c.execute(
                "INSERT INTO lexicon(lexicon, rowid, path, symbols, body)"
                " VALUES('delete', ?, ?, ?, ?)",
                (file_id, *unpack_lexicon(row[0])),
            )
    for table in ("symbols", "imports", "lexicon_docs"):
        c.executemany(f"DELETE FROM {table} WHERE file_id = ?", ids)
    if edges:
        c.executemany("DELETE FROM edges WHERE src_id = ? OR dst_id = ?", [(i, i) for (i,) in ids])


def _delete_commits(c: sqlite3.Connection, shas: Sequence[str]) -> int:
    ids = [
        (int(r[0]),)
        for sha in shas
        for r in c.execute("SELECT id FROM history_commits WHERE sha = ?", (sha,))
    ]
    c.executemany("DELETE FROM history_text WHERE rowid = ?", ids)
    c.executemany("DELETE FROM history_files WHERE commit_id = ?", ids)
    c.executemany("DELETE FROM history_commits WHERE id = ?", ids)
    return len(ids)


def _insert_commit(c: sqlite3.Connection, commit: HistoryCommit) -> None:
    commit_id = c.execute(
        "INSERT INTO history_commits(sha, time, changed, skipped) VALUES(?,?,?,?)",
        (commit.sha, commit.time, commit.changed, int(commit.skipped)),
    ).lastrowid
    if not commit.paths:
        return  # nothing the index holds: held so the set stays exact, never matched
    c.executemany(
        "INSERT INTO history_files(commit_id, path) VALUES(?,?)",
        [(commit_id, p) for p in commit.paths],
    )
    c.execute(
        "INSERT INTO history_text(rowid, subject, body) VALUES(?,?,?)",
        (commit_id, lexicon_text(commit.subject), lexicon_text(commit.body)),
    )
