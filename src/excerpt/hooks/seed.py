"""The seed: what the model receives with a task prompt, before its first turn.

In: the served root, the prompt, the handles the session already holds, a token cap. Out: a
``Seed``, the Markdown to inject and the handles it serves. Two shapes, chosen by how sure
the ranking is of its first file:

- ``pack``: a few regions of exact source (the pack's own rendering, each with its handle),
  without the noise a full budget would add (confidence stops it short);
- ``map``: no source, one line per region of the first files (line range, why, handle), a
  few hundred tokens that point the model at where to read.

Both stay within the cap in o200k tokens, counted on the text as sent. Handles the session
holds are not served again while their file is unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from excerpt.core.escape import escape_controls
from excerpt.core.limits import MAX_BUDGET, MIN_BUDGET
from excerpt.core.tokens import o200k_count
from excerpt.deliver import pack_prepared, plan_prepared, prepare, remember_pack
from excerpt.index.build import IndexReport
from excerpt.pack import PackRequest
from excerpt.pack.handles import format_handle
from excerpt.pack.prepare import MAX_HELD, Prepared

__all__ = ["DEFAULT_SEED_TOKENS", "SURE", "Seed", "SeedAsk", "Shape", "build_seed"]

Shape = Literal["auto", "pack", "map"]
DEFAULT_SEED_TOKENS = 2000
# the first file's confidence from which a seed is source (a pack); below it, a map. Chosen
# by `excerpt bench session` (68 SWE-bench and 67 multi-language tasks, tokens until every
# changed line was shown, median Claude/Codex): a pack from 0.5 on, 34.9k/43.9k and
# 5.8k/6.8k; always a map, 12.6k/9.4k and 7.9k/7.5k; a pack only from 0.9, 12.6k/9.4k and
# 7.0k/7.3k. A map of a few hundred tokens that points well is cheap either way; a pack
# that misses costs its 2,000.
SURE = 0.9
MAP_FILES = 6  # files a map names
MAP_REGIONS = 3  # regions named per file
RETRIEVE = "`context_retrieve` (excerpt's MCP tool) or `excerpt get HANDLE`"
_BYTES_PER_TOKEN = 4.0  # a first guess of the budget; the count on the text decides
# files read for a seed: it never reaches past its first few, and reading fewer than a pack's
# 80 answers sooner (Django, 12 tasks: 360 -> 246 ms a seed, 11 of 12 seeds the same)
SEED_CANDIDATES = 30
_FIT_ROUNDS = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class Seed:
    """A seed to inject (``text``; empty when there is none) and what it serves."""

    text: str
    shape: Literal["pack", "map", "none"]
    handles: tuple[str, ...]
    tokens: int
    confidence: float  # the first file's
    why: str  # for the log


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedAsk:
    """What a seed is asked with besides the root and the prompt (``build_seed``'s
    keywords), as a hook sends it to a running server."""

    held: tuple[str, ...] = ()
    pointed: tuple[str, ...] = ()
    max_tokens: int = DEFAULT_SEED_TOKENS
    max_chars: int | None = None
    shape: Shape = "auto"

    def to_kwargs(self) -> dict[str, Any]:
        return {"held": self.held, "pointed": self.pointed, "max_tokens": self.max_tokens,
                "max_chars": self.max_chars, "shape": self.shape}  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {**self.to_kwargs(), "held": list(self.held), "pointed": list(self.pointed)}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> SeedAsk:
        """Raises: ValueError, KeyError, TypeError on a malformed request."""
        shape = doc["shape"]
        if shape not in ("auto", "pack", "map"):
            raise ValueError(f"unknown seed shape {shape!r}")
        chars = doc["max_chars"]
        return cls(
            held=tuple(str(h) for h in doc["held"]),
            pointed=tuple(str(h) for h in doc["pointed"]),
            max_tokens=int(doc["max_tokens"]),
            max_chars=None if chars is None else int(chars),
            shape=shape,
        )


def _none(why: str, confidence: float = 0.0) -> Seed:
    return Seed(text="", shape="none", handles=(), tokens=0, confidence=confidence, why=why)


def build_seed(
    root: Path,
    prompt: str,
    *,
    held: Sequence[str] = (),
    pointed: Sequence[str] = (),
    max_tokens: int = DEFAULT_SEED_TOKENS,
    max_chars: int | None = None,
    shape: Shape = "auto",
    cache_dir: Path | None = None,
    index: IndexReport | None = None,
) -> Seed:
    """The seed for ``prompt`` on ``root`` within ``max_tokens`` o200k tokens (and
    ``max_chars`` characters, a client's own limit). ``held``: handles whose source the
    session holds (not served again while their file is unchanged); ``pointed``: handles an
    earlier map named (not named again; their source may still be served). ``index``: the
    report of a refresh the caller knows is still current (a running server's), so the index
    is not refreshed.

    Raises:
        ExcerptError: the repository or its index cannot be used (the hook injects nothing).
    """
    budget = min(MAX_BUDGET, max(MIN_BUDGET, math.floor(max_tokens * _BYTES_PER_TOKEN)))
    request = PackRequest(
        repo=root, task=prompt, budget=budget, fill=False, held=tuple(held)[-MAX_HELD:],
        cache_dir=cache_dir, candidates=SEED_CANDIDATES, index=index,
    )  # fmt: skip
    prep = prepare(request)
    if not prep.candidates:
        return _none("no file matches the prompt")
    confidence = prep.confidence.get(prep.candidates[0].path, 0.0)
    chosen = shape if shape != "auto" else ("pack" if confidence >= SURE else "map")
    fits = _Fits(tokens=max_tokens, chars=max_chars)
    if chosen == "map":
        return _map_seed(prep, frozenset((*request.held, *pointed)), fits, confidence)
    return _pack_seed(prep, request, fits, confidence)


@dataclass(frozen=True, slots=True)
class _Fits:
    """A seed's limits: o200k tokens, and characters where the client counts them."""

    tokens: int
    chars: int | None

    def over(self, text: str) -> float:
        """How far over its limits ``text`` is (1.0 or less: it fits)."""
        ratio = o200k_count(text) / self.tokens
        if self.chars is not None:
            ratio = max(ratio, len(text) / self.chars)
        return ratio


def _head(what: str) -> str:
    return (
        f"excerpt prepared this {what} for the prompt above (a hook, before your first turn;"
        f" exact and hash-verified, re-read any range with {RETRIEVE})."
    )


def _pack_seed(prep: Prepared, request: PackRequest, fits: _Fits, confidence: float) -> Seed:
    head = _head("context") + "\n"
    budget = request.budget
    for _ in range(_FIT_ROUNDS):
        done = pack_prepared(
            prep, request.task, budget, retrieve=RETRIEVE, fill=False,
            held=request.held_handles(),
        )  # fmt: skip
        if not done.pack.items:
            return _none("nothing new to serve: the session holds every region", confidence)
        text = head + done.text
        over = fits.over(text)
        if over <= 1.0:
            remember_pack(prep, done.pack)
            handles = tuple(item.handle for item in done.pack.items)
            return Seed(text=text, shape="pack", handles=handles, tokens=o200k_count(text),
                        confidence=confidence, why="pack")  # fmt: skip
        budget = math.floor(budget / over * 0.97)
        if budget < MIN_BUDGET:
            break
    return _none(f"no pack fits {fits.tokens} tokens", confidence)


def _map_seed(prep: Prepared, held: frozenset[str], fits: _Fits, confidence: float) -> Seed:
    """The first ``MAP_FILES`` files in rank order, each with its regions most likely to hold
    a line to change first (the plan's order), at most ``MAP_REGIONS`` of each."""
    ranked = [c.path for c in prep.candidates if c.path in prep.files][:MAP_FILES]
    files: dict[str, list[str]] = {path: [] for path in ranked}
    handles: list[str] = []
    for entry in plan_prepared(prep).candidates:
        rows = files.get(entry.path)
        if rows is None or len(rows) >= MAP_REGIONS:
            continue
        content = prep.files[entry.path][0]
        handle = format_handle(entry.path, entry.start_line, entry.end_line, content.sha256)
        if handle in held:
            continue
        why = ", ".join(dict.fromkeys(r.signal for r in entry.reasons))
        rows.append(f"  - L{entry.start_line}-{entry.end_line} ({entry.bytes:,} B; {why})"
                    f" `{escape_controls(handle)}`")  # fmt: skip
        handles.append(handle)
    files = {path: rows for path, rows in files.items() if rows}
    if not files:
        return _none("nothing new to point at", confidence)
    lines = [_head("map of where to read"), ""]
    for n, (path, rows) in enumerate(files.items(), 1):
        lines.append(f"{n}. `{escape_controls(path)}`")
        lines.extend(rows)
    text = "\n".join(lines) + "\n"
    while fits.over(text) > 1.0 and len(lines) > 3:
        lines.pop()
        text = "\n".join(lines) + "\n"
    kept = tuple(h for h in handles if escape_controls(h) in text)
    return Seed(text=text, shape="map", handles=kept, tokens=o200k_count(text),
                confidence=confidence, why="map")  # fmt: skip
