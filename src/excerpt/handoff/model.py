"""The ``excerpt.handoff/v1`` document: its fields, limits, and the checks both its input and
the document itself pass (the shipped JSON Schema says the same, and a test keeps them equal).

A check never raises on bad data: it returns every problem found, each one line naming the
field (``commands[2].exit_code: …``) and never the value sent, so a hostile document cannot
put its text into an error message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from excerpt.errors import UsageError
from excerpt.pack.handles import parse_handle
from excerpt.pack.retrieve import refusal_reason

__all__ = [
    "AGENTS",
    "CONTENT_KEYS",
    "DOCUMENT_KEYS",
    "LIST_KEYS",
    "MAX_INPUT_BYTES",
    "SCHEMA_ID",
    "check_content",
    "check_document",
    "path_problem",
]

SCHEMA_ID: Final = "excerpt.handoff/v1"
AGENTS: Final = ("claude", "codex")
MAX_INPUT_BYTES: Final = 4 * 1024 * 1024
MAX_TEXT: Final = 65_536  # characters in one string field
MAX_ITEMS: Final = 1000  # entries in one list field
MAX_PATH: Final = 4096

# keys of lists of plain strings, in the order a rendering shows them
LIST_KEYS: Final = ("constraints", "files_touched", "open_questions", "next_steps", "risks")
CONTENT_KEYS: Final = (
    "goal", "status", "constraints", "decisions", "files_touched", "commands",
    "open_questions", "next_steps", "risks", "evidence",
)  # fmt: skip
DOCUMENT_KEYS: Final = (
    "schema", "from", "to", "created_at", "head", "dirty_digest", "dirty_files",
    "evidence_excerpts", *CONTENT_KEYS,
)  # fmt: skip
CREATED_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_HEAD = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
DIRTY_STATES: Final = ("modified", "deleted", "untracked", "staged")


def path_problem(path: str) -> str | None:
    """Why ``path`` is not a workspace-relative POSIX path (a sensitive name may be listed)."""
    if len(path) > MAX_PATH:
        return "path too long"
    reason = refusal_reason(path)
    return None if reason in (None, "sensitive path") else reason


class _Problems:
    def __init__(self) -> None:
        self.found: list[str] = []

    def add(self, where: str, what: str) -> None:
        if len(self.found) < 100:  # a document with a million bad entries gets a short answer
            self.found.append(f"{where}: {what}")

    def text(self, where: str, value: Any, *, required: bool = False) -> None:
        if not isinstance(value, str):
            self.add(where, "expected a string")
        elif len(value) > MAX_TEXT:
            self.add(where, f"longer than {MAX_TEXT} characters")
        elif required and not value.strip():
            self.add(where, "must not be empty")
        elif "\0" in value:
            self.add(where, "contains a NUL character")

    def items(self, where: str, value: Any) -> list[Any]:
        if not isinstance(value, list):
            self.add(where, "expected a list")
            return []
        if len(value) > MAX_ITEMS:
            self.add(where, f"more than {MAX_ITEMS} entries")
            return []
        return value

    def record(self, where: str, value: Any, keys: tuple[str, ...]) -> Mapping[str, Any] | None:
        if not isinstance(value, dict):
            self.add(where, "expected an object")
            return None
        for key in sorted(set(value) - set(keys), key=str)[:5]:
            self.add(where, f"unknown key {_name(key)}")
        for key in keys:
            if key not in value:
                self.add(where, f"missing key {key}")
        return value


def _name(key: Any) -> str:
    text = str(key)
    shown = re.sub(r"[^A-Za-z0-9_.-]", "?", text[:40])
    return repr(shown + ("…" if len(text) > 40 else ""))


def check_content(obj: Any, *, extra: tuple[str, ...] = ()) -> list[str]:
    """Problems of the content fields of ``obj`` (an input, or a document's content); keys in
    ``extra`` are allowed and left to the caller. Only ``goal`` is required."""
    p = _Problems()
    if not isinstance(obj, dict):
        return ["document: expected a JSON object"]
    for key in sorted(set(obj) - set(CONTENT_KEYS) - set(extra), key=str)[:5]:
        p.add("document", f"unknown key {_name(key)}")
    if "goal" not in obj:
        p.add("document", "missing key goal")
    else:
        p.text("goal", obj["goal"], required=True)
    if "status" in obj:
        p.text("status", obj["status"])
    for key in LIST_KEYS:
        for i, item in enumerate(p.items(key, obj.get(key, []))):
            p.text(f"{key}[{i}]", item, required=True)
            if key == "files_touched" and isinstance(item, str) and item:
                problem = path_problem(item)
                if problem:
                    p.add(f"{key}[{i}]", problem)
    _decisions(p, obj.get("decisions", []))
    _commands(p, obj.get("commands", []))
    _evidence(p, obj.get("evidence", []))
    return p.found


def _decisions(p: _Problems, value: Any) -> None:
    for i, item in enumerate(p.items("decisions", value)):
        entry = p.record(f"decisions[{i}]", item, ("decision", "why"))
        if entry is not None:
            p.text(f"decisions[{i}].decision", entry.get("decision"), required=True)
            p.text(f"decisions[{i}].why", entry.get("why"), required=True)


def _commands(p: _Problems, value: Any) -> None:
    for i, item in enumerate(p.items("commands", value)):
        entry = p.record(f"commands[{i}]", item, ("command", "exit_code", "result"))
        if entry is None:
            continue
        p.text(f"commands[{i}].command", entry.get("command"), required=True)
        p.text(f"commands[{i}].result", entry.get("result"))
        code = entry.get("exit_code")
        if code is not None and (
            isinstance(code, bool) or not isinstance(code, int) or not -(2**31) <= code < 2**31
        ):
            p.add(f"commands[{i}].exit_code", "expected an integer or null")


def _evidence(p: _Problems, value: Any) -> None:
    for i, item in enumerate(p.items("evidence", value)):
        if not isinstance(item, str):
            p.add(f"evidence[{i}]", "expected a handle string")
            continue
        try:
            handle = parse_handle(item)
        except UsageError as exc:
            p.add(f"evidence[{i}]", exc.message)
            continue
        reason = refusal_reason(handle.path)
        if reason:
            p.add(f"evidence[{i}]", f"handle refused: {reason}")


def check_document(obj: Any) -> list[str]:
    """Every problem of ``obj`` as an ``excerpt.handoff/v1`` document (empty: valid)."""
    if not isinstance(obj, dict):
        return ["document: expected a JSON object"]
    if obj.get("schema") != SCHEMA_ID:
        return [f"schema: expected {SCHEMA_ID!r}"]
    p = _Problems()
    for key in DOCUMENT_KEYS:
        if key not in obj:
            p.add("document", f"missing key {key}")
    p.found += check_content(obj, extra=DOCUMENT_KEYS[:8])
    evidence = obj.get("evidence")
    if isinstance(evidence, list) and len(evidence) != len({json.dumps(e) for e in evidence}):
        p.add("evidence", "a handle is listed twice")
    for key in ("from", "to"):
        if key in obj and obj[key] not in AGENTS:
            p.add(key, "expected 'claude' or 'codex'")
    if "created_at" in obj and not (
        isinstance(obj["created_at"], str) and CREATED_AT.fullmatch(obj["created_at"])
    ):
        p.add("created_at", "expected UTC time as YYYY-MM-DDTHH:MM:SSZ")
    head = obj.get("head")
    if head is not None and not (isinstance(head, str) and _HEAD.fullmatch(head)):
        p.add("head", "expected a commit id or null")
    digest = obj.get("dirty_digest")
    if digest is not None and not (isinstance(digest, str) and _SHA256.fullmatch(digest)):
        p.add("dirty_digest", "expected sha256:<64 hex> or null")
    _dirty_files(p, obj.get("dirty_files"))
    _excerpts(p, obj.get("evidence_excerpts", {}), obj.get("evidence"))
    return p.found


def _dirty_files(p: _Problems, value: Any) -> None:
    if value is None:
        return
    for i, item in enumerate(p.items("dirty_files", value)):
        entry = p.record(f"dirty_files[{i}]", item, ("path", "state", "digest"))
        if entry is None:
            continue
        p.text(f"dirty_files[{i}].path", entry.get("path"), required=True)
        p.text(f"dirty_files[{i}].digest", entry.get("digest"), required=True)
        if entry.get("state") not in DIRTY_STATES:
            p.add(f"dirty_files[{i}].state", f"expected one of {', '.join(DIRTY_STATES)}")


def _excerpts(p: _Problems, value: Any, evidence: Any) -> None:
    if not isinstance(value, dict):
        p.add("evidence_excerpts", "expected an object")
        return
    held = set(evidence) if isinstance(evidence, list) else set()
    for key in sorted(value, key=str)[:MAX_ITEMS]:
        where = f"evidence_excerpts[{_name(key)}]"
        if key not in held:
            p.add(where, "not one of the evidence handles")
        entry = p.record(where, value[key], ("excerpt_sha256", "first_line_sha256"))
        if entry is None:
            continue
        for field in ("excerpt_sha256", "first_line_sha256"):
            if not (isinstance(entry.get(field), str) and _HEX64.fullmatch(entry[field])):
                p.add(f"{where}.{field}", "expected 64 hex digits")
