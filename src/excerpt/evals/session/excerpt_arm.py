"""The excerpt arms: a session that starts from ``context_pack`` as a client calls it.

In order, while gold lines are missing: the pack at the client's default budget; the next
regions the pack's text offers (their handles, through ``context_retrieve``, as many as one
result holds); a second pack that excludes every handle held; then the client's own tools
(``agents.explore``), with the files the packs served read first.

``Packs`` is the seam: ``LivePacks`` builds packs and retrievals exactly as the MCP tools do
(the same library calls, budget, framing and notes); a recording answers the same calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from excerpt.deliver import build_pack, render_retrieved
from excerpt.evals.session.ledger import Ledger, Shown
from excerpt.evals.session.workspace import Corpus
from excerpt.index.history import HistorySource
from excerpt.mcp.clients import ClientProfile, budget_note
from excerpt.pack import PackRequest
from excerpt.pipeline import get_excerpts

__all__ = ["LivePacks", "PackAnswer", "Packs", "RetrieveAnswer", "run_excerpt_arm"]

# what Codex writes before an MCP tool's text (its wall time, fixed here at a typical width)
CODEX_MCP_FRAMING = "Wall time: 0.1000 seconds\nOutput:\n"
RETRIEVE_TOOL = "`context_retrieve` and a handle"


@dataclass(frozen=True, slots=True, kw_only=True)
class Region:
    handle: str
    path: str
    start_line: int
    end_line: int

    def to_dict(self) -> dict[str, Any]:
        return {"handle": self.handle, "path": self.path, "start_line": self.start_line,
                "end_line": self.end_line}  # fmt: skip

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Region:
        return cls(handle=str(doc["handle"]), path=str(doc["path"]),
                   start_line=int(doc["start_line"]), end_line=int(doc["end_line"]))  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class PackAnswer:
    """A ``context_pack`` result: its text, the excerpts it served (in rank order) and the
    next regions its text offers."""

    text: str
    served: tuple[Region, ...]
    offered: tuple[Region, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "served": [r.to_dict() for r in self.served],
                "offered": [r.to_dict() for r in self.offered]}  # fmt: skip

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> PackAnswer:
        return cls(text=str(doc["text"]),
                   served=tuple(Region.from_dict(r) for r in doc["served"]),
                   offered=tuple(Region.from_dict(r) for r in doc["offered"]))  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class RetrieveAnswer:
    text: str
    served: tuple[Region, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "served": [r.to_dict() for r in self.served]}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> RetrieveAnswer:
        return cls(text=str(doc["text"]),
                   served=tuple(Region.from_dict(r) for r in doc["served"]))  # fmt: skip


class Packs(Protocol):
    def pack(
        self, profile: ClientProfile, *, fill: bool, exclude: tuple[str, ...]
    ) -> PackAnswer: ...

    def retrieve(self, profile: ClientProfile, handles: tuple[str, ...]) -> RetrieveAnswer: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class LivePacks:
    """Packs of one task on one indexed tree, built as ``context_pack`` builds them."""

    root: Path
    task: str
    cache_dir: Path
    history: HistorySource | None = None

    def pack(self, profile: ClientProfile, *, fill: bool, exclude: tuple[str, ...]) -> PackAnswer:
        size = profile.default_budget
        request = PackRequest(
            repo=self.root, task=self.task, budget=size, cache_dir=self.cache_dir, fill=fill,
            held=exclude, history=self.history,
        )  # fmt: skip
        notes = [n for n in (budget_note(profile, size),) if n]
        done = build_pack(
            request, retrieve=RETRIEVE_TOOL, notes=notes, limit=size - profile.framing
        )
        served = tuple(
            Region(handle=i.handle, path=i.path, start_line=i.start_line, end_line=i.end_line)
            for i in done.pack.items
        )
        offered = tuple(
            Region(handle=o.handle, path=o.path, start_line=o.start_line, end_line=o.end_line)
            for o in done.pack.omitted
            if o.handle and o.start_line and o.end_line and f"`{o.handle}`" in done.text
        )
        return PackAnswer(text=done.text, served=served, offered=offered)

    def retrieve(self, profile: ClientProfile, handles: tuple[str, ...]) -> RetrieveAnswer:
        results = [r.to_dict() for r in get_excerpts(self.root, handles, cache_dir=self.cache_dir)]
        text = render_retrieved(results, profile.default_budget - profile.framing)
        served = tuple(
            Region(handle=r["handle"], path=r["path"], start_line=r["start_line"],
                   end_line=r["end_line"])
            for r in results
            if r["status"] == "fresh" and f"## `{r['handle']}` (fresh)\n" in text
        )  # fmt: skip
        return RetrieveAnswer(text=text, served=served)


def _framed(profile: ClientProfile, text: str) -> str:
    return (CODEX_MCP_FRAMING if profile.framing else "") + text


def _shown(corpus: Corpus, regions: Sequence[Region]) -> Shown:
    """The file lines a result shows: its regions' lines, each with its bytes."""
    out: list[tuple[str, int, int]] = []
    for r in regions:
        if r.path not in corpus:
            continue
        last = min(r.end_line, len(corpus.lines(r.path)))
        out += [(r.path, n, corpus.line_bytes(r.path, n)) for n in range(r.start_line, last + 1)]
    return out


def run_excerpt_arm(
    packs: Packs,
    profile: ClientProfile,
    corpus: Corpus,
    ledger: Ledger,
    *,
    task: str,
    fill: bool,
    tool_prefix: str,
) -> list[str]:
    """The excerpt steps of a session; returns the files the packs served, in rank order,
    for the client's own tools to read first. ``Stop`` propagates."""
    held: list[str] = []
    files: list[str] = []

    def note(regions: Sequence[Region]) -> None:
        for r in regions:
            held.append(r.handle)
            if r.path not in files:
                files.append(r.path)

    first = packs.pack(profile, fill=fill, exclude=())
    args: dict[str, Any] = {"task": task} if fill else {"task": task, "stop_short": True}
    note(first.served)
    ledger.charge(f"{tool_prefix}context_pack", args, _framed(profile, first.text),
                  _shown(corpus, first.served))  # fmt: skip
    offered = tuple(r.handle for r in first.offered)
    if offered:
        got = packs.retrieve(profile, offered)
        note(got.served)
        ledger.charge(f"{tool_prefix}context_retrieve", {"handles": list(offered)},
                      _framed(profile, got.text), _shown(corpus, got.served))  # fmt: skip
    exclude = tuple(held)
    second = packs.pack(profile, fill=fill, exclude=exclude)
    note(second.served)
    ledger.charge(f"{tool_prefix}context_pack", {**args, "exclude": list(exclude)},
                  _framed(profile, second.text), _shown(corpus, second.served))  # fmt: skip
    return files
