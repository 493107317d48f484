"""``StoreView``: the ``IndexView`` of an open index connection, its rows read by column name
(``rows``).

The file table is kept in the process between views (``file_tables``, a memo by database):
a long-lived process (the MCP server) reads it once per version, and after an edit reads
only the rows that changed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from excerpt.core.memo import Memo, register
from excerpt.index.checks import file_row_check, symbols_check
from excerpt.index.history import MESSAGE_WEIGHTS, PastCommit
from excerpt.index.view.protocol import FIELD_WEIGHTS, FileInfo, ImportEdge, SymbolSpan
from excerpt.index.view.rows import (
    FILES,
    CommitFile,
    CommitHit,
    Database,
    EdgeRow,
    FileRow,
    LexicalHit,
    OmittedRow,
    SymbolRecord,
    SymbolsCheck,
    TermDocs,
    covered,
    select,
    select_in,
    symbol_row,
)

__all__ = ["StoreView"]

# Every write of a row changes its checksum (it covers the path, size, mtime and hash), so
# the count, the largest id and the sum of the checksums change with any row written, added
# or removed; a table is kept only when every row passed its check, with each row's
# checksum, so that after a few rows changed only those are read again (an edit in a tree
# of 100,000 files: two integers a row, not the table).
_TABLE_DIGEST = "SELECT count(*), max(id), sum(checksum) FROM files"
_PATCH_MAX = 0.1  # a larger share of rows changed: the table is read whole


@dataclass(frozen=True, slots=True)
class _Table:
    digest: tuple[object, ...]
    files: dict[str, FileInfo]
    ids: dict[int, str]
    sums: dict[int, int]  # each row's checksum, by id


# the file tables read last, by database
_tables: Memo[str, _Table] = register(Memo("file_tables", max_entries=4))


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class StoreView:
    """``IndexView`` over one open index connection.

    Symbol rows are checked against their file's digest as they are read: a file whose rows
    fail it answers no definitions (never damaged ones), is added to ``damaged`` and passed
    to ``on_damage``, which has the next run read it again.
    """

    def __init__(
        self, conn: sqlite3.Connection, on_damage: Callable[[str], None] | None = None
    ) -> None:
        self.conn = conn
        self.on_damage = on_damage
        self.damaged: set[str] = set()
        self._files: dict[str, FileInfo] | None = None
        self._ids: dict[int, str] | None = None
        self._numbers: dict[str, int] | None = None

    def files(self) -> dict[str, FileInfo]:
        """Every file the index holds (indexed or omitted by status), by path; a row that
        fails its digest is left out (and read again by the next run).

        A long-lived process (the MCP server) reads the table once per version of it: an
        intact table is kept with the digest of its rows, and a view whose table has the same
        digest answers with the table kept (the same object, which no caller changes); one
        whose rows changed in part reads those rows alone."""
        if self._files is None:
            database = self._database()
            digest = tuple(self.conn.execute(_TABLE_DIGEST).fetchone())
            kept = _tables.get(database) if database else None
            if kept is not None and kept.digest == digest:
                table = kept
            else:
                table = (self._patched(kept, digest) if kept else None) or self._read(digest)
                if not self.damaged and database:
                    _tables.put(database, table)
            self._files, self._ids = table.files, table.ids
        return self._files

    def _read(self, digest: tuple[object, ...]) -> _Table:
        table = _Table(digest, {}, {}, {})
        self._add_rows(table, select(self.conn, FileRow, f"{FILES} ORDER BY path"))
        return table

    def _patched(self, kept: _Table, digest: tuple[object, ...]) -> _Table | None:
        """``kept`` with the rows written or removed since read again; None when more than
        a tenth of them changed."""
        sums: dict[int, int] = dict(self.conn.execute("SELECT id, checksum FROM files"))
        changed = sorted(i for i, check in sums.items() if kept.sums.get(i) != check)
        gone = [i for i in kept.sums if i not in sums]
        if len(changed) + len(gone) > _PATCH_MAX * max(len(sums), 1):
            return None
        rows = {
            r.id: r for r in select_in(self.conn, FileRow, f"{FILES} WHERE id IN ({{}})", changed)
        }
        table = _Table(digest, dict(kept.files), dict(kept.ids), dict(kept.sums))
        moved = bool(gone)
        for i in (*gone, *changed):
            row = rows.get(i)
            if row is not None and table.ids.get(i) == row.path:
                continue  # the same path written again: replaced where it stands
            moved = True
            path = table.ids.pop(i, None)
            table.sums.pop(i, None)
            if path is not None:
                table.files.pop(path, None)
        self._add_rows(table, [rows[i] for i in changed if i in rows])
        if moved:  # a row added, removed or renamed: in path order, as a whole read gives
            ordered = sorted(table.files.items())
            table.files.clear()
            table.files.update(ordered)
            by_path = sorted(table.ids.items(), key=lambda kv: kv[1])
            table.ids.clear()
            table.ids.update(by_path)
        return table

    def _add_rows(self, table: _Table, rows: Iterable[FileRow]) -> None:
        """Each of ``rows`` into ``table``, checked."""
        files, ids, sums = table.files, table.ids, table.sums
        for r in rows:
            path = r.path
            if file_row_check(covered(r)) != r.checksum:
                self._damaged(path)
                kept = ids.pop(r.id, None)  # (a kept row it replaced is left out too)
                if kept is not None:
                    files.pop(kept, None)
                continue
            ids[r.id] = path
            sums[r.id] = r.checksum
            # in FileInfo's order (made for every file of the tree: by keyword, twice the time)
            files[path] = FileInfo(
                path, r.size, r.sha256, r.language, r.encoding, r.lines, r.status,
                bool(r.is_test), r.git_blob,
            )  # fmt: skip

    def _database(self) -> str:
        """The main database's file ("" for one in memory or a temporary one)."""
        databases = select(self.conn, Database, "PRAGMA database_list")
        return next((str(d.file) for d in databases if d.name == "main"), "")

    def _paths_by_id(self) -> dict[int, str]:
        self.files()
        assert self._ids is not None
        return self._ids

    def _numbers_by_path(self) -> dict[str, int]:
        if self._numbers is None:
            self._numbers = {p: i for i, p in self._paths_by_id().items()}
        return self._numbers

    def omitted(self) -> list[tuple[str, str]]:
        """Paths discovery refused, with reasons (sensitive ones by name only)."""
        rows = select(self.conn, OmittedRow, "SELECT path, reason FROM omitted")
        return [(str(o.path), str(o.reason)) for o in rows]

    def lexical(
        self,
        terms: Sequence[str],
        limit: int,
        field_weights: tuple[float, float, float] = FIELD_WEIGHTS,
    ) -> list[tuple[str, float]]:
        """Files matching any term, best first, with a positive BM25 score."""
        if not terms:
            return []
        query = " OR ".join(_quote(t) for t in terms)
        weights = ", ".join(str(w) for w in field_weights)
        ids = self._paths_by_id()
        rows = select(
            self.conn, LexicalHit,
            f"SELECT rowid AS file_id, bm25(lexicon, {weights}) AS score FROM lexicon"
            " WHERE lexicon MATCH ? ORDER BY score LIMIT ?",
            (query, limit * 2),
        )  # fmt: skip
        # ties break by path, not by row id (which depends on what was indexed before)
        hits = sorted(
            ((ids[r.file_id], -round(r.score, 9)) for r in rows if r.file_id in ids),
            key=lambda hit: (-hit[1], hit[0]),
        )
        return hits[:limit]

    def document_frequencies(self, terms: Iterable[str]) -> dict[str, int]:
        """How many files hold each term (any field)."""
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.lexicon_vocab"
            " USING fts5vocab(main, 'lexicon', 'row')"
        )
        wanted = sorted(set(terms))
        out = dict.fromkeys(wanted, 0)
        for row in select_in(
            self.conn,
            TermDocs,
            "SELECT term, doc FROM temp.lexicon_vocab WHERE term IN ({})",
            wanted,
        ):
            out[row.term] = int(row.doc)
        return out

    def symbols_named(self, names: Iterable[str]) -> list[SymbolSpan]:
        """Definitions whose name is one of ``names`` (exact, case-sensitive)."""
        return self._symbols("name", sorted(set(names)))

    def symbols_in(self, paths: Iterable[str]) -> list[SymbolSpan]:
        """Every definition in the given files."""
        ids = self._numbers_by_path()
        wanted = sorted(ids[p] for p in set(paths) if p in ids)
        return self._symbols("file_id", wanted)

    def _symbols(self, column: str, values: Sequence[object]) -> list[SymbolSpan]:
        ids = self._paths_by_id()
        # a row of no file the index holds belongs to nothing that could be served
        found = {i: rows for i, rows in self._symbol_rows(column, values).items() if i in ids}
        # rows found by name are a part of their files' rows: those files are checked whole
        whole = found if column == "file_id" else self._symbol_rows("file_id", sorted(found))
        asked = values if column == "file_id" else sorted(found)
        checks = self._symbol_checks([i for i in asked if isinstance(i, int)])
        damaged = {
            file_id
            for file_id in asked
            if isinstance(file_id, int)
            and symbols_check(map(symbol_row, whole.get(file_id, ()))) != checks.get(file_id)
        }
        for file_id in sorted(damaged):
            self._damaged(ids[file_id])
        out = [
            SymbolSpan(
                path=ids[file_id],
                kind=row.kind,
                name=row.name,
                qualname=row.qualname,
                start_line=row.start_line,
                end_line=row.end_line,
            )
            for file_id, rows in found.items()
            if file_id not in damaged
            for row in rows
        ]
        return sorted(out, key=lambda s: (s.path, s.start_line, s.end_line, s.qualname))

    def _symbol_checks(self, file_ids: Sequence[int]) -> dict[int, int | None]:
        """The stored digest of each file's definitions (asked for the files read, not kept
        for the whole table)."""
        rows = select_in(
            self.conn,
            SymbolsCheck,
            "SELECT id, symbols_check FROM files WHERE id IN ({})",
            file_ids,
        )
        return {r.id: r.symbols_check for r in rows}

    def _symbol_rows(self, column: str, values: Sequence[object]) -> dict[int, list[SymbolRecord]]:
        out: dict[int, list[SymbolRecord]] = {}
        for row in select_in(
            self.conn,
            SymbolRecord,
            "SELECT file_id, kind, name, qualname, start_line, end_line FROM symbols"
            f" WHERE {column} IN ({{}})",
            values,
        ):
            out.setdefault(row.file_id, []).append(row)
        return out

    def _damaged(self, path: str) -> None:
        if path not in self.damaged:
            self.damaged.add(path)
            if self.on_damage is not None:
                self.on_damage(path)

    def edges(self) -> list[ImportEdge]:
        """Every graph edge, sorted."""
        rows = select(self.conn, EdgeRow, "SELECT DISTINCT src_id, dst_id, kind FROM edges")
        return self._named_edges(rows)

    def edges_touching(self, paths: Iterable[str]) -> list[ImportEdge]:
        """The graph edges with an end in ``paths``, sorted: the few a ranking follows from
        its strongest files, looked up by either end rather than the whole graph read."""
        number = self._numbers_by_path()
        wanted = sorted(number[p] for p in set(paths) if p in number)
        found: set[EdgeRow] = set()
        for column in ("src_id", "dst_id"):
            sql = f"SELECT src_id, dst_id, kind FROM edges WHERE {column} IN ({{}})"
            found.update(select_in(self.conn, EdgeRow, sql, wanted))
        return self._named_edges(found)

    def _named_edges(self, rows: Iterable[EdgeRow]) -> list[ImportEdge]:
        """``rows`` between files the index holds, by path, sorted."""
        ids = self._paths_by_id()
        return sorted(
            ImportEdge(ids[e.src_id], ids[e.dst_id], e.kind)
            for e in rows
            if e.src_id in ids and e.dst_id in ids
        )

    def history(self, terms: Sequence[str], limit: int) -> list[PastCommit]:
        """Past commits whose messages hold any term, best first (BM25), with the indexed
        files each changed; none without a history."""
        if not terms or limit <= 0:
            return []
        weights = ", ".join(str(w) for w in MESSAGE_WEIGHTS)
        rows = list(
            select(
                self.conn, CommitHit,
                f"SELECT t.rowid AS commit_id, bm25(history_text, {weights}) AS score,"
                " t.subject AS subject, t.body AS body, c.sha AS sha, c.time AS time,"
                " c.changed AS changed FROM history_text t"
                " JOIN history_commits c ON c.id = t.rowid"
                " WHERE history_text MATCH ? ORDER BY score LIMIT ?",
                (" OR ".join(_quote(t) for t in terms), limit * 2),
            )
        )  # fmt: skip
        wanted = set(terms)
        indexed = self.files()
        paths: dict[int, list[str]] = {}
        marks = ",".join("?" * len(rows))
        for commit_file in select(
            self.conn, CommitFile,
            f"SELECT commit_id, path FROM history_files WHERE commit_id IN ({marks})"
            " ORDER BY commit_id, path",
            [r.commit_id for r in rows],
        ):  # fmt: skip
            if commit_file.path in indexed:
                paths.setdefault(commit_file.commit_id, []).append(str(commit_file.path))
        hits = [
            PastCommit(
                sha=str(r.sha), time=int(r.time), score=-round(r.score, 9),
                changed=int(r.changed), files=tuple(paths.get(r.commit_id, ())),
                matched=tuple(sorted(wanted & set(f"{r.subject} {r.body}".split()))),
            )
            for r in rows
        ]  # fmt: skip
        # ties break by commit id, not by row id (which depends on what was stored before)
        return sorted(hits, key=lambda h: (-h.score, h.sha))[:limit]
