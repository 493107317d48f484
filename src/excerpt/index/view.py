"""Read-only queries over an index, for ranking and packing. No writes, no file reads."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["FileInfo", "IndexView", "SymbolSpan"]

# Lexical field weights for BM25 (path, symbol names, body): a term in a file's path or in
# the names it defines says more about the file than one in its body.
FIELD_WEIGHTS = (4.0, 3.0, 1.0)
_CHUNK = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class FileInfo:
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


class IndexView:
    """Queries the ranker and packer need, over one open index connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._files: dict[str, FileInfo] | None = None
        self._ids: dict[int, str] | None = None

    def files(self) -> dict[str, FileInfo]:
        """Every file the index holds (indexed or omitted by status), by path."""
        if self._files is None:
            rows = self.conn.execute(
                "SELECT id, path, size, sha256, language, encoding, lines, status, is_test,"
                " git_blob FROM files"
            ).fetchall()
            self._ids = {r[0]: r[1] for r in rows}
            self._files = {
                r[1]: FileInfo(
                    path=r[1],
                    size=r[2],
                    sha256=r[3],
                    language=r[4],
                    encoding=r[5],
                    lines=r[6],
                    status=r[7],
                    is_test=bool(r[8]),
                    git_blob=r[9],
                )
                for r in rows
            }
        return self._files

    def _paths_by_id(self) -> dict[int, str]:
        self.files()
        assert self._ids is not None
        return self._ids

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
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for term, docs in self.conn.execute(
                f"SELECT term, doc FROM temp.lexicon_vocab WHERE term IN ({marks})", chunk
            ):
                out[term] = int(docs)
        return out

    def symbols_named(self, names: Iterable[str]) -> list[SymbolSpan]:
        """Definitions whose name is one of ``names`` (exact, case-sensitive)."""
        return self._symbols("name", sorted(set(names)))

    def symbols_in(self, paths: Iterable[str]) -> list[SymbolSpan]:
        """Every definition in the given files."""
        ids = {p: i for i, p in self._paths_by_id().items()}
        wanted = sorted(ids[p] for p in set(paths) if p in ids)
        return self._symbols("file_id", wanted)

    def _symbols(self, column: str, values: Sequence[object]) -> list[SymbolSpan]:
        ids = self._paths_by_id()
        out: list[SymbolSpan] = []
        for i in range(0, len(values), _CHUNK):
            chunk = values[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for file_id, kind, name, qualname, start, end in self.conn.execute(
                "SELECT file_id, kind, name, qualname, start_line, end_line FROM symbols"
                f" WHERE {column} IN ({marks})",
                chunk,
            ):
                out.append(
                    SymbolSpan(
                        path=ids[file_id],
                        kind=kind,
                        name=name,
                        qualname=qualname,
                        start_line=start,
                        end_line=end,
                    )
                )
        return sorted(out, key=lambda s: (s.path, s.start_line, s.end_line, s.qualname))

    def edges(self) -> list[tuple[str, str, str]]:
        """Every graph edge ``(src, dst, kind)``, sorted."""
        ids = self._paths_by_id()
        rows = self.conn.execute("SELECT DISTINCT src_id, dst_id, kind FROM edges")
        return sorted((ids[s], ids[d], k) for s, d, k in rows if s in ids and d in ids)
