"""Secret safety: secret material added to the tree, by path or by content.

FAIL: a path on the sensitive deny list added, changed or renamed in; a symlink whose target is
secret material or leaves the repository; a FAIL-level detector finding on an added line.
WARN: a WARN-level finding (a generic keyword rule); a finding in a test fixture (by its path)
or in a path the policy allows, and a deny-listed path the policy allows; a binary or
oversized file (not scanned). A deletion is never a leak.
"""

from __future__ import annotations

import posixpath
from typing import Any

from excerpt.core.secrets import scan_text
from excerpt.discover.ignore import IgnoreRules
from excerpt.gate.change import Change, ChangedFile
from excerpt.gate.policy import Policy
from excerpt.gate.report import CheckResult, Status, worst
from excerpt.index.lang import by_name, language_of
from excerpt.risk import is_secret_path

__all__ = ["check_secrets", "is_test_fixture"]

# Directories that say their files are test material
_FIXTURE_DIRS = frozenset({
    "fixtures", "fixture", "__fixtures__", "testdata", "test_data", "test-data", "certdata",
    "test-fixtures", "test_fixtures", "__snapshots__", "snapshots",
})  # fmt: skip
_TEST_DIRS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__"})


def is_test_fixture(path: str) -> bool:
    """A file that is test material by its path: under a fixture directory (``fixtures/``,
    ``testdata/``, ``certdata/``…), or a data file (not code of a parsed language) under a
    test directory. A key there is a test key far more often than a leak: the gate reports
    it, as WARN. A test's own code with a key in it stays FAIL."""
    parts = path.lower().split("/")
    dirs = parts[:-1]
    if any(d in _FIXTURE_DIRS for d in dirs):
        return True
    return any(d in _TEST_DIRS for d in dirs) and by_name(language_of(path)) is None


def _allowed(policy: Policy, path: str) -> bool:
    globs = policy.rules.secrets.allow_paths
    if not globs:
        return False
    return IgnoreRules.from_lines(globs).ignores(path)


_POLICY_ALLOWS = "a path the base policy allows"


def _allowance(policy: Policy, path: str) -> str | None:
    """Why findings in ``path`` are reported as WARN, or None."""
    if _allowed(policy, path):
        return _POLICY_ALLOWS
    if is_test_fixture(path):
        return "a test fixture"
    return None


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


def _content(file: ChangedFile, salt: bytes | None, allowed: str | None) -> list[dict[str, Any]]:
    if file.new_text is None:
        return []
    added = file.added
    out = []
    for finding in scan_text(file.new_text, salt=salt):
        lines = range(finding.start_line, finding.end_line + 1)
        if not any(n in added for n in lines):
            continue  # already in the base: not this change's leak
        detail = {
            "path": file.path,
            "line": finding.start_line,
            "rule": finding.rule,
            "severity": "warn" if allowed else finding.severity,
            "preview": finding.preview,
            "fingerprint": finding.fingerprint,
        }
        if allowed and finding.severity == "fail":
            detail["reason"] = allowed
        out.append(detail)
    return out


def _path_details(file: ChangedFile, allowed: str | None) -> list[dict[str, Any]]:
    if is_secret_path(file.path):
        if allowed == _POLICY_ALLOWS:
            return [{"path": file.path, "rule": "sensitive-path", "severity": "warn",
                     "reason": f"secret-like file added or changed; {allowed}"}]  # fmt: skip
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
        allowed = _allowance(policy, file.path)
        details += _path_details(file, allowed)
        if file.kind != "file":
            continue
        if file.binary or (file.new_text is None and file.new_size):
            reason = "binary file: not scanned" if file.binary else "too large: not scanned"
            details.append({"path": file.path, "rule": "not-scanned", "severity": "warn",
                            "reason": reason})  # fmt: skip
            continue
        details += _content(file, salt, allowed)
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
