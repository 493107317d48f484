"""Lines of a test run that report a test that passed (or was skipped, or failed as
expected): pytest ``-v``, unittest ``-v``, ``go test -v``, ``cargo test``, Jest, Mocha and
Vitest, Maven Surefire's all-clear counts. Such a line is never a signal, whatever the
test's name says (``test_error_is_raised PASSED`` reports no error); a failing test's line
is not one of them and stays.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["describe", "quiet_results"]

_PYTEST = re.compile(
    r"^(?:\[gw\d+\] \[\s*\d+%\] (?P<o1>PASSED|SKIPPED|XFAIL) (?P<n1>\S+?::\S.*)"
    r"|(?P<n2>\S+?::\S.*?) (?P<o2>PASSED|SKIPPED|XFAIL)(?: \(.*\))?(?:[ \t]+\[\s*\d+%\])?)"
    r"[ \t]*$"
)
_OTHERS = [
    (re.compile(r"^\w+ \([\w.]+\)(?: \S.*)? \.\.\. (?P<o>ok|skipped\b.*|expected failure)$"), ""),
    (re.compile(r"^[ \t]*--- (?P<o>PASS|SKIP): \S+ \([\d.]+m?s\)$"), ""),
    (re.compile(r"^=== (?:RUN|PAUSE|CONT|NAME)[ \t]+\S+$"), "run"),
    (re.compile(r"^(?P<o>ok)[ \t]+\S+[ \t]+(?:[\d.]+m?s|\(cached\))"), ""),
    (re.compile(r"^test \S+ \.\.\. (?P<o>ok|ignored)$"), ""),
    (re.compile(r"^[ \t]*[✓✔√] \S.*$"), "passed"),
    (re.compile(r"^[ \t]*○ (?:skipped|todo) \S.*$"), "skipped"),
    (
        re.compile(r"^(?:\[INFO\] )?Tests run: \d+, Failures: 0, Errors: 0, Skipped: \d+.*$"),
        "passed",
    ),
]
_OUTCOME = {
    "PASSED": "passed", "ok": "passed", "PASS": "passed", "SKIPPED": "skipped",
    "SKIP": "skipped", "ignored": "skipped", "XFAIL": "xfailed",
    "expected failure": "xfailed",
}  # fmt: skip


def quiet_results(lines: Sequence[str]) -> list[tuple[str, str] | None]:
    """For each line: (outcome, file) when it reports a test that passed, was skipped or
    failed as expected (``file`` the test's file when the line names one, else ""); else
    None."""
    out: list[tuple[str, str] | None] = []
    for line in lines:
        out.append(_result(line))
    return out


def _result(line: str) -> tuple[str, str] | None:
    if "::" in line:
        m = _PYTEST.match(line)
        if m:
            node = m.group("n1") or m.group("n2")
            outcome = m.group("o1") or m.group("o2")
            return _OUTCOME[outcome], node.split("::", 1)[0]
    for pattern, fixed in _OTHERS:
        m = pattern.match(line)
        if m:
            if fixed:
                return fixed, ""
            word = m.group("o")
            return _OUTCOME.get(word, "skipped" if word.startswith("skipped") else "passed"), ""
    return None


def describe(results: Sequence[tuple[str, str]], limit: int = 12) -> str:
    """``results`` counted: "410 passed, 2 skipped: tests/a.py 200, tests/b.py 212"."""
    outcomes = Counter(outcome for outcome, _ in results if outcome != "run")
    head = ", ".join(f"{n:,} {o}" for o, n in sorted(outcomes.items(), key=lambda x: -x[1]))
    files = Counter(path for _, path in results if path)
    if not files:
        return head or f"{len(results):,} test progress lines"
    listed = ", ".join(f"{path} {n:,}" for path, n in list(files.items())[:limit])
    more = f", and {len(files) - limit:,} more files" if len(files) > limit else ""
    return f"{head} in {listed}{more}"
