"""Packs, plans and retrievals as Markdown an agent reads well. Pure.

Repository text appears only inside fenced blocks; headers carry paths, line ranges,
handles and reasons. A fence is always longer than any backtick run in the text it holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from excerpt.index.languages import language_of
from excerpt.render.text import escape_controls

__all__ = ["render_get", "render_harness", "render_pack", "render_plan", "render_risk"]

_FENCE_LANG = {
    "python": "python", "javascript": "javascript", "typescript": "typescript", "tsx": "tsx",
    "go": "go", "rust": "rust", "java": "java", "c": "c", "cpp": "cpp", "csharp": "csharp",
    "ruby": "ruby", "php": "php", "kotlin": "kotlin", "swift": "swift", "scala": "scala",
    "shell": "sh", "sql": "sql", "markdown": "markdown", "json": "json", "yaml": "yaml",
    "toml": "toml", "html": "html", "css": "css", "xml": "xml", "ini": "ini",
}  # fmt: skip


_OMITTED_SHOWN = 20


def _fence(text: str, path: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{_FENCE_LANG.get(language_of(path), '')}\n{body}{fence}\n"


def _reasons(reasons: Sequence[dict[str, str]]) -> str:
    return "; ".join(f"{r['signal']}: {r['detail']}" for r in reasons)


def _omitted(omitted: Sequence[dict[str, Any]]) -> list[str]:
    lines = []
    for o in omitted:
        where = f" lines {o['start_line']}-{o['end_line']}" if "start_line" in o else ""
        need = f", needs {o['bytes_needed']} bytes" if "bytes_needed" in o else ""
        lines.append(f"- `{escape_controls(o['path'])}`{where}: {o['reason']}{need}")
    return lines


def render_pack(pack: dict[str, Any]) -> str:
    budget = pack["budget"]
    out = [
        "# Context pack",
        "",
        f"{len(pack['items'])} excerpts, {budget['used_bytes']} of {budget['bytes']} bytes;"
        f" {len(pack['omitted'])} left out. Pack `{pack['pack_id']}`.",
        "Every excerpt is exact source; `excerpt get HANDLE` re-reads it and refuses stale text.",
        "",
    ]
    if pack["graph"] and pack["graph"].get("source") == "file":
        out += [f"Graph: {pack['graph']['note']} (sha256 {pack['graph']['sha256']}).", ""]
    for item in pack["items"]:
        cut = " (truncated to fit)" if item["truncated"] else ""
        out += [
            f"## {item['rank']}. `{escape_controls(item['path'])}` lines"
            f" {item['start_line']}-{item['end_line']} ({item['kind']}{cut})",
            f"handle `{escape_controls(item['handle'])}` · {_reasons(item['reasons'])}",
            "",
            _fence(item["text"], item["path"]),
        ]
    for warning in pack["warnings"]:
        out.append(f"> warning: {warning['code']} in excerpt {warning['rank']}")
    if pack["omitted"]:
        shown = pack["omitted"][:_OMITTED_SHOWN]
        rest = len(pack["omitted"]) - len(shown)
        more = [f"- … and {rest} more (all are in the JSON pack)"] if rest > 0 else []
        out += ["", "## Left out", "", *_omitted(shown), *more]
    return "\n".join(out).rstrip("\n") + "\n"


def render_plan(plan: dict[str, Any]) -> str:
    out = [
        "# Plan",
        "",
        f"{len(plan['candidates'])} candidate regions; suggested budget"
        f" {plan['suggested_budget']} bytes.",
        "",
        "| # | path | lines | bytes | score | why |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in plan["candidates"]:
        path = escape_controls(c["path"]).replace("|", "\\|")
        out.append(
            f"| {c['rank']} | `{path}` | {c['start_line']}-{c['end_line']} | {c['bytes']}"
            f" | {c['score']} | {_reasons(c['reasons'])} |"
        )
    if plan["omitted"]:
        out += ["", "## Left out", "", *_omitted(plan["omitted"])]
    return "\n".join(out) + "\n"


def render_get(results: Sequence[dict[str, Any]]) -> str:
    out = []
    for r in results:
        handle = escape_controls(r["handle"])
        if r["status"] == "fresh":
            out += [f"## `{handle}` (fresh)", "", _fence(r["text"], r["path"] or "")]
        elif r["status"] == "stale":
            moved = (
                f"; the same lines are now at `{escape_controls(r['moved_to'])}`"
                if r["moved_to"]
                else ""
            )
            out += [f"## `{handle}` (stale: the file changed since the handle was made{moved})", ""]
        else:
            why = f": {r['error']}" if r.get("error") else ""
            out += [f"## `{handle}` ({r['status']}{why})", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _code(text: str) -> str:
    """An inline code span that survives backticks inside ``text``."""
    text = escape_controls(text)
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def render_harness(doc: dict[str, Any]) -> str:
    """Inferred setup and validate commands, grouped by the directory they run from."""
    commands = [*doc["setup"], *doc["validate"]]
    if not commands:
        lines = ["No setup or validation command could be inferred."]
        return "\n".join(lines + [f"- {escape_controls(n)}" for n in doc.get("notes", [])]) + "\n"
    out = ["# How this repository is set up and validated (inferred, nothing was run)"]
    directories = sorted({c["directory"] for c in commands}, key=lambda d: (d != ".", d))
    for directory in directories:
        out += ["", f"## {_code(directory) if directory != '.' else 'repository root'}"]
        for group in ("setup", "validate"):
            rows = [c for c in doc[group] if c["directory"] == directory]
            if rows:
                out.append(f"{group}:")
            for c in rows:
                evidence = ", ".join(escape_controls(e) for e in c["evidence"])
                out.append(
                    f"- {_code(c['command'])} — {c['kind']}, {c['tool']}, confidence "
                    f"{c['confidence']:.1f} ({evidence})"
                )
    if doc.get("notes"):
        out += ["", *[f"Note: {escape_controls(n)}" for n in doc["notes"]]]
    return "\n".join(out) + "\n"


def render_risk(doc: dict[str, Any]) -> str:
    """Risk concepts of task text, or of each path with its gate and secret flags."""
    if "query" in doc:
        return f"query: {', '.join(doc['query']['concepts']) or '(no risk concepts)'}\n"
    lines = []
    for path, risk in doc.get("paths", {}).items():
        flags = [
            n for n, on in (("gate risk", risk["gate_risk"]), ("secret", risk["secret"])) if on
        ]
        shown = ", ".join(risk["concepts"]) or "(no risk concepts)"
        suffix = f" [{', '.join(flags)}]" if flags else ""
        lines.append(f"{escape_controls(path)}: {shown}{suffix}")
    return "\n".join(lines) + "\n"
