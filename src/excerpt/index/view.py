"""Read-only queries over an index, for ranking and packing. No file reads, and no writes
but one: asking that a file whose rows fail their digest be read again.

``IndexView`` is the seam: ``StoreView`` answers it from the SQLite index, ``MemoryView``
from values in memory (tests, and a recorded benchmark replayed without any index), and
``RecordingView`` wraps another view and keeps every answer it gave, so a ``MemoryView`` can
give them again.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from excerpt.errors import UsageError
from excerpt.index.checks import FILE_COLUMNS, SymbolRow, file_row_check, symbols_check
from excerpt.index.history import MESSAGE_WEIGHTS, PastCommit

__all__ = [
    "FileInfo",
    "IndexView",
    "MemoryView",
    "PastCommit",
    "RecordingView",
    "ReplayMiss",
    "StoreView",
    "SymbolSpan",
    "edges_near",
    "touching",
    "view_from_dict",
    "view_to_dict",
]

# Lexical field weights for BM25 (path, symbol names, body): a term in a file's path or in
# the names it defines says more about the file than one in its body.
FIELD_WEIGHTS = (4.0, 3.0, 1.0)
_CHUNK = 500


class FileInfo(NamedTuple):
    """A file the index holds. A named tuple: a pack builds one for every file of the tree,
    and a frozen dataclass costs twice as much to make (100,000 files: 0.2 s)."""

    path: str
    size: int
    sha256: str
    language: str
    encoding: str
    lines: int
    status: str | None
    is_test: bool
    git_blob: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SymbolSpan:
    path: str
    kind: str
    name: str
    qualname: str
    start_line: int
    end_line: int


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


LexicalKey = tuple[tuple[str, ...], int, tuple[float, float, float]]
HistoryKey = tuple[tuple[str, ...], int]
Edge = tuple[str, str, str]


class IndexView(Protocol):
    """The queries ranking and packing make of an index."""

    def files(self) -> dict[str, FileInfo]:
        """Every file the index holds (indexed or omitted by status), by path."""
        ...

    def omitted(self) -> list[tuple[str, str]]:
        """Paths discovery refused, with reasons (sensitive ones by name only)."""
        ...

    def lexical(
        self,
        terms: Sequence[str],
        limit: int,
        field_weights: tuple[float, float, float] = FIELD_WEIGHTS,
    ) -> list[tuple[str, float]]:
        """Files matching any term, best first, with a positive BM25 score."""
        ...

    def document_frequencies(self, terms: Iterable[str]) -> dict[str, int]:
        """How many files hold each term (any field)."""
        ...

    def symbols_named(self, names: Iterable[str]) -> list[SymbolSpan]:
        """Definitions whose name is one of ``names`` (exact, case-sensitive)."""
        ...

    def symbols_in(self, paths: Iterable[str]) -> list[SymbolSpan]:
        """Every definition in the given files."""
        ...

    def edges(self) -> list[Edge]:
        """Every graph edge ``(src, dst, kind)``, sorted."""
        ...

    def edges_touching(self, paths: Iterable[str]) -> list[Edge]:
        """The graph edges with an end in ``paths``, sorted (those of ``edges()``)."""
        ...

    def history(self, terms: Sequence[str], limit: int) -> list[PastCommit]:
        """Past commits whose messages hold any term, best first (BM25), with the indexed
        files each changed; none without a history."""
        ...


# The file tables read last, by database. Every write of a row changes its checksum (it
# covers the path, size, mtime and hash), so the count, the largest id and the sum of the
# checksums change with any row written, added or removed; a table is kept only when every
# row passed its check, with each row's checksum, so that after a few rows changed only those
# are read again (an edit in a tree of 100,000 files: two integers a row, not the table).
_TABLE_DIGEST = "SELECT count(*), max(id), sum(checksum) FROM files"
_TABLES_KEPT = 4
_PATCH_MAX = 0.1  # a larger share of rows changed: the table is read whole


@dataclass(frozen=True, slots=True)
class _Table:
    digest: tuple[object, ...]
    files: dict[str, FileInfo]
    ids: dict[int, str]
    sums: dict[int, int]  # each row's checksum, by id


_tables: OrderedDict[str, _Table] = OrderedDict()
_tables_lock = threading.Lock()


def _kept_table(database: str) -> _Table | None:
    if not database:
        return None
    with _tables_lock:
        kept = _tables.get(database)
        if kept is not None:
            _tables.move_to_end(database)
        return kept


def _keep_table(database: str, table: _Table) -> None:
    if not database:
        return
    with _tables_lock:
        _tables[database] = table
        _tables.move_to_end(database)
        while len(_tables) > _TABLES_KEPT:
            _tables.popitem(last=False)


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
            kept = _kept_table(database)
            if kept is not None and kept.digest == digest:
                table = kept
            else:
                table = (self._patched(kept, digest) if kept else None) or self._read(digest)
                if not self.damaged:
                    _keep_table(database, table)
            self._files, self._ids = table.files, table.ids
        return self._files

    def _read(self, digest: tuple[object, ...]) -> _Table:
        rows = self.conn.execute(
            f"SELECT id, {FILE_COLUMNS}, git_blob, checksum FROM files ORDER BY path"
        ).fetchall()
        table = _Table(digest, {}, {}, {})
        self._add_rows(table, rows)
        return table

    def _patched(self, kept: _Table, digest: tuple[object, ...]) -> _Table | None:
        """``kept`` with the rows written or removed since read again; None when more than
        a tenth of them changed."""
        sums = dict(self.conn.execute("SELECT id, checksum FROM files"))
        changed = sorted(i for i, check in sums.items() if kept.sums.get(i) != check)
        gone = [i for i in kept.sums if i not in sums]
        if len(changed) + len(gone) > _PATCH_MAX * max(len(sums), 1):
            return None
        rows = {
            r[0]: r
            for r in self._rows_in(
                f"SELECT id, {FILE_COLUMNS}, git_blob, checksum FROM files WHERE id IN ({{}})",
                changed,
            )
        }
        table = _Table(digest, dict(kept.files), dict(kept.ids), dict(kept.sums))
        moved = bool(gone)
        for i in (*gone, *changed):
            row = rows.get(i)
            if row is not None and table.ids.get(i) == row[1]:
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

    def _add_rows(self, table: _Table, rows: Iterable[Any]) -> None:
        """Each of ``rows`` (of ``files``, with id and checksum) into ``table``, checked."""
        for r in rows:
            if file_row_check(r[1:12]) != r[13]:
                self._damaged(r[1])
                path = table.ids.pop(r[0], None)  # (a kept row it replaced is left out too)
                if path is not None:
                    table.files.pop(path, None)
                continue
            table.ids[r[0]] = r[1]
            table.sums[r[0]] = r[13]
            # (path, size, sha256, language, encoding, lines, status, is_test, git_blob)
            table.files[r[1]] = FileInfo(
                r[1], r[2], r[4], r[5], r[6], r[7], r[8], bool(r[9]), r[12]
            )

    def _database(self) -> str:
        """The main database's file ("" for one in memory or a temporary one)."""
        rows = self.conn.execute("PRAGMA database_list").fetchall()
        return next((str(r[2]) for r in rows if r[1] == "main"), "")

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
        return [(str(p), str(r)) for p, r in self.conn.execute("SELECT path, reason FROM omitted")]

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
        rows = self.conn.execute(
            f"SELECT rowid, bm25(lexicon, {weights}) AS s FROM lexicon WHERE lexicon MATCH ?"
            " ORDER BY s LIMIT ?",
            (query, limit * 2),
        )
        # ties break by path, not by row id (which depends on what was indexed before)
        hits = sorted(
            ((ids[rowid], -round(score, 9)) for rowid, score in rows if rowid in ids),
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
        for term, docs in self._rows_in(
            "SELECT term, doc FROM temp.lexicon_vocab WHERE term IN ({})", wanted
        ):
            out[term] = int(docs)
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
            and symbols_check(whole.get(file_id, ())) != checks.get(file_id)
        }
        for file_id in sorted(damaged):
            self._damaged(ids[file_id])
        out = [
            SymbolSpan(
                path=ids[file_id],
                kind=kind,
                name=name,
                qualname=qualname,
                start_line=start,
                end_line=end,
            )
            for file_id, rows in found.items()
            if file_id not in damaged
            for kind, name, qualname, start, end in rows
        ]
        return sorted(out, key=lambda s: (s.path, s.start_line, s.end_line, s.qualname))

    def _symbol_checks(self, file_ids: Sequence[int]) -> dict[int, int | None]:
        """The stored digest of each file's definitions (asked for the files read, not kept
        for the whole table)."""
        return dict(self._rows_in("SELECT id, symbols_check FROM files WHERE id IN ({})", file_ids))

    def _symbol_rows(self, column: str, values: Sequence[object]) -> dict[int, list[SymbolRow]]:
        out: dict[int, list[SymbolRow]] = {}
        for file_id, *row in self._rows_in(
            "SELECT file_id, kind, name, qualname, start_line, end_line FROM symbols"
            f" WHERE {column} IN ({{}})",
            values,
        ):
            out.setdefault(file_id, []).append(tuple(row))
        return out

    def _rows_in(self, sql: str, values: Sequence[object]) -> Iterator[Any]:
        """The rows of ``sql`` (its ``{}`` the list of an ``IN``) for every one of
        ``values``, asked ``_CHUNK`` at a time (SQLite bounds the parameters of a query)."""
        for i in range(0, len(values), _CHUNK):
            chunk = values[i : i + _CHUNK]
            yield from self.conn.execute(sql.format(",".join("?" * len(chunk))), chunk)

    def _damaged(self, path: str) -> None:
        if path not in self.damaged:
            self.damaged.add(path)
            if self.on_damage is not None:
                self.on_damage(path)

    def edges(self) -> list[tuple[str, str, str]]:
        """Every graph edge ``(src, dst, kind)``, sorted."""
        ids = self._paths_by_id()
        rows = self.conn.execute("SELECT DISTINCT src_id, dst_id, kind FROM edges")
        return sorted((ids[s], ids[d], k) for s, d, k in rows if s in ids and d in ids)

    def edges_touching(self, paths: Iterable[str]) -> list[tuple[str, str, str]]:
        """The graph edges with an end in ``paths``, sorted: the few a ranking follows from
        its strongest files, looked up by either end rather than the whole graph read."""
        ids = self._paths_by_id()
        number = self._numbers_by_path()
        wanted = sorted(number[p] for p in set(paths) if p in number)
        found: set[tuple[int, int, str]] = set()
        for column in ("src_id", "dst_id"):
            found.update(
                self._rows_in(
                    f"SELECT src_id, dst_id, kind FROM edges WHERE {column} IN ({{}})", wanted
                )
            )
        return sorted((ids[s], ids[d], k) for s, d, k in found if s in ids and d in ids)

    def history(self, terms: Sequence[str], limit: int) -> list[PastCommit]:
        """Past commits whose messages hold any term, best first (BM25), with the indexed
        files each changed; none without a history."""
        if not terms or limit <= 0:
            return []
        weights = ", ".join(str(w) for w in MESSAGE_WEIGHTS)
        rows = self.conn.execute(
            f"SELECT t.rowid, bm25(history_text, {weights}) AS s, t.subject, t.body, c.sha,"
            " c.time, c.changed FROM history_text t JOIN history_commits c ON c.id = t.rowid"
            " WHERE history_text MATCH ? ORDER BY s LIMIT ?",
            (" OR ".join(_quote(t) for t in terms), limit * 2),
        ).fetchall()
        wanted = set(terms)
        indexed = self.files()
        paths: dict[int, list[str]] = {}
        marks = ",".join("?" * len(rows))
        for commit_id, path in self.conn.execute(
            f"SELECT commit_id, path FROM history_files WHERE commit_id IN ({marks})"
            " ORDER BY commit_id, path",
            [r[0] for r in rows],
        ):
            if path in indexed:
                paths.setdefault(commit_id, []).append(str(path))
        hits = [
            PastCommit(
                sha=str(sha), time=int(when), score=-round(score, 9), changed=int(changed),
                files=tuple(paths.get(commit_id, ())),
                matched=tuple(sorted(wanted & set(f"{subject} {body}".split()))),
            )
            for commit_id, score, subject, body, sha, when, changed in rows
        ]  # fmt: skip
        # ties break by commit id, not by row id (which depends on what was stored before)
        return sorted(hits, key=lambda h: (-h.score, h.sha))[:limit]


class ReplayMiss(UsageError):
    """A replayed view was asked what its recording never answered."""


def _symbol_key(s: SymbolSpan) -> tuple[str, int, int, str]:
    return (s.path, s.start_line, s.end_line, s.qualname)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryView:
    """``IndexView`` from values. Lexical answers are given per query (``(terms, limit,
    field weights)``), as BM25 is the index's to compute; with ``strict``, a query, term or
    name never given is a ``ReplayMiss`` rather than an empty answer."""

    file_infos: Mapping[str, FileInfo]
    symbols: Sequence[SymbolSpan] = ()
    edge_list: Sequence[Edge] = ()
    omitted_paths: Sequence[tuple[str, str]] = ()
    lexical_answers: Mapping[LexicalKey, Sequence[tuple[str, float]]] = field(default_factory=dict)
    frequencies: Mapping[str, int] = field(default_factory=dict)
    named: frozenset[str] | None = None  # names whose definitions are all in ``symbols``
    covered: frozenset[str] | None = None  # paths whose definitions are all in ``symbols``
    # history answers per query (``(terms, limit)``); None: recorded without a history, so
    # every query has none
    history_answers: Mapping[HistoryKey, Sequence[PastCommit]] | None = None
    strict: bool = False
    # with ``strict``: when a set, the definitions of files never recorded are none (the
    # paths are added to it) instead of a ``ReplayMiss``
    unrecorded: set[str] | None = None

    def __post_init__(self) -> None:
        # the file table and the graph are asked for several times per ranking: hold them in
        # the form they are answered in (as ``StoreView`` holds its file table), not per call
        object.__setattr__(self, "file_infos", dict(self.file_infos))
        object.__setattr__(self, "edge_list", tuple(sorted(self.edge_list)))

    def files(self) -> dict[str, FileInfo]:
        return self.file_infos  # type: ignore[return-value]  # a dict since __post_init__

    def omitted(self) -> list[tuple[str, str]]:
        return list(self.omitted_paths)

    def lexical(
        self,
        terms: Sequence[str],
        limit: int,
        field_weights: tuple[float, float, float] = FIELD_WEIGHTS,
    ) -> list[tuple[str, float]]:
        if not terms:
            return []
        key = (tuple(terms), limit, field_weights)
        if key in self.lexical_answers:
            return list(self.lexical_answers[key])
        if self.strict:
            raise ReplayMiss(f"no recorded lexical answer for {len(terms)} term(s), limit {limit}")
        return []

    def document_frequencies(self, terms: Iterable[str]) -> dict[str, int]:
        out = {}
        for term in sorted(set(terms)):
            if term not in self.frequencies and self.strict:
                raise ReplayMiss(f"no recorded document frequency for {term!r}")
            out[term] = self.frequencies.get(term, 0)
        return out

    def symbols_named(self, names: Iterable[str]) -> list[SymbolSpan]:
        wanted = set(names)
        if self.strict and self.named is not None and not wanted <= self.named:
            raise ReplayMiss("no recorded definitions for some names")
        return sorted((s for s in self.symbols if s.name in wanted), key=_symbol_key)

    def symbols_in(self, paths: Iterable[str]) -> list[SymbolSpan]:
        wanted = set(paths) & set(self.file_infos)
        if self.strict and self.covered is not None and not wanted <= self.covered:
            missing = sorted(wanted - self.covered)
            if self.unrecorded is None:
                raise ReplayMiss(
                    f"no recorded definitions of {len(missing)} file(s): {missing[0]}, …"
                )
            self.unrecorded.update(missing)
            wanted &= self.covered
        return sorted((s for s in self.symbols if s.path in wanted), key=_symbol_key)

    def edges(self) -> list[Edge]:
        return list(self.edge_list)

    def edges_touching(self, paths: Iterable[str]) -> list[Edge]:
        return touching(self.edge_list, paths)

    def history(self, terms: Sequence[str], limit: int) -> list[PastCommit]:
        if not terms or limit <= 0 or self.history_answers is None:
            return []
        key = (tuple(terms), limit)
        if key in self.history_answers:
            return list(self.history_answers[key])
        if self.strict:
            raise ReplayMiss(f"no recorded history answer for {len(terms)} term(s)")
        return []


@dataclass(slots=True)
class RecordingView:
    """An ``IndexView`` that answers from ``inner`` and keeps every answer."""

    inner: IndexView
    lexical_answers: dict[LexicalKey, list[tuple[str, float]]] = field(default_factory=dict)
    frequencies: dict[str, int] = field(default_factory=dict)
    symbols: dict[tuple[str, int, int, str], SymbolSpan] = field(default_factory=dict)
    named: set[str] = field(default_factory=set)
    covered: set[str] = field(default_factory=set)
    history_answers: dict[HistoryKey, list[PastCommit]] = field(default_factory=dict)

    def files(self) -> dict[str, FileInfo]:
        return self.inner.files()

    def omitted(self) -> list[tuple[str, str]]:
        return self.inner.omitted()

    def lexical(
        self,
        terms: Sequence[str],
        limit: int,
        field_weights: tuple[float, float, float] = FIELD_WEIGHTS,
    ) -> list[tuple[str, float]]:
        hits = self.inner.lexical(terms, limit, field_weights)
        if terms:
            self.lexical_answers[(tuple(terms), limit, field_weights)] = list(hits)
        return hits

    def document_frequencies(self, terms: Iterable[str]) -> dict[str, int]:
        out = self.inner.document_frequencies(terms)
        self.frequencies.update(out)
        return out

    def symbols_named(self, names: Iterable[str]) -> list[SymbolSpan]:
        wanted = set(names)
        found = self.inner.symbols_named(wanted)
        self.named |= wanted
        self.symbols.update((_symbol_key(s), s) for s in found)
        return found

    def symbols_in(self, paths: Iterable[str]) -> list[SymbolSpan]:
        wanted = set(paths)
        found = self.inner.symbols_in(wanted)
        self.covered |= wanted & set(self.inner.files())
        self.symbols.update((_symbol_key(s), s) for s in found)
        return found

    def edges(self) -> list[Edge]:
        return self.inner.edges()

    def edges_touching(self, paths: Iterable[str]) -> list[Edge]:
        return self.inner.edges_touching(paths)  # the replay holds the whole graph

    def history(self, terms: Sequence[str], limit: int) -> list[PastCommit]:
        hits = self.inner.history(terms, limit)
        if terms and limit > 0:
            self.history_answers[(tuple(terms), limit)] = list(hits)
        return hits

    def replay(self) -> MemoryView:
        """A strict view giving exactly the answers recorded so far (and the whole file
        table, omissions and graph)."""
        return MemoryView(
            file_infos=self.inner.files(),
            symbols=tuple(self.symbols.values()),
            edge_list=tuple(self.inner.edges()),
            omitted_paths=tuple(self.inner.omitted()),
            lexical_answers=dict(self.lexical_answers),
            frequencies=dict(self.frequencies),
            named=frozenset(self.named),
            covered=frozenset(self.covered),
            history_answers=dict(self.history_answers),
            strict=True,
        )


def touching(edges: Iterable[Edge], paths: Iterable[str]) -> list[Edge]:
    """The edges of ``edges`` with an end in ``paths``, sorted."""
    wanted = set(paths)
    return sorted(e for e in edges if e[0] in wanted or e[1] in wanted)


def edges_near(view: IndexView, given: Sequence[Edge] | None, paths: Iterable[str]) -> list[Edge]:
    """The edges with an end in ``paths``: of the ``given`` graph (a caller's graph file),
    else of the index."""
    return view.edges_touching(paths) if given is None else touching(given, paths)


def view_to_dict(view: MemoryView) -> dict[str, Any]:
    """A replayable view as JSON values (paths by index in the file table, to stay small)."""
    paths = sorted(view.file_infos)
    number = {p: i for i, p in enumerate(paths)}
    infos = [view.file_infos[p] for p in paths]
    return {
        "files": [
            [
                f.path,
                f.size,
                f.sha256,
                f.language,
                f.encoding,
                f.lines,
                f.status,
                f.is_test,
                f.git_blob,
            ]
            for f in infos
        ],
        "symbols": [
            [number[s.path], s.kind, s.name, s.qualname, s.start_line, s.end_line]
            for s in sorted(view.symbols, key=_symbol_key)
        ],
        "edges": [[number[a], number[b], kind] for a, b, kind in sorted(view.edge_list)],
        "omitted": [list(o) for o in view.omitted_paths],
        "lexical": [
            [list(terms), limit, list(weights), [[number[p], s] for p, s in hits]]
            for (terms, limit, weights), hits in sorted(view.lexical_answers.items())
        ],
        "frequencies": dict(sorted(view.frequencies.items())),
        "named": sorted(view.named or ()),
        "covered": sorted(number[p] for p in view.covered or ()),
        "history": None
        if view.history_answers is None
        else [
            [list(terms), limit, [_commit_doc(c, number) for c in hits]]
            for (terms, limit), hits in sorted(view.history_answers.items())
        ],
    }


def _commit_doc(c: PastCommit, number: Mapping[str, int]) -> list[Any]:
    return [c.sha, c.time, c.score, [number[p] for p in c.files], c.changed, list(c.matched)]


def _commit_of(doc: Sequence[Any], paths: Sequence[str]) -> PastCommit:
    sha, when, score, files, changed, matched = doc
    return PastCommit(
        sha=str(sha), time=int(when), score=float(score), changed=int(changed),
        files=tuple(paths[i] for i in files), matched=tuple(map(str, matched)),
    )  # fmt: skip


def view_from_dict(doc: Mapping[str, Any]) -> MemoryView:
    """The strict ``MemoryView`` of ``view_to_dict``'s document.

    Raises:
        UsageError: the document is not one (a key missing or of the wrong shape).
    """
    try:
        infos = [
            FileInfo(path=f[0], size=f[1], sha256=f[2], language=f[3], encoding=f[4], lines=f[5],
                     status=f[6], is_test=bool(f[7]), git_blob=f[8])
            for f in doc["files"]
        ]  # fmt: skip
        paths = [f.path for f in infos]
        return MemoryView(
            file_infos={f.path: f for f in infos},
            symbols=tuple(
                SymbolSpan(
                    path=paths[s[0]],
                    kind=s[1],
                    name=s[2],
                    qualname=s[3],
                    start_line=s[4],
                    end_line=s[5],
                )
                for s in doc["symbols"]
            ),
            edge_list=tuple((paths[a], paths[b], kind) for a, b, kind in doc["edges"]),
            omitted_paths=tuple((str(p), str(r)) for p, r in doc["omitted"]),
            lexical_answers={
                (tuple(terms), int(limit), (float(w[0]), float(w[1]), float(w[2]))): [
                    (paths[i], float(score)) for i, score in hits
                ]
                for terms, limit, w, hits in doc["lexical"]
            },
            frequencies={str(t): int(n) for t, n in doc["frequencies"].items()},
            named=frozenset(doc["named"]),
            covered=frozenset(paths[i] for i in doc["covered"]),
            # a recording from before history was recorded answers no history query
            history_answers=None
            if doc.get("history") is None
            else {
                (tuple(terms), int(limit)): [_commit_of(c, paths) for c in hits]
                for terms, limit, hits in doc["history"]
            },
            strict=True,
        )
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise UsageError(f"not a recorded index view ({type(exc).__name__})") from None
