"""``RecordingView``: a view that keeps every answer another gave, so that a ``MemoryView``
can give them again; and a replayable view as JSON values and back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from excerpt.errors import UsageError
from excerpt.index.history import PastCommit
from excerpt.index.view.memory import MemoryView, symbol_key
from excerpt.index.view.protocol import (
    FIELD_WEIGHTS,
    FileInfo,
    HistoryKey,
    ImportEdge,
    IndexView,
    LexicalKey,
    SymbolSpan,
)

__all__ = ["RecordingView", "view_from_dict", "view_to_dict"]


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
        self.symbols.update((symbol_key(s), s) for s in found)
        return found

    def symbols_in(self, paths: Iterable[str]) -> list[SymbolSpan]:
        wanted = set(paths)
        found = self.inner.symbols_in(wanted)
        self.covered |= wanted & set(self.inner.files())
        self.symbols.update((symbol_key(s), s) for s in found)
        return found

    def edges(self) -> list[ImportEdge]:
        return self.inner.edges()

    def edges_touching(self, paths: Iterable[str]) -> list[ImportEdge]:
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
            for s in sorted(view.symbols, key=symbol_key)
        ],
        "edges": [[number[e.src], number[e.dst], e.kind] for e in view.edges()],
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
