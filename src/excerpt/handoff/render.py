"""A handoff as Markdown for the agent that receives it.

Both renderings carry every field of the document, each value verbatim (a value that spans
lines or holds backticks goes in a fence longer than any backtick run in it); they differ in
the receiver's conventions:

- ``claude``: each part in its own XML-style tag (``<goal>``, ``<decisions>``, …), the
  structure Claude is prompted with, and evidence re-read with the ``context_retrieve`` tool
  or ``excerpt get``;
- ``codex``: plain ``##`` sections in the style of an ``AGENTS.md``, commands as ``sh``
  blocks, evidence re-read with ``excerpt get``.

Either starts by saying how to check the handoff before trusting it. The evidence's excerpt
digests (``evidence_excerpts``) are left to ``validate``, which reads them from the document.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["render_handoff", "render_report"]

_TITLES = {
    "goal": "Goal", "status": "Status", "constraints": "Constraints",
    "decisions": "Decisions", "files_touched": "Files touched", "commands": "Commands run",
    "open_questions": "Open questions", "next_steps": "Next steps", "risks": "Risks",
    "evidence": "Evidence",
}  # fmt: skip
_NAMES = {"claude": "Claude", "codex": "Codex"}
_TICKS = re.compile(r"`+")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _inline(text: str) -> str:
    """``text`` as inline code, or a fenced block when it spans lines."""
    if "\n" in text or "\r" in text:
        return "\n\n" + _fence(text, "text")
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(text: str, language: str) -> str:
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}{language}\n{body}{fence}\n"


def _plain(text: str) -> str:
    """A free-text value: kept as written, fenced only when Markdown could change it."""
    if "\n" in text or "\r" in text or text != text.strip() or re.search(r"[`*_<>#\[\]\\|]", text):
        return _inline(text)
    return text


def _items(doc: dict[str, Any], key: str, receiver: str) -> list[str]:
    values = doc[key]
    if key in ("goal", "status"):
        return [_plain(values) if values else "(none given)"]
    if not values:
        return ["- (none)"]
    if key == "decisions":
        return [f"- {_plain(d['decision'])}\n  - why: {_plain(d['why'])}" for d in values]
    if key == "commands":
        return [_command(c, receiver) for c in values]
    if key in ("files_touched", "evidence"):
        return [f"- {_inline(v)}" for v in values]
    return [f"- {_plain(v)}" for v in values]


def _command(entry: dict[str, Any], receiver: str) -> str:
    code = entry["exit_code"]
    status = "exit code unknown" if code is None else f"exit {code}"
    if receiver == "codex":
        lines = [f"- {status}:", "", _fence(entry["command"], "sh")]
    else:
        lines = [f"- {status}: {_inline(entry['command'])}"]
    if entry["result"]:
        lines += ["  result:", "", _fence(entry["result"], "text")]
    return "\n".join(lines).rstrip("\n")


def _header(doc: dict[str, Any], receiver: str) -> list[str]:
    sender = _NAMES[doc["from"]]
    head = doc["head"] or "none (not a git repository, or no commit)"
    digest = doc["dirty_digest"] or "none"
    files = doc["dirty_files"]
    check = (
        "Before relying on it, run `excerpt handoff validate FILE` (or the "
        "`context_handoff_validate` tool): it says which evidence went stale, whether HEAD "
        "moved and which files changed since."
    )
    return [
        f"# Handoff from {sender} to {_NAMES[receiver]}",
        "",
        f"Schema {doc['schema']}, from `{doc['from']}` to `{doc['to']}`, created "
        f"{doc['created_at']} at HEAD `{head}` with {_dirty_count(files, digest)} "
        f"(dirty digest `{digest}`).",
        "",
        check,
        "",
    ]


def _dirty_count(files: list[Any] | None, digest: str) -> str:
    if files is None:
        return "no dirty files known" if digest == "none" else "too many dirty files to list"
    return f"{len(files)} dirty file{'s' if len(files) != 1 else ''}"


def _evidence_note(receiver: str) -> str:
    if receiver == "claude":
        return (
            "Re-read a handle's lines with the `context_retrieve` tool or `excerpt get "
            "HANDLE`; a stale handle is refused, never served as old text."
        )
    return "Re-read a handle's lines with `excerpt get HANDLE`; a stale one exits 1."


def _dirty_list(doc: dict[str, Any]) -> list[str]:
    return [
        f"- {d['state']}: {_inline(d['path'])} ({d['digest']})" for d in doc["dirty_files"] or []
    ]


def _section_claude(title: str, key: str, body: list[str]) -> list[str]:
    return [f"<{key}>", f"## {title}", "", *body, f"</{key}>", ""]


def _section_codex(title: str, key: str, body: list[str]) -> list[str]:
    return [f"## {title}", "", *body, ""]


def render_handoff(doc: dict[str, Any], receiver: str | None = None) -> str:
    """The Markdown of a valid document for ``receiver`` (default: its ``to``)."""
    who = receiver or doc["to"]
    section: Callable[[str, str, list[str]], list[str]] = (
        _section_claude if who == "claude" else _section_codex
    )
    out = _header(doc, who)
    for key, title in _TITLES.items():
        body = _items(doc, key, who)
        if key == "evidence" and doc[key]:
            body = [_evidence_note(who), "", *body]
        out += section(title, key, body)
    if doc["dirty_files"]:
        out += section("Dirty files at creation", "dirty_files", _dirty_list(doc))
    return _SURROGATE.sub(_escaped, "\n".join(out).rstrip("\n") + "\n")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"  # a file name's undecodable byte, as JSON writes it


def render_report(report: dict[str, Any]) -> str:
    """A validation report as text: the verdict, then each problem or stale item."""
    if not report["valid"]:
        lines = ["INVALID: the document does not pass excerpt.handoff/v1"]
        return "\n".join([*lines, *(f"- {e}" for e in report["errors"])]) + "\n"
    fresh = sum(1 for e in report["evidence"] if e["status"] == "fresh")
    lines = [
        ("FRESH" if report["fresh"] else "STALE")
        + f": {fresh} of {len(report['evidence'])} evidence handle(s) fresh, HEAD "
        + ("moved" if report["head"]["moved"] else "unchanged")
        + f", {len(report['dirty']['changed'])} dirty-tree change(s)"
    ]
    for item in report["stale"]:
        lines.append("- " + _stale_line(item))
    return "\n".join(lines) + "\n"


def _stale_line(item: dict[str, Any]) -> str:
    if item["kind"] == "evidence":
        moved = f" (moved to {item['moved_to']})" if item.get("moved_to") else ""
        why = f": {item['error']}" if item.get("error") else ""
        return f"evidence {item['handle']}: {item['status']}{moved}{why}"
    if item["kind"] == "head":
        return f"HEAD moved: {item['recorded']} -> {item['current']}"
    if item.get("path") is None:
        return f"dirty tree digest changed: {item['was']} -> {item['now']}"
    was, now = item["was"] or "clean", item["now"] or "clean"
    return f"dirty tree: {item['path']} ({item['state']}) {was} -> {now}"
