"""The pack and plan records and their JSON wire forms (``excerpt.pack/v1``, ``excerpt.plan/v1``).

``pack_id`` is ``"sha256:" + hex(sha256(canonical))`` over every other field of the pack
(SPEC §3.1), so anyone can recompute it and equal packs have equal ids.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any, Literal, NotRequired, TypedDict, cast

from excerpt.core.hashing import canonical_json, sha256_hex
from excerpt.core.vocabulary import ItemKind, OmissionReason, Signal, members
from excerpt.rank.signals import Reason

__all__ = [
    "PACK_SCHEMA",
    "BudgetDict",
    "Item",
    "ItemDict",
    "Omitted",
    "OmittedDict",
    "Pack",
    "PackBodyDict",
    "PackDict",
    "Plan",
    "PlanDict",
    "PlanEntry",
    "PlanEntryDict",
    "ReasonDict",
    "Role",
    "pack_schema",
    "plan_schema",
]

PACK_SCHEMA = "excerpt.pack/v1"
PLAN_SCHEMA = "excerpt.plan/v1"
# A file the change likely touches, or one read beside it (its tests, callers, types).
Role = Literal["primary", "related"]
_ROLES = frozenset(members(Role))
_ITEM_KINDS = frozenset(members(ItemKind))
_OMISSION_REASONS = frozenset(members(OmissionReason))


# -- the wire shapes: what ``to_dict`` returns (``excerpt.pack/v1``, ``excerpt.plan/v1``) --


class ReasonDict(TypedDict):
    signal: Signal
    detail: str


class O200k(TypedDict):
    o200k: int


class ItemDict(TypedDict):
    rank: int
    path: str
    start_line: int
    end_line: int
    source_sha256: str
    excerpt_sha256: str
    bytes: int
    handle: str
    kind: ItemKind
    truncated: bool
    score: float
    reasons: list[ReasonDict]
    text: str
    role: Role
    confidence: float
    related_to: NotRequired[str]
    tokens: NotRequired[O200k]
    file_rank: NotRequired[int]


class OmittedDict(TypedDict):
    """Only ``path`` and ``reason`` for a sensitive path; the rest when known."""

    path: str
    reason: OmissionReason
    score: NotRequired[float]
    bytes_needed: NotRequired[int]
    start_line: NotRequired[int]
    end_line: NotRequired[int]
    duplicate_of: NotRequired[str]
    handle: NotRequired[str]
    confidence: NotRequired[float]
    related_to: NotRequired[str]


class StoppedShortDict(TypedDict):
    reason: Literal["low_confidence"]
    floor: float
    unused_bytes: int


class BudgetDict(TypedDict):
    bytes: int
    used_bytes: int
    rendered_bytes: NotRequired[int]
    tokens: NotRequired[O200k]
    stopped_short: NotRequired[StoppedShortDict]


class PackBodyDict(TypedDict):
    schema: Literal["excerpt.pack/v1"]
    task_sha256: str
    budget: BudgetDict
    items: list[ItemDict]
    omitted: list[OmittedDict]
    warnings: list[dict[str, Any]]
    graph: dict[str, Any] | None
    stats: dict[str, Any]
    already_held: NotRequired[list[str]]
    held_stale: NotRequired[list[str]]


class PackDict(PackBodyDict):
    pack_id: str


class PlanEntryDict(TypedDict):
    rank: int
    path: str
    start_line: int
    end_line: int
    score: float
    reasons: list[ReasonDict]
    bytes: int
    role: Role
    confidence: float
    related_to: NotRequired[str]


class PlanDict(TypedDict):
    schema: Literal["excerpt.plan/v1"]
    candidates: list[PlanEntryDict]
    suggested_budget: int
    omitted: list[OmittedDict]


def _wire(record: Any) -> dict[str, Any]:
    """A flat record's JSON form: its fields by name, reasons as ``{signal, detail}``, an
    unset ``related_to`` or ``file_rank`` left out."""
    return {
        f.name: [r.to_dict() for r in value] if f.name == "reasons" else value
        for f in fields(record)
        for value in (getattr(record, f.name),)
        if not (f.name in ("related_to", "file_rank") and value is None)
    }


def _check_role(role: str, confidence: float) -> None:
    if role not in _ROLES:
        raise ValueError(f"unknown role {role!r}")
    if not 0.0 <= confidence <= 1.0:
        raise ValueError("confidence must be in [0, 1]")


@dataclass(frozen=True, slots=True, kw_only=True)
class Item:
    rank: int
    path: str
    start_line: int
    end_line: int
    source_sha256: str
    excerpt_sha256: str
    bytes: int
    handle: str
    kind: ItemKind
    truncated: bool
    score: float
    reasons: tuple[Reason, ...]
    text: str
    role: Role = "related"
    confidence: float = 0.0  # that the change touches this file (calibrated, 0..1)
    related_to: str | None = None  # a related test: the primary file it tests
    tokens: int | None = None  # exact o200k tokens of ``text``, once delivered
    # the file's place in the ranking (1: the first); None for a test the ranking never
    # reached: excerpts are read by their chance of holding a changed line, not by file
    file_rank: int | None = None

    def __post_init__(self) -> None:
        _check_role(self.role, self.confidence)
        if not 1 <= self.start_line <= self.end_line:
            raise ValueError("bad line range")
        if len(self.text.encode("utf-8")) != self.bytes:
            raise ValueError("bytes must be the UTF-8 length of text")
        if self.kind not in _ITEM_KINDS:
            raise ValueError(f"unknown item kind {self.kind!r}")

    def to_dict(self) -> ItemDict:
        out = _wire(self)
        tokens = out.pop("tokens")
        if tokens is not None:
            out["tokens"] = {"o200k": tokens}
        return cast(ItemDict, out)


@dataclass(frozen=True, slots=True, kw_only=True)
class Omitted:
    """A candidate left out, or a path refused. Sensitive paths carry no size or hash."""

    path: str
    reason: OmissionReason
    score: float | None = None
    bytes_needed: int | None = None
    start_line: int | None = None
    end_line: int | None = None
    duplicate_of: str | None = None  # reason ``duplicate``: the path served in its place
    handle: str | None = None  # a region left out of a readable file: ask for it by handle
    confidence: float | None = None  # left out for its file's low confidence: that confidence
    related_to: str | None = None  # a test of a primary file left out: the file it tests

    def __post_init__(self) -> None:
        if self.reason not in _OMISSION_REASONS:
            raise ValueError(f"unknown omission reason {self.reason!r}")

    def to_dict(self) -> OmittedDict:
        out: dict[str, Any] = {"path": self.path, "reason": self.reason}
        if self.reason == "sensitive":
            return cast(OmittedDict, out)
        for key in (
            "score", "bytes_needed", "start_line", "end_line", "duplicate_of", "handle",
            "confidence", "related_to",
        ):  # fmt: skip
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return cast(OmittedDict, out)

    def sort_key(self) -> tuple[Any, ...]:
        return (-(self.score or 0.0), self.path, self.start_line or 0, self.reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pack:
    task_sha256: str
    budget_bytes: int
    items: tuple[Item, ...]
    omitted: tuple[Omitted, ...]
    warnings: tuple[dict[str, Any], ...] = ()
    graph: dict[str, Any] | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    # the model-facing rendering (``excerpt.deliver``): its UTF-8 size and o200k tokens
    rendered_bytes: int | None = None
    tokens: int | None = None
    # the pack left budget unused: every file left was below this confidence
    stopped_short: float | None = None
    # handles the caller holds: still fresh and not re-sent; and those whose file changed,
    # served again
    already_held: tuple[str, ...] = ()
    held_stale: tuple[str, ...] = ()

    @property
    def used_bytes(self) -> int:
        return sum(item.bytes for item in self.items)

    def __post_init__(self) -> None:
        if self.used_bytes > self.budget_bytes:
            raise ValueError("used_bytes exceeds the budget")
        if self.rendered_bytes is not None and not (
            self.used_bytes <= self.rendered_bytes <= self.budget_bytes
        ):
            raise ValueError("the rendering must hold the excerpts and fit the budget")

    def budget_dict(self) -> BudgetDict:
        out: BudgetDict = {"bytes": self.budget_bytes, "used_bytes": self.used_bytes}
        if self.rendered_bytes is not None:
            out["rendered_bytes"] = self.rendered_bytes
        if self.tokens is not None:
            out["tokens"] = {"o200k": self.tokens}
        if self.stopped_short is not None:
            shown = self.used_bytes if self.rendered_bytes is None else self.rendered_bytes
            out["stopped_short"] = {
                "reason": "low_confidence",
                "floor": self.stopped_short,
                "unused_bytes": self.budget_bytes - shown,
            }
        return out

    def to_dict(self) -> PackDict:
        body = self.body()
        return cast(PackDict, {"pack_id": pack_id(body), **body})

    def body(self) -> PackBodyDict:
        """Every field of the wire form but ``pack_id`` (what a rendering reads: hashing the
        whole pack for an id it does not show would be work for nothing)."""
        out: PackBodyDict = {
            "schema": "excerpt.pack/v1",
            "task_sha256": self.task_sha256,
            "budget": self.budget_dict(),
            "items": [item.to_dict() for item in self.items],
            "omitted": [o.to_dict() for o in self.omitted],
            "warnings": list(self.warnings),
            "graph": self.graph,
            "stats": self.stats,
        }
        if self.already_held:
            out["already_held"] = list(self.already_held)
        if self.held_stale:
            out["held_stale"] = list(self.held_stale)
        return out


def pack_id(body: Mapping[str, Any]) -> str:
    """The id of a pack dict: SHA-256 of the canonical form of every field but ``pack_id``."""
    rest = {k: v for k, v in body.items() if k != "pack_id"}
    return "sha256:" + sha256_hex(canonical_json(rest))


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanEntry:
    rank: int
    path: str
    start_line: int
    end_line: int
    score: float
    reasons: tuple[Reason, ...]
    bytes: int
    role: Role = "related"
    confidence: float = 0.0
    related_to: str | None = None

    def __post_init__(self) -> None:
        _check_role(self.role, self.confidence)

    def to_dict(self) -> PlanEntryDict:
        return cast(PlanEntryDict, _wire(self))


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    candidates: tuple[PlanEntry, ...]
    suggested_budget: int
    omitted: tuple[Omitted, ...]

    def to_dict(self) -> PlanDict:
        return {
            "schema": "excerpt.plan/v1",
            "candidates": [c.to_dict() for c in self.candidates],
            "suggested_budget": self.suggested_budget,
            "omitted": [o.to_dict() for o in self.omitted],
        }


def pack_schema() -> dict[str, Any]:
    """The JSON Schema of ``excerpt.pack/v1`` shipped in the package."""
    return _schema("pack.v1.json")


def plan_schema() -> dict[str, Any]:
    """The JSON Schema of ``excerpt.plan/v1`` shipped in the package."""
    return _schema("plan.v1.json")


def _schema(name: str) -> dict[str, Any]:
    text = resources.files("excerpt.pack").joinpath(f"schema/{name}").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
