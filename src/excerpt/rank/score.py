"""Fuse the ranking signals (``excerpt.rank.signals``) into ranked candidates. Pure: no
I/O, and the one thing it remembers (a memo of the last file table's indexed files) changes
no answer.

The order is fixed here and nowhere else: the evidence signals (lexical, named paths,
frames, defined names, past commits, changed paths) add up; the import graph then lifts
neighbours of the strongest files; demotions scale what describes rather than makes the
product; with nothing found, the repository's overview is offered. Pins lift a file into a
tier that outranks any score. Order is deterministic: tier, score, then path.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from excerpt.core.memo import Memo, register
from excerpt.index.history import history_enabled
from excerpt.index.view import FileInfo, IndexView, edges_near
from excerpt.rank import signals
from excerpt.rank.history import history
from excerpt.rank.signals import Anchor, Contribution, Reason, Standing
from excerpt.rank.task import Task
from excerpt.rank.weights import Weights, default_weights

__all__ = ["SIGNALS", "Anchor", "RankedFile", "Reason", "rank_files"]

SIGNALS = (
    "lexical", "path", "scope", "component", "stack_frame", "defines", "history", "graph",
    "demoted",
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class RankedFile:
    path: str
    score: float
    tier: int
    reasons: tuple[Reason, ...]
    anchors: tuple[Anchor, ...]


@dataclass(slots=True)
class _Total:
    score: float = 0.0
    tier: int = 0
    reasons: list[Reason] = field(default_factory=list)
    anchors: list[Anchor] = field(default_factory=list)


def _add(totals: dict[str, _Total], contributions: Iterable[Contribution]) -> None:
    for c in contributions:
        total = totals[c.path]
        total.score += c.gain
        total.tier = max(total.tier, c.tier)
        if c.reason is not None and c.reason not in total.reasons:
            total.reasons.append(c.reason)
        if c.anchor is not None:
            total.anchors.append(c.anchor)


def _standing(totals: dict[str, _Total]) -> dict[str, Standing]:
    return {path: Standing(t.score, t.tier) for path, t in totals.items()}


@dataclass(frozen=True, slots=True)
class _Indexed:
    table: Mapping[str, FileInfo]  # held: no other table takes its id while it is kept
    files: dict[str, FileInfo]
    by_name: dict[str, list[str]]


# the indexed files of the last file table ranked over, and their paths by name, by the
# table's identity: a view of an unchanged index answers with the same table
# (``StoreView.files``), whose derived maps are then made once (100,000 files: 0.15 s a pack)
_last_indexed: Memo[int, _Indexed] = register(Memo("indexed_files", max_entries=1))


def _indexed(
    table: Mapping[str, FileInfo],
) -> tuple[dict[str, FileInfo], dict[str, list[str]]]:
    """The files of ``table`` that are indexed, and their paths by last component."""
    kept = _last_indexed.get(id(table))
    if kept is not None and kept.table is table:
        return kept.files, kept.by_name
    last = _last_indexed.newest()
    files = {p: f for p, f in table.items() if f.status is None}
    if last is not None and files.keys() == last.files.keys():
        by_name = last.by_name  # the same paths (files rewritten in place): the same names
    else:
        by_name = dict(signals.paths_by_name(files))
    _last_indexed.put(id(table), _Indexed(table, files, by_name))
    return files, by_name


def rank_files(
    task: Task,
    view: IndexView,
    *,
    changed: Sequence[str] = (),
    edges: Sequence[tuple[str, str, str]] | None = None,
    without: frozenset[str] = frozenset(),
    weights: Weights | None = None,
) -> list[RankedFile]:
    """Ranked candidate files for ``task``; ``edges`` replaces the index's graph if given.

    ``without`` names signals to leave out (``SIGNALS``), for ablation measurements;
    ``weights`` replaces the shipped ones.
    """
    w = weights or default_weights()
    files, by_name = _indexed(view.files())
    totals: dict[str, _Total] = defaultdict(_Total)
    if "lexical" not in without:
        _add(totals, signals.lexical(task, view, files, w))
    if "path" not in without:
        _add(totals, signals.named_paths(task, files, by_name, w))
    if "scope" not in without:
        _add(totals, signals.scope(task, files, w))
    if "component" not in without:
        _add(totals, signals.components(task, files, by_name, w))
    if "stack_frame" not in without:
        _add(totals, signals.frames(task, files, by_name, w))
    if "defines" not in without:
        _add(totals, signals.named_symbols(task, view, files, w))
    if "history" not in without and history_enabled():
        _add(totals, history(task, view, files, w))
    _add(totals, signals.changed(changed, files, w))
    if "graph" not in without:
        edges_of = functools.partial(edges_near, view, edges)
        _add(totals, signals.graph(edges_of, files, _standing(totals), w))
    if "demoted" not in without:
        for d in signals.demotions(task, files, _standing(totals), w):
            totals[d.path].score *= d.factor
            totals[d.path].reasons.append(d.reason)
    if not any(t.score > 0 or t.tier > 0 for t in totals.values()):
        _add(totals, signals.fallback(files, w))
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1].tier, -round(kv[1].score, 6), kv[0]))
    return [
        RankedFile(
            path=path,
            score=round(t.score, 4),
            tier=t.tier,
            reasons=tuple(t.reasons),
            anchors=tuple(sorted(set(t.anchors), key=lambda x: (x.start_line, x.end_line))),
        )
        for path, t in ranked[: w.candidates]
        if t.score > 0 or t.tier > 0
    ]
