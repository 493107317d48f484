"""Build a handoff document from its content, and read one from a file.

``created_at`` is the caller's clock, else ``$EXCERPT_HANDOFF_CREATED_AT`` (UTC,
``YYYY-MM-DDTHH:MM:SSZ``: a test or a reproducible build pins it), else now; with the same
content, repository state and clock the document is the same bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from excerpt.core.capped import read_capped
from excerpt.core.hashing import sha256_hex
from excerpt.core.lines import split_lines
from excerpt.discover.walk import resolve_root
from excerpt.errors import UsageError
from excerpt.handoff.model import (
    AGENTS,
    CONTENT_KEYS,
    CREATED_AT,
    DOCUMENT_KEYS,
    LIST_KEYS,
    MAX_INPUT_BYTES,
    MAX_ITEMS,
    SCHEMA_ID,
    check_content,
)
from excerpt.handoff.session import SessionFacts
from excerpt.handoff.state import repo_state
from excerpt.pipeline import get_excerpts

__all__ = [
    "CLOCK_ENV", "Created", "assemble", "create_handoff", "load_json", "normalized_content",
]  # fmt: skip

CLOCK_ENV = "EXCERPT_HANDOFF_CREATED_AT"


class Created:
    """A new document and what its author should know (evidence already stale, say)."""

    __slots__ = ("document", "warnings")

    def __init__(self, document: dict[str, Any], warnings: list[str]) -> None:
        self.document = document
        self.warnings = warnings


def load_json(source: str | os.PathLike[str], *, what: str = "input") -> Any:
    """The JSON value in the file ``source`` (``-``: stdin), read up to 4 MiB.

    Raises:
        UsageError: unreadable, larger than 4 MiB, not UTF-8 text, or not JSON (the message
            gives the line and column, never the content).
    """
    name = os.fspath(source)
    data = read_capped(name, MAX_INPUT_BYTES, reading=f"the {what} {name}", what=what)
    return parse_json(data, what)


def parse_json(data: bytes, what: str) -> Any:
    """See ``load_json``."""
    if b"\0" in data:
        raise UsageError(f"the {what} is binary, not JSON")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"the {what} is not UTF-8 text") from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"the {what} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError as exc:
        raise UsageError(f"the {what} is not JSON: {exc}") from None
    except RecursionError:
        raise UsageError(f"the {what} is nested too deeply") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def normalized_content(content: Mapping[str, Any]) -> dict[str, Any]:
    """Every content key, defaults filled, repeated list entries kept once (first wins).

    Raises:
        UsageError: the content is not valid (the first problems, by field).
    """
    problems = check_content(dict(content), extra=DOCUMENT_KEYS[:8])
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise UsageError("invalid handoff: " + "; ".join(problems[:3]) + more)
    out: dict[str, Any] = {"goal": content["goal"], "status": content.get("status", "")}
    for key in (*LIST_KEYS, "evidence"):
        out[key] = list(dict.fromkeys(content.get(key, [])))
    out["decisions"] = _once([dict(d) for d in content.get("decisions", [])])
    out["commands"] = _once([dict(c) for c in content.get("commands", [])])
    return {key: out[key] for key in CONTENT_KEYS}


def _once(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    kept = []
    for record in records:
        key = json.dumps(record, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(record)
    return kept


def clock(created_at: str | None) -> str:
    """``created_at``, else ``$EXCERPT_HANDOFF_CREATED_AT``, else now (UTC, seconds).

    Raises:
        UsageError: the given time is not ``YYYY-MM-DDTHH:MM:SSZ``.
    """
    given = created_at if created_at is not None else os.environ.get(CLOCK_ENV)
    if given is None:
        return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if not CREATED_AT.fullmatch(given):
        raise UsageError(f"{CLOCK_ENV}: expected UTC time as YYYY-MM-DDTHH:MM:SSZ")
    return given


def create_handoff(
    repo: str | os.PathLike[str],
    content: Mapping[str, Any],
    *,
    sender: str,
    receiver: str,
    created_at: str | None = None,
    cache_dir: Path | None = None,
) -> Created:
    """A handoff document for ``content``, pinned to the repository's ``HEAD`` and dirty
    tree; each fresh evidence handle's excerpt digest is kept, so ``validate`` can say where
    its text moved. A document given as content is taken as content (its pins renewed).

    Raises:
        UsageError: invalid content, an unknown agent, or an evidence handle refused.
        NotADirectoryFault, GitFault: the repository cannot be read.
    """
    for flag, agent in (("--from", sender), ("--to", receiver)):
        if agent not in AGENTS:
            raise UsageError(f"{flag}: expected claude or codex")
    body = normalized_content(content)
    when = clock(created_at)
    root = resolve_root(repo)
    excerpts: dict[str, dict[str, str]] = {}
    warnings: list[str] = []
    for got in get_excerpts(root, body["evidence"], cache_dir=cache_dir):
        if got.status == "refused":
            raise UsageError(f"evidence handle refused: {got.error}")
        if got.status != "fresh" or got.text is None:
            warnings.append(f"evidence {got.handle} is already {got.status}")
            continue
        first = split_lines(got.text.encode("utf-8"))[0]
        excerpts[got.handle] = {
            "excerpt_sha256": str(got.excerpt_sha256),
            "first_line_sha256": sha256_hex(first),
        }
    document = {
        "schema": SCHEMA_ID,
        "from": sender,
        "to": receiver,
        "created_at": when,
        **repo_state(root).to_dict(),
        "evidence_excerpts": excerpts,
        **body,
    }
    return Created({key: document[key] for key in DOCUMENT_KEYS}, warnings)


def assemble(
    base: Any, facts: SessionFacts | None, flags: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """Content from three layers: ``base`` (a JSON object, or an earlier handoff: its pins
    are dropped, a new document gets new ones), then what a session transcript recorded,
    then ``flags`` (``goal``/``status`` replace; lists are added to). Returns the content and
    notes for its author (what the transcript left out).

    Raises:
        UsageError: ``base`` is not a JSON object.
    """
    if not isinstance(base, dict):
        raise UsageError("the input must be a JSON object with the handoff's keys")
    content = {k: v for k, v in base.items() if k not in DOCUMENT_KEYS[:8]}
    notes: list[str] = []
    layers: list[Mapping[str, Any]] = []
    if facts is not None:
        layers.append({"files_touched": facts.files_touched, "commands": facts.commands})
        notes += _session_notes(facts)
    layers.append(flags)
    for layer in layers:
        for key, value in layer.items():
            if key in ("goal", "status"):
                content[key] = value
            elif value:
                held = content.get(key, [])
                content[key] = [*(held if isinstance(held, list) else [held]), *value]
    for key in ("files_touched", "commands"):
        if isinstance(content.get(key), list) and len(content[key]) > MAX_ITEMS:
            notes.append(f"kept the last {MAX_ITEMS} of {len(content[key])} {key}")
            content[key] = content[key][-MAX_ITEMS:]
    return content, notes


def _session_notes(facts: SessionFacts) -> list[str]:
    notes = []
    if facts.outside:
        notes.append(f"session: left out {facts.outside} path(s) outside the repository")
    if facts.skipped:
        notes.append(f"session: passed over {facts.skipped} line(s) that are not JSON entries")
    return notes
