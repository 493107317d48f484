"""Harness and risk reports as Markdown. Pure. (Packs, plans and retrievals: ``packs``.)"""

from __future__ import annotations

import re
from typing import Any

from excerpt.core.escape import escape_controls

__all__ = ["render_harness", "render_risk"]


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
