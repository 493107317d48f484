"""The excerpt arms: a session that starts from ``context_pack`` as a client calls it.

In order, while gold lines are missing: the pack at the client's default budget; the next
regions the pack's text offers (their handles, through ``context_retrieve``, as many as one
result holds); a second pack that excludes every handle held; then the client's own tools
(``agents.explore``), with the files the packs served read first.

An arm with the prompt hook as well (``hooks_arm``) starts from its seed: the pack steps
then exclude every handle the seed served.

``Packs`` is the seam: ``LivePacks`` builds packs and retrievals exactly as the MCP tools do
(the same library calls, budget, framing and notes) and seeds as the prompt hook does
(``excerpt.hooks.seed.build_seed``); a recording answers the same calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from excerpt.tooling import (
    MAX_PROMPT,
    ClientProfile,
    HistorySource,
    PackRequest,
    Shape,
    budget_note,
    build_pack,
    build_seed,
    classify_prompt,
    escape_controls,
    get_excerpts,
    history_disabled,
    parse_handle,
    render_retrieved,
    seed_limits,
)
from excerpt_bench.session.ledger import Ledger, Shown
from excerpt_bench.session.workspace import Corpus

__all__ = [
    "LivePacks",
    "PackAnswer",
    "Packs",
    "RetrieveAnswer",
    "SeedAnswer",
    "run_excerpt_arm",
    "shown_lines",
]

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


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedAnswer:
    """What the prompt hook injects: its text ("" for none), its shape, and the regions its
    handles name in the order the text gives them (a pack's source, a map's pointers)."""

    text: str
    shape: Literal["pack", "map", "none"]
    regions: tuple[Region, ...]
    confidence: float
    why: str

    def __post_init__(self) -> None:
        if (self.shape == "none") != (not self.text):
            raise ValueError("a seed has text exactly when it has a shape")

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "shape": self.shape,
                "regions": [r.to_dict() for r in self.regions],
                "confidence": self.confidence, "why": self.why}  # fmt: skip

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> SeedAnswer:
        shape = str(doc["shape"])
        if shape not in ("pack", "map", "none"):
            raise ValueError(f"a seed's shape is pack, map or none, not {shape!r}")
        return cls(text=str(doc["text"]), shape=shape,  # type: ignore[arg-type]
                   regions=tuple(Region.from_dict(r) for r in doc["regions"]),
                   confidence=float(doc["confidence"]), why=str(doc["why"]))  # fmt: skip


class Packs(Protocol):
    def pack(
        self, profile: ClientProfile, *, fill: bool, exclude: tuple[str, ...]
    ) -> PackAnswer: ...

    def retrieve(self, profile: ClientProfile, handles: tuple[str, ...]) -> RetrieveAnswer: ...

    def seed(self, client: str, *, shape: Shape, max_tokens: int) -> SeedAnswer: ...


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

    def seed(self, client: str, *, shape: Shape, max_tokens: int) -> SeedAnswer:
        """The hook's seed for the task as a fresh session's first prompt in ``client``
        (nothing held), within the client's own limit on a context text as the hook keeps
        it: none for a prompt that does not read as a task, as the hook decides."""
        prompt = self.task[:MAX_PROMPT]
        kind = classify_prompt(prompt)
        if not kind.task:
            return SeedAnswer(text="", shape="none", regions=(), confidence=0.0,
                              why=f"not a task prompt ({kind.why})")  # fmt: skip
        tokens, chars = seed_limits(client, max_tokens)
        # build_seed reads the history of the git repository around its root; an exported
        # tree has none, and the refresh would drop the index's stored history (the task's
        # git directory's) for the packs that follow. So the seed ranks without history
        # here; a hook in a work tree ranks with it.
        with history_disabled(self.history is not None):
            got = build_seed(
                self.root, prompt, max_tokens=tokens, max_chars=chars, shape=shape,
                cache_dir=self.cache_dir,
            )  # fmt: skip
        return SeedAnswer(text=got.text, shape=got.shape, regions=_regions(got.text, got.handles),
                          confidence=got.confidence, why=got.why)  # fmt: skip


def _regions(text: str, handles: Sequence[str]) -> tuple[Region, ...]:
    """The regions ``handles`` name, in the order ``text`` shows them."""
    placed = sorted(handles, key=lambda h: (text.find(escape_controls(h)), h))
    out = []
    for handle in placed:
        parsed = parse_handle(handle)
        out.append(Region(handle=handle, path=parsed.path, start_line=parsed.start_line,
                          end_line=parsed.end_line))  # fmt: skip
    return tuple(out)


def _framed(profile: ClientProfile, text: str) -> str:
    return (CODEX_MCP_FRAMING if profile.framing else "") + text


def shown_lines(corpus: Corpus, regions: Sequence[Region]) -> Shown:
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
    seed: SeedAnswer | None = None,
) -> list[str]:
    """The excerpt steps of a session; returns the files the seed and the packs served, in
    rank order, for the client's own tools to read first. A map seed's regions are first
    retrieved, as the map says to. ``Stop`` propagates."""
    held: list[str] = []
    files: list[str] = []

    def note(regions: Sequence[Region]) -> None:
        for r in regions:
            held.append(r.handle)
            if r.path not in files:
                files.append(r.path)

    if seed is not None and seed.shape == "pack":
        note(seed.regions)
    elif seed is not None and seed.shape == "map":
        pointed = tuple(r.handle for r in seed.regions)
        got = packs.retrieve(profile, pointed)
        note(got.served)
        ledger.charge(f"{tool_prefix}context_retrieve", {"handles": list(pointed)},
                      _framed(profile, got.text), shown_lines(corpus, got.served))  # fmt: skip
    args: dict[str, Any] = {"task": task} if fill else {"task": task, "stop_short": True}
    exclude = tuple(held)
    first = packs.pack(profile, fill=fill, exclude=exclude)
    note(first.served)
    first_args = {**args, "exclude": list(exclude)} if exclude else args
    ledger.charge(f"{tool_prefix}context_pack", first_args, _framed(profile, first.text),
                  shown_lines(corpus, first.served))  # fmt: skip
    offered = tuple(r.handle for r in first.offered)
    if offered:
        got = packs.retrieve(profile, offered)
        note(got.served)
        ledger.charge(f"{tool_prefix}context_retrieve", {"handles": list(offered)},
                      _framed(profile, got.text), shown_lines(corpus, got.served))  # fmt: skip
    exclude = tuple(held)
    second = packs.pack(profile, fill=fill, exclude=exclude)
    note(second.served)
    ledger.charge(f"{tool_prefix}context_pack", {**args, "exclude": list(exclude)},
                  _framed(profile, second.text), shown_lines(corpus, second.served))  # fmt: skip
    return files
