"""Ownership: paths that ``CODEOWNERS`` (at the base commit) assigns to owners need their
review; a local run cannot certify them. Parsing is the ``codeowners`` package's.
"""

from __future__ import annotations

from typing import Any

from excerpt.gate.change import Change
from excerpt.gate.policy import Policy
from excerpt.gate.report import CheckResult, Status

__all__ = ["CODEOWNERS_PATHS", "check_ownership"]

# GitHub's order: the first that exists is the one in force
CODEOWNERS_PATHS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS")
_MAX_LINE = 500  # a longer pattern line is skipped: its regex could be slow


def check_ownership(
    change: Change, policy: Policy, codeowners: tuple[str, str] | None
) -> CheckResult:
    """Ownership of ``change``'s paths by ``codeowners`` (``(path, text)`` at the base)."""
    if policy.severity("ownership") == "off":
        return CheckResult(id="ownership", status="PASS", summary="turned off by the base policy")
    if codeowners is None:
        return CheckResult(
            id="ownership", status="PASS", summary="no CODEOWNERS at the base commit"
        )
    where, text = codeowners
    from codeowners import CodeOwners

    lines = [line for line in text.splitlines() if len(line) <= _MAX_LINE]
    try:
        owners = CodeOwners("\n".join(lines))
    except ValueError as exc:
        return CheckResult(
            id="ownership", status="WARN", summary=f"{where} at the base cannot be read: {exc}"
        )
    details: list[dict[str, Any]] = []
    for file in change.files:
        names = [name for _kind, name in owners.of(file.path)]
        if names:
            details.append({"path": file.path, "owners": names})
    if not details:
        summary = f"no changed path is owned in {where}"
        return CheckResult(id="ownership", status="PASS", summary=summary)
    status: Status = "FAIL" if policy.severity("ownership") == "fail" else "WARN"
    everyone = sorted({n for d in details for n in d["owners"]})
    summary = (
        f"{len(details)} changed path(s) owned in {where}: review by "
        + ", ".join(everyone[:5])
        + (f" and {len(everyone) - 5} more" if len(everyone) > 5 else "")
        + " needed"
    )
    return CheckResult(id="ownership", status=status, summary=summary, details=tuple(details))
