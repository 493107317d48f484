"""Human renderings of reports. Pure."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from excerpt.core.escape import escape_controls

if TYPE_CHECKING:
    from excerpt.index.build import IndexReport

__all__ = ["compact_json", "render_index", "to_json"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def to_json(obj: Any) -> str:
    """Stable, human-diffable JSON (sorted keys, two-space indent, trailing newline).

    Lone surrogates (undecodable bytes of a file name) are written as JSON ``\\uXXXX``
    escapes, so the output is always valid UTF-8.
    """
    text = json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def compact_json(obj: Any) -> str:
    """Canonical compact JSON (sorted keys, no spaces), lone surrogates escaped."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _counts(counts: dict[str, int]) -> str:
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {v}" for k, v in ordered) or "none"


def render_index(report: IndexReport, omitted_paths: list[tuple[str, str]] | None = None) -> str:
    """The index report as short Markdown."""
    lines = [
        f"Indexed {report.files_indexed} of {report.files_discovered} discovered files"
        f" in {report.seconds:.2f} s ({report.files_read} read, {report.files_removed} removed).",
        f"- symbols: {report.symbols}; graph edges: {report.edges}",
        f"- languages: {_counts(report.languages)}",
        f"- omitted: {_counts(report.omitted)}",
    ]
    if report.discovery_truncated:
        lines.append("- discovery stopped at a limit: some files were not considered")
    if report.rebuilt:
        lines.append(f"- the previous cache was discarded and rebuilt: {report.rebuilt}")
    if omitted_paths:
        lines.append("")
        lines.append("Omitted paths:")
        lines.extend(f"- {escape_controls(path)} ({reason})" for path, reason in omitted_paths)
    return "\n".join(lines) + "\n"
