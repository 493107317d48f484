"""Runs of error-bearing items folded into one marker each, the marker naming every distinct
error message once, as its raw JSON ``"key": value``, followed by the items that have it
(``a > b`` for one nested in another). A message the view already shows verbatim outside the
container (a summary list of the same problems) is counted and pointed to, not repeated."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from excerpt.compact.jsonerrors import (
    Finding,
    Scan,
    error_named,
    findings,
    format_id,
    identifier,
    writable,
)
from excerpt.compact.jsonscan import Node, step_of
from excerpt.compact.view import Elision

__all__ = ["ErrorRun", "error_elisions"]

# a marker's own cost besides its detail and its path (written twice): the counts, the words,
# the expand call
_MARKER_COST = 80

# where a string token sits: (the link of its container, the container, its index in it)
Link = tuple["Link | None", Node, int]


@dataclass(slots=True, kw_only=True)
class ErrorRun:
    """Members ``first`` to ``stop - 1`` of the container at ``path``, each with its name
    and its error fields."""

    node: Node
    path: str
    first: int
    stop: int
    items: list[tuple[str, list[Finding]]] = field(default_factory=list)

    @classmethod
    def of(cls, scan: Scan, node: Node, path: str, kept: set[int], errors: bool) -> list[ErrorRun]:
        """The runs of members not ``kept``, each member with its error fields (with
        ``errors`` the container is a list of errors: every string in it is one)."""
        out: list[ErrorRun] = []
        for i, (key, _, item) in enumerate(node.members):
            if i in kept:
                continue
            if not out or out[-1].stop != i:
                out.append(cls(node=node, path=path, first=i, stop=i))
            name = format_id(scan.name(key)) if key is not None else identifier(scan, item)
            out[-1].items.append((name or f"[{i}]", list(findings(scan, item, an_error=errors))))
            out[-1].stop = i + 1
        return out

    @property
    def start(self) -> int:
        return self.node.members[self.first][1]

    @property
    def end(self) -> int:
        return self.node.members[self.stop - 1][2].end

    def worth_it(self) -> bool:
        """Is the marker (with every message written, none pointed to) shorter than what it
        replaces?"""
        detail = self.elision(lambda raw: None).detail
        cost = len(detail.encode("utf-8", "surrogateescape")) + 2 * len(self.path) + 20
        return cost + _MARKER_COST < self.end - self.start

    def elision(self, cite: Callable[[str], str | None]) -> Elision:
        """The run's elision; ``cite`` gives where the view already shows a string token
        outside the container, or None."""
        errors = sum(1 for _, fields in self.items if fields)
        count = self.stop - self.first
        noun = "items" if self.node.kind == "array" else "members"
        detail = "; ".join(self._entries(cite))
        return Elision(
            start=self.start, end=self.end, count=count,
            what=f"{noun} with errors" if errors == count else noun,
            path=f"{self.path}[{self.first}:{self.stop}]",
            detail=detail if errors == count else f"{errors} with errors: {detail}",
        )  # fmt: skip

    def _entries(self, cite: Callable[[str], str | None]) -> list[str]:
        """Each distinct message with the items that have it; the messages shown elsewhere,
        counted by key and place; the stack traces, counted; the items none of whose errors
        could be written."""
        written: dict[str, dict[str, None]] = {}  # message → the names having it, in order
        pointed: dict[tuple[str, str], set[str]] = {}
        traces: Counter[str] = Counter()
        unsaid: list[str] = []
        for name, fields in self.items:
            # a bad status says little beside a message: it is written when there is none
            said = "message" if any(f.kind == "message" for f in fields) else "status"
            traces.update(str(writable(f.key)) for f in fields if f.kind == "trace")
            for f in (f for f in fields if f.kind == said):
                key = str(writable(f.key))
                where = cite(f.value) if _citable(f) else None
                if where is not None:
                    pointed.setdefault((key, where), set()).add(f.value)
                    continue
                value = str(writable(f.value))
                text = f"{key}: [{value}]" if f.listed else f"{key}: {value}"
                written.setdefault(text, {})[" > ".join((name, *f.where))] = None
            if fields and not any(f.kind == said for f in fields):
                unsaid.append(name)
        everyone = {name for name, fields in self.items if fields}
        return [
            *(f"{text} ({_names(list(names), everyone)})" for text, names in written.items()),
            *(f"{len(values)} {key} {_plural(len(values), 'entry', 'entries')} as in {where}"
              for (key, where), values in pointed.items()),
            *(f"{n} {key} {_plural(n, 'value', 'values')} not shown"
              for key, n in traces.items()),
            *([f"errors of {', '.join(unsaid)} not shown"] if unsaid else []),
        ]  # fmt: skip


def _names(names: list[str], everyone: set[str]) -> str:
    """The items having a message, or "all N" when every item of the run with an error
    has it (and more than one does)."""
    if len(names) > 1 and set(names) == everyone:
        return f"all {len(names)}"
    return ", ".join(names)


def _citable(f: Finding) -> bool:
    return f.kind == "message" and f.value.startswith('"') and len(f.value) > 2


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def error_elisions(
    scan: Scan, root: Node, runs: list[ErrorRun], others: list[Elision]
) -> list[Elision]:
    """The runs' elisions, each pointing to where the view (the document without ``others``
    and the runs) already shows a message as an error outside the run's container."""
    if not runs:
        return []
    wanted = {f.value for run in runs for _, fields in run.items for f in fields if _citable(f)}
    spans = sorted([(e.start, e.end) for e in others] + [(r.start, r.end) for r in runs])
    shown = _shown(scan, root, spans, wanted)

    def cite(run: ErrorRun) -> Callable[[str], str | None]:
        def where(raw: str) -> str | None:
            for at, link in shown.get(raw, ()):
                if not run.node.start <= at < run.node.end:
                    return _holder(link)
            return None

        return where

    return [run.elision(cite(run)) for run in runs]


def _shown(
    scan: Scan, root: Node, spans: list[tuple[int, int]], wanted: set[str]
) -> dict[str, list[tuple[int, Link]]]:
    """Where each wanted string token stands in the view as an error (under an error-named
    key), outside every elided span, in document order."""
    starts = [a for a, _ in spans]
    out: dict[str, list[tuple[int, Link]]] = {}
    stack: list[tuple[Node, Link | None, bool]] = [(root, None, False)]
    while stack:
        node, link, in_error = stack.pop()
        for i, (key, at, child) in enumerate(node.members):
            k = bisect.bisect_right(starts, at) - 1
            if k >= 0 and at < spans[k][1]:
                continue
            here: Link = (link, node, i)
            as_error = in_error or (key is not None and error_named(scan.name(key)))
            if child.kind == "string":
                raw = scan.raw(child)
                if as_error and raw in wanted:
                    out.setdefault(raw, []).append((child.start, here))
            elif child.kind in ("object", "array"):
                stack.append((child, here, as_error))
    for places in out.values():
        places.sort(key=lambda p: p[0])
    return out


def _holder(link: Link) -> str:
    """The path of what holds a token: its array, or its member of an object."""
    parent, node, index = link
    if node.kind == "array":
        return _path(parent)
    return _path(parent) + step_of(node, index)


def _path(link: Link | None) -> str:
    steps = []
    while link is not None:
        parent, node, index = link
        steps.append(step_of(node, index))
        link = parent
    return "$" + "".join(reversed(steps))
