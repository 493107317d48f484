"""Convergence: the share of changed source files that have an associated test, in the change
or in the repository, must reach the threshold.

The repository's test association is the index's (``tests`` edges: a test importing a file or
named after it); a test in the change counts when its name points at the file or its added
lines name the file's module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from excerpt.gate.change import Change, ChangedFile
from excerpt.gate.policy import Policy
from excerpt.gate.report import CheckResult, Status
from excerpt.index.lang import by_name, is_test_path, language_of, rules_for_tests

__all__ = ["check_convergence", "is_source_path"]


# Code that is not the product's own: vendored, generated or built, or a test's helper or
# fixture (under a test directory, though not named as a test)
_NOT_PRODUCT = re.compile(
    r"(^|/)(vendor|vendored|third_party|thirdparty|node_modules|extern|external|generated|dist"
    r"|build|tests?|testing|testdata|spec|__tests__|fixtures)/"
    r"|\.min\.js$|_pb2\.py$|\.pb\.go$|\.generated\.|\.bundle\.js$"
)


def is_source_path(path: str) -> bool:
    """A file of a parsed language that is the product's own code: not a test nor a test's
    helper, not vendored or generated."""
    return (
        by_name(language_of(path)) is not None
        and not is_test_path(path)
        and not _NOT_PRODUCT.search(path)
    )


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".", 1)[0].lower()


def _named_by(test: ChangedFile, source: str) -> bool:
    rules = rules_for_tests(test.path)
    stem = _stem(source)
    if rules is not None and rules.subject(test.path) == stem:
        return True
    if (
        test.new_text is None
        or len(stem) < 3
        or stem in {"__init__", "index", "main", "mod", "lib"}
    ):
        return False
    word = re.compile(rf"\b{re.escape(stem)}\b", re.I)
    lines = test.new_text.split("\n")
    return any(word.search(lines[n - 1]) for n in test.added)


def check_convergence(
    change: Change,
    policy: Policy,
    *,
    tested: Iterable[str] | None,
    threshold: float | None,
    unavailable: str | None = None,
) -> CheckResult:
    """Convergence of ``change``; ``tested`` holds the repository's files with a test (None:
    the association could not be computed, ``unavailable`` says why)."""
    minimum = policy.rules.min_convergence if threshold is None else threshold
    if policy.severity("convergence") == "off":
        return CheckResult(id="convergence", status="PASS", summary="turned off by the base policy")
    sources = [f.path for f in change.files if f.exists and is_source_path(f.path)]
    if not sources:
        return CheckResult(id="convergence", status="PASS", summary="no source files changed")
    tests = [f for f in change.files if f.exists and is_test_path(f.path)]
    known = set(tested or ())
    details: list[dict[str, Any]] = []
    covered = 0
    for path in sources:
        in_change = next((t.path for t in tests if _named_by(t, path)), None)
        if in_change is not None:
            covered += 1
            details.append({"path": path, "test": in_change, "reason": "test in the change"})
        elif path in known:
            covered += 1
            details.append({"path": path, "reason": "test in the repository"})
        else:
            details.append({"path": path, "missing": ["test"]})
    share = covered / len(sources)
    status: Status
    summary = (
        f"{covered} of {len(sources)} changed source file(s) have a test "
        f"({share:.0%}; minimum {minimum:.0%})"
    )
    if share + 1e-9 >= minimum:
        status = "PASS"
    elif tested is None:
        status, summary = "WARN", f"{summary}; repository tests unknown: {unavailable}"
    else:
        status = "FAIL" if policy.severity("convergence") == "fail" else "WARN"
    return CheckResult(id="convergence", status=status, summary=summary, details=tuple(details))
