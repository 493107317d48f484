"""Secret safety: secret material added to the tree, by path or by content.

FAIL: a path on the sensitive deny list added, changed or renamed in; a symlink whose target is
secret material or leaves the repository; a FAIL-level detector finding on an added line.
WARN: a WARN-level finding (a generic keyword rule), a finding in a path the policy allows, a
binary or oversized file (not scanned). A deletion is never a leak.
"""

from __future__ import annotations

import posixpath
from typing import Any

from excerpt.core.secrets import scan_text
from excerpt.gate.change import Change, ChangedFile
from excerpt.gate.policy import Policy
from excerpt.gate.report import CheckResult, Status, worst
from excerpt.risk import is_secret_path

__all__ = ["check_secrets"]


def _allowed(policy: Policy, path: str) -> bool:
    globs = policy.rules.secrets.allow_paths
    if not globs:
        return False
    import pathspec

    return pathspec.PathSpec.from_lines("gitignore", globs).match_file(path)


def _symlink_problem(file: ChangedFile) -> str | None:
    target = (file.new_text or "").strip()
    if not target:
        return None
    if target.startswith(("/", "~")):
        return "symlink to a path outside the repository"
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(file.path), target))
    if joined == ".." or joined.startswith("../"):
        return "symlink to a path outside the repository"
    if is_secret_path(joined):
        return "symlink to secret material"
    return None


def _content(file: ChangedFile, salt: bytes | None, allowed: bool) -> list[dict[str, Any]]:
    if file.new_text is None:
        return []
    added = file.added_lines()
    out = []
    for finding in scan_text(file.new_text, salt=salt):
        lines = range(finding.start_line, finding.end_line + 1)
        if not any(n in added for n in lines):
            continue  # already in the base: not this change's leak
        severity = "warn" if allowed else finding.severity
        out.append(
            {
                "path": file.path,
                "line": finding.start_line,
                "rule": finding.rule,
                "severity": severity,
                "preview": finding.preview,
                "fingerprint": finding.fingerprint,
            }
        )
    return out


def _path_details(file: ChangedFile) -> list[dict[str, Any]]:
    if is_secret_path(file.path):
        return [{"path": file.path, "rule": "sensitive-path", "severity": "fail",
                 "reason": "secret-like file added or changed"}]  # fmt: skip
    if file.kind == "symlink":
        problem = _symlink_problem(file)
        if problem is not None:
            return [{"path": file.path, "rule": "symlink-target", "severity": "fail",
                     "reason": problem}]  # fmt: skip
    return []


def check_secrets(change: Change, policy: Policy, salt: bytes | None) -> CheckResult:
    """The Secret safety check of ``change``."""
    details: list[dict[str, Any]] = []
    for file in change.files:
        if not file.exists or file.kind == "submodule":
            continue
        details += _path_details(file)
        if file.kind != "file":
            continue
        if file.binary or (file.new_text is None and file.new_size):
            reason = "binary file: not scanned" if file.binary else "too large: not scanned"
            details.append({"path": file.path, "rule": "not-scanned", "severity": "warn",
                            "reason": reason})  # fmt: skip
            continue
        details += _content(file, salt, _allowed(policy, file.path))
    level = policy.severity("secrets")
    statuses = [_status(d["severity"], level) for d in details]
    status = worst(statuses)
    fails = sum(s == "FAIL" for s in statuses)
    warns = sum(s == "WARN" for s in statuses)
    if not details:
        summary = (
            f"no secret material in {sum(f.exists for f in change.files)} added or changed file(s)"
        )
    else:
        files = len({d["path"] for d in details})
        summary = f"{fails} blocking and {warns} warning finding(s) in {files} file(s)"
    return CheckResult(id="secrets", status=status, summary=summary, details=tuple(details))


def _status(severity: str, level: str) -> Status:
    if severity == "fail":
        return "FAIL" if level == "fail" else "WARN"
    return "WARN"
