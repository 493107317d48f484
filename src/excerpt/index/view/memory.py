"""``MemoryView``: the ``IndexView`` of values in memory (tests, and a recorded benchmark
replayed without any index)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from excerpt.errors import UsageError
from excerpt.index.history import PastCommit
from excerpt.index.view.protocol import (
    FIELD_WEIGHTS,
    FileInfo,
    HistoryKey,
    ImportEdge,
    LexicalKey,
    SymbolSpan,
    touching,
)

__all__ = ["MemoryView", "ReplayMiss", "symbol_key"]


class ReplayMiss(UsageError):
    """A replayed view was asked what its recording never answered."""


def symbol_key(s: SymbolSpan) -> tuple[str, int, int, str]:
    """The order definitions are answered in (and a recording keeps them by)."""
    return (s.path, s.start_line, s.end_line, s.qualname)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryView:
    """``IndexView`` from values. Lexical answers are given per query (``(terms, limit,
    field weights)``), as BM25 is the index's to compute; with ``strict``, a query, term or
    name never given is a ``ReplayMiss`` rather than an empty answer."""

    file_infos: Mapping[str, FileInfo]
    symbols: Sequence[SymbolSpan] = ()
    # ``(src, dst, kind)`` each, held as sorted ``ImportEdge``s
    edge_list: Sequence[tuple[str, str, str]] = ()
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
        object.__setattr__(self, "edge_list", tuple(sorted(map(ImportEdge._make, self.edge_list))))

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
        return sorted((s for s in self.symbols if s.name in wanted), key=symbol_key)

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
        return sorted((s for s in self.symbols if s.path in wanted), key=symbol_key)

    def edges(self) -> list[ImportEdge]:
        return list(self.edge_list)  # type: ignore[arg-type]  # ImportEdges since __post_init__

    def edges_touching(self, paths: Iterable[str]) -> list[ImportEdge]:
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
