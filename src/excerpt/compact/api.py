"""``compact`` and ``expand``: the compactors behind one call each, the store, the savings."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Literal

from excerpt.compact.diffparse import file_sections, looks_like_diff, parse_diff
from excerpt.compact.diffs import diff_elisions
from excerpt.compact.jsonscan import parse, path_span
from excerpt.compact.jsonview import json_elisions
from excerpt.compact.logs import log_elisions
from excerpt.compact.store import Store
from excerpt.compact.view import Elision, Surface, assemble, split_lines
from excerpt.core.tokens import o200k_count
from excerpt.errors import UsageError

__all__ = ["CLAUDE_CODE_SPILL_CHARS", "Compaction", "Expansion", "compact", "detect_kind", "expand"]

Kind = Literal["json", "log", "diff"]
KINDS = ("json", "log", "diff")
MIN_SAVING = 0.10  # below this share of bytes saved the payload comes back unchanged
# Claude Code writes a Bash result over this many characters to a file and shows a preview:
# the agent then reads the file, so the original is what it pays for (no saving is ours).
CLAUDE_CODE_SPILL_CHARS = 30_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """A compacted payload: ``text`` is what the agent reads (the payload itself when
    ``unchanged``)."""

    id: str
    kind: Kind
    text: str
    original_bytes: int
    compacted_bytes: int
    original_tokens: int
    compacted_tokens: int
    unchanged: bool
    elisions: tuple[dict[str, Any], ...]
    original_chars: int

    def to_dict(self) -> dict[str, Any]:
        saved = self.original_bytes - self.compacted_bytes
        return {
            "id": self.id,
            "kind": self.kind,
            "unchanged": self.unchanged,
            "original_bytes": self.original_bytes,
            "compacted_bytes": self.compacted_bytes,
            "saved_bytes": saved,
            "original_tokens": self.original_tokens,
            "compacted_tokens": self.compacted_tokens,
            "saved_tokens": self.original_tokens - self.compacted_tokens,
            "saved_share": round(saved / self.original_bytes, 4) if self.original_bytes else 0.0,
            "claude_code_spill": _spill_note(self.original_chars),
            "elisions": list(self.elisions),
            "text": self.text,
        }

    def summary(self) -> str:
        """One line: the id and what was saved, against what the agent would have read."""
        if self.unchanged:
            return (
                f"excerpt compact {self.id}: returned unchanged ({self.kind}; compaction would"
                f" save under {MIN_SAVING:.0%}), {self.original_bytes:,} bytes"
            )
        saved = self.original_bytes - self.compacted_bytes
        return (
            f"excerpt compact {self.id}: {self.kind}, {self.original_bytes:,} → "
            f"{self.compacted_bytes:,} bytes ({saved / self.original_bytes:.0%} saved), "
            f"{self.original_tokens:,} → {self.compacted_tokens:,} o200k tokens, "
            f"{len(self.elisions)} elisions"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Expansion:
    """The selected bytes of an original; ``lines`` the 1-based line ranges they cover."""

    id: str
    selection: str
    data: bytes
    lines: tuple[tuple[int, int], ...]
    total_lines: int

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "id": self.id,
            "status": "ok",
            "selection": self.selection,
            "bytes": len(self.data),
            "lines": [list(r) for r in self.lines],
            "total_lines": self.total_lines,
        }
        try:
            doc["text"] = self.data.decode("utf-8")
        except UnicodeDecodeError:
            import base64

            doc["base64"] = base64.b64encode(self.data).decode("ascii")
        return doc


def _spill_note(chars: int) -> str:
    if chars <= CLAUDE_CODE_SPILL_CHARS:
        return f"none: {chars:,} characters reach the model whole"
    return (
        f"the original ({chars:,} characters, over {CLAUDE_CODE_SPILL_CHARS:,}) would be "
        "written to a file with a preview shown; reading it costs the original, so the "
        "saving above is counted against the whole original, not the preview"
    )


def detect_kind(data: bytes) -> Kind:
    """json when the payload is one JSON value, diff when it reads as a unified diff, else
    log."""
    if data.lstrip()[:1] in (b"{", b"[") and parse(data.decode("latin-1")) is not None:
        return "json"
    return "diff" if looks_like_diff(data) else "log"


def compact(
    data: bytes, *, store: Store, kind: Kind | Literal["auto"] = "auto", surface: Surface = "cli"
) -> Compaction:
    """Store ``data`` and return its compacted view. Deterministic: the same bytes, kind and
    surface give the same view.

    Raises:
        UsageError: ``kind`` is not one of json, log, diff, auto.
        CacheFault: the store cannot be written.
    """
    if kind not in (*KINDS, "auto"):
        raise UsageError(f"unknown kind {kind!r}: json, log, diff or auto")
    chosen: Kind = detect_kind(data) if kind == "auto" else kind
    ident = store.put(data)
    elisions = _elisions(data, chosen)
    view = assemble(data, elisions, ident, surface, line_marks=chosen != "json")
    unchanged = not elisions or len(view) > len(data) * (1 - MIN_SAVING)
    if unchanged:
        view, elisions = data, []
    original = data.decode("utf-8", "surrogateescape")
    text = view.decode("utf-8", "surrogateescape")
    return Compaction(
        id=ident,
        kind=chosen,
        text=text,
        original_bytes=len(data),
        compacted_bytes=len(view),
        original_tokens=o200k_count(original),
        compacted_tokens=o200k_count(text),
        unchanged=unchanged,
        elisions=tuple(e.to_dict(ident, surface) for e in sorted(elisions, key=lambda e: e.start)),
        original_chars=len(original),
    )


def _elisions(data: bytes, kind: Kind) -> list[Elision]:
    if kind == "json":
        text = data.decode("latin-1")
        root = parse(text)
        return [] if root is None else json_elisions(text, root)
    lines = split_lines(data)
    return diff_elisions(lines) if kind == "diff" else log_elisions(lines)


def expand(
    ident: str,
    *,
    store: Store,
    lines: str | None = None,
    grep: str | None = None,
    path: str | None = None,
) -> Expansion:
    """The original stored under ``ident``, whole or the part asked for (at most one of
    ``lines`` "A-B", ``grep`` a regular expression matched per line, ``path`` a JSON path
    into a JSON original or a file of a diff: every section of that file, in order), byte
    for byte.

    Raises:
        UsageError: a malformed id or selector, more than one selector, or a ``path`` that
            names nothing in the original (or an original neither JSON nor a diff).
        OriginalEvicted, OriginalUnknown, OriginalCorrupt: no bytes to give.
    """
    if sum(x is not None for x in (lines, grep, path)) > 1:
        raise UsageError("give at most one of --lines, --grep, --path")
    if lines is not None:  # a malformed selector is refused before the store is read
        _line_range(lines, sys.maxsize)
    if grep is not None:
        _regex(grep)
    data = store.get(ident)
    split = split_lines(data)
    starts = [0, *accumulate(len(line) for line in split)]
    if lines is not None:
        a, b = _line_range(lines, len(split))
        return Expansion(
            id=ident, selection=f"lines {a}-{b}", data=b"".join(split[a - 1 : b]),
            lines=((a, b),), total_lines=len(split),
        )  # fmt: skip
    if grep is not None:
        return _grep(ident, split, grep)
    if path is not None:
        if detect_kind(data) == "diff":
            return _diff_file(ident, split, path)
        return _json_part(ident, data, split, starts, path)
    return Expansion(
        id=ident, selection="all", data=data, lines=((1, len(split)),) if split else (),
        total_lines=len(split),
    )  # fmt: skip


def _json_part(
    ident: str, data: bytes, split: list[bytes], starts: list[int], path: str
) -> Expansion:
    """The bytes JSON path ``path`` names in the original (a JSON value)."""
    root = parse(data.decode("latin-1"))
    if root is None:
        raise UsageError(
            f"--path: the original of {ident} is neither JSON nor a diff (a JSON path or a "
            "file of a diff); use --lines or --grep"
        )
    try:
        span = path_span(root, path)
    except ValueError as exc:
        raise UsageError(f"--path {path!r}: {exc}") from None
    if span is None:
        raise UsageError(f"--path {path!r} names nothing in the original of {ident}")
    first = _line_of(starts, span[0])
    last = _line_of(starts, span[1] - 1)
    return Expansion(
        id=ident, selection=f"path {path}", data=data[span[0] : span[1]],
        lines=((first, last),), total_lines=len(split),
    )  # fmt: skip


def _diff_file(ident: str, split: list[bytes], path: str) -> Expansion:
    """Every section of file ``path`` in the original (a diff), in order."""
    sections, _ = parse_diff(split)
    found = file_sections(sections, path)
    if not found:
        names = list(dict.fromkeys(s.path for s in sections))
        listed = ", ".join(names[:20]) + (
            f" and {len(names) - 20:,} more" if len(names) > 20 else ""
        )
        raise UsageError(
            f"--path {path!r} names no file of the diff {ident}"
            + (f"; its files: {listed}" if names else "; it has no file sections")
        )
    ranges = tuple((s.start + 1, s.end) for s in found)
    part = b"".join(b"".join(split[a - 1 : b]) for a, b in ranges)
    return Expansion(
        id=ident, selection=f"file {path}", data=part, lines=ranges, total_lines=len(split)
    )


def _line_range(spec: str, total: int) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", spec)
    if m is None:
        raise UsageError(f"--lines {spec!r}: expected A-B (1-based, inclusive) or A")
    a = int(m.group(1))
    b = int(m.group(2)) if m.group(2) else a
    if a < 1 or b < a:
        raise UsageError(f"--lines {spec!r}: expected 1 <= A <= B")
    if a > total:
        raise UsageError(f"--lines {spec!r}: the original has {total:,} lines")
    return a, min(b, total)


def _grep(ident: str, split: list[bytes], pattern: str) -> Expansion:
    rx = _regex(pattern)
    hits = [
        i
        for i, line in enumerate(split)
        if rx.search(line.rstrip(b"\n").decode("utf-8", "surrogateescape"))
    ]
    ranges: list[tuple[int, int]] = []
    for i in hits:
        if ranges and ranges[-1][1] == i:
            ranges[-1] = (ranges[-1][0], i + 1)
        else:
            ranges.append((i + 1, i + 1))
    return Expansion(
        id=ident, selection=f"grep {pattern}", data=b"".join(split[i] for i in hits),
        lines=tuple(ranges), total_lines=len(split),
    )  # fmt: skip


def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"--grep {pattern!r}: {exc}") from None


def _line_of(starts: list[int], offset: int) -> int:
    """The 1-based line holding byte ``offset``."""
    import bisect

    return bisect.bisect_right(starts, offset)
