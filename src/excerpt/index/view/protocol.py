"""The seam's own types: the ``IndexView`` protocol and the records it answers with (a file,
a definition, a graph edge), and the edges near some files of a graph."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from excerpt.index.history import PastCommit

__all__ = [
    "FIELD_WEIGHTS",
    "FileInfo",
    "HistoryKey",
    "ImportEdge",
    "IndexView",
    "LexicalKey",
    "SymbolSpan",
    "edges_near",
    "touching",
]

# Lexical field weights for BM25 (path, symbol names, body): a term in a file's path or in
# the names it defines says more about the file than one in its body.
FIELD_WEIGHTS = (4.0, 3.0, 1.0)


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


class ImportEdge(NamedTuple):
    """An edge of the index's file graph: ``src`` imports ``dst`` (``kind`` "imports"), or
    tests it ("tests"). Not ``excerpt.index.resolve.Edge``, which the index is built from
    and which says how the edge was found."""

    src: str
    dst: str
    kind: str


LexicalKey = tuple[tuple[str, ...], int, tuple[float, float, float]]
HistoryKey = tuple[tuple[str, ...], int]


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

    def edges(self) -> list[ImportEdge]:
        """Every graph edge, sorted."""
        ...

    def edges_touching(self, paths: Iterable[str]) -> list[ImportEdge]:
        """The graph edges with an end in ``paths``, sorted (those of ``edges()``)."""
        ...

    def history(self, terms: Sequence[str], limit: int) -> list[PastCommit]:
        """Past commits whose messages hold any term, best first (BM25), with the indexed
        files each changed; none without a history."""
        ...


def touching(edges: Iterable[tuple[str, str, str]], paths: Iterable[str]) -> list[ImportEdge]:
    """The edges of ``edges`` (``(src, dst, kind)``) with an end in ``paths``, sorted."""
    wanted = set(paths)
    return sorted(
        ImportEdge(src, dst, kind) for src, dst, kind in edges if src in wanted or dst in wanted
    )


def edges_near(
    view: IndexView, given: Sequence[tuple[str, str, str]] | None, paths: Iterable[str]
) -> list[ImportEdge]:
    """The edges with an end in ``paths``: of the ``given`` graph (a caller's graph file),
    else of the index."""
    return view.edges_touching(paths) if given is None else touching(given, paths)
