"""The gate's records and their two renderings: JSON (``excerpt.gate/v1``) and the terminal's.

Repository text reaches neither except as a path or a masked preview, and paths are printed
with control characters escaped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from excerpt.core.escape import escape_controls

__all__ = ["SCHEMA", "CheckResult", "GateReport", "Status", "render_text", "worst"]

SCHEMA = "excerpt.gate/v1"
Status = Literal["PASS", "WARN", "FAIL"]
_ORDER: dict[str, int] = {"PASS": 0, "WARN": 1, "FAIL": 2}
NAMES = {
    "secrets": "Secret safety",
    "schema": "Schema controls",
    "version": "Version and changelog",
    "validation": "Validation policy",
    "ownership": "Ownership",
    "convergence": "Convergence",
}


def worst(statuses: Sequence[str]) -> Status:
    """The most severe of ``statuses`` (PASS when there are none)."""
    top = max((_ORDER[s] for s in statuses), default=0)
    return ("PASS", "WARN", "FAIL")[top]


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """One check: a stable id and name, its status, a one-line summary and its details
    (each a JSON object: a path and what was found there, never a secret)."""

    id: str
    status: Status
    summary: str
    details: tuple[dict[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.id not in NAMES or self.status not in _ORDER:
            raise ValueError(f"bad check result {self.id}/{self.status}")

    @property
    def name(self) -> str:
        return NAMES[self.id]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "details": list(self.details),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class GateReport:
    """Every check of one change, against one base and one policy."""

    change: dict[str, Any]
    policy: dict[str, Any]
    checks: tuple[CheckResult, ...] = field(default_factory=tuple)

    @property
    def status(self) -> Status:
        return worst([c.status for c in self.checks])

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "status": self.status,
            "change": self.change,
            "policy": self.policy,
            "checks": [c.to_dict() for c in self.checks],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=False) + "\n"


def _detail_line(detail: dict[str, Any]) -> str:
    where = escape_controls(str(detail.get("path", "")))
    if detail.get("line"):
        where += f":{detail['line']}"
    parts = [where] if where else []
    for key in ("rule", "command", "preview", "owners", "missing", "test", "reason"):
        value = detail.get(key)
        if value in (None, "", []):
            continue
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        parts.append(
            escape_controls(f"{key}: {value}") if key != "rule" else escape_controls(str(value))
        )
    return "  ".join(parts)


def render_text(report: GateReport, *, details: int = 20) -> str:
    """The terminal rendering: a verdict line, then one line per check and its details
    (at most ``details`` per check, the rest counted)."""
    change = report.change
    what = "staged change" if change["kind"] == "staged" else f"range {change['range']}"
    lines = [
        f"excerpt gate: {report.status} — {what} against {change['base_ref']} "
        f"({str(change['base'])[:12]}), {change['files']} file(s)",
        f"policy: {report.policy['described']}",
        "",
    ]
    width = max(len(n) for n in NAMES.values())
    for check in report.checks:
        lines.append(f"{check.status:<4}  {check.name:<{width}}  {escape_controls(check.summary)}")
        for detail in check.details[:details]:
            lines.append(f"      {_detail_line(detail)}")
        if len(check.details) > details:
            lines.append(f"      … {len(check.details) - details} more (--json lists all)")
    return "\n".join(lines) + "\n"
