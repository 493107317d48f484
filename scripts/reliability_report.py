"""Write docs/reliability.md from a run of the test suite: each input class, its cases, the outcome.

Usage: python scripts/reliability_report.py [--check] [--output PATH] [--from-json PATH]
                                            [--keep-json PATH] [-- PYTEST_ARGS...]

Runs ``python -m pytest -q -p no:cacheprovider --reliability-report=<tmp> PYTEST_ARGS`` on
this checkout (its ``src`` first on ``PYTHONPATH``, the ``ci`` hypothesis profile), then
renders the JSON the test plugin (tests/conftest.py) wrote: one table per group of rows
(tests/reliability_rows.py). The page holds no date and no machine path: the same results
give the same bytes. ``--check`` compares with the file instead of writing it (exit 1 when
they differ); ``--from-json`` renders a saved run without running the suite.
Exit status: 0 written (or unchanged), 1 tests failed (the page says which) or ``--check``
found a difference, else pytest's own status (no page: collection or usage error).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "docs" / "reliability.md"
SCRIPT = "python scripts/reliability_report.py"
# in one process (-n 0): the markers and outcomes are read where the tests run
PYTEST = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0"]
RENDERABLE = (0, 1, 5)  # pytest: all passed, some failed, nothing collected


def run_suite(pytest_args: Sequence[str], json_path: Path) -> int:
    """Run the suite on this checkout, writing the plugin's JSON to ``json_path``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    env["HYPOTHESIS_PROFILE"] = "ci"  # the case counts of hypothesis tests are its examples
    argv = [sys.executable, *PYTEST, f"--reliability-report={json_path}", *pytest_args]
    return subprocess.run(argv, cwd=ROOT, env=env, check=False).returncode


# -- rendering ------------------------------------------------------------------------------


def cell(text: str) -> str:
    """``text`` as one Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def short_name(nodeid: str) -> str:
    """``tests/test_get.py::test_x[a-b]`` → ``test_get.py::test_x``."""
    return nodeid.split("[", 1)[0].removeprefix("tests/")


def names_cell(tests: Sequence[dict[str, Any]]) -> str:
    counts = Counter(short_name(t["nodeid"]) for t in tests)
    shown = [f"`{name}`" + (f" x{n}" if n > 1 else "") for name, n in sorted(counts.items())]
    return "<br>".join(cell(s) for s in shown)


def cases_cell(present: int, need: int | None) -> str:
    if need is None:
        return f"{present:,}"
    text = f"{present:,} of {need:,}"
    return f"**{text}**" if present < need else text


def outcome(tests: Sequence[dict[str, Any]]) -> str:
    """pass, FAIL n, skipped: reason, or not covered (plus what did not run)."""
    if not tests:
        return "not covered"
    by = Counter(t["outcome"] for t in tests)
    reasons = sorted({t["reason"] for t in tests if t["outcome"] == "skipped"})
    parts = []
    if by["failed"]:
        parts.append(f"FAIL {by['failed']}")
    elif by["passed"]:
        parts.append("pass")
    if by["skipped"]:
        why = "; ".join(reasons)
        parts.append(f"skipped: {why}" if not parts else f"{by['skipped']} skipped: {why}")
    if by["not run"]:
        parts.append(f"{by['not run']} not run")
    return ", ".join(parts)


def row_status(tests: Sequence[dict[str, Any]]) -> str:
    """The row's total: one of pass, FAIL, skipped, not covered."""
    text = outcome(tests)
    if text.startswith("FAIL") or "not run" in text:
        return "FAIL"
    return text.split(":", 1)[0].split(",", 1)[0]


def present_cases(tests: Iterable[dict[str, Any]]) -> int:
    """Cases that ran (passed or failed); skipped tests try none."""
    return sum(t["cases"] for t in tests if t["outcome"] in ("passed", "failed"))


def render(doc: dict[str, Any], pytest_args: Sequence[str] = ()) -> str:
    rows = doc["rows"]
    by_row: dict[str, list[dict[str, Any]]] = {r["id"]: [] for r in rows}
    for test in doc["tests"]:
        by_row[test["row"]].append(test)
    statuses = Counter(row_status(by_row[r["id"]]) for r in rows)
    below = [
        r["id"]
        for r in rows
        if by_row[r["id"]] and r["need"] is not None and present_cases(by_row[r["id"]]) < r["need"]
    ]
    command = shlex.join([*SCRIPT.split(), *(["--", *pytest_args] if pytest_args else [])])
    items = {t["nodeid"] for t in doc["tests"]}
    run = shlex.join([*PYTEST, "--reliability-report=PATH", *pytest_args])
    out = [
        "# Reliability",
        "",
        "<!-- Generated from the test run by scripts/reliability_report.py: do not edit. -->",
        "",
        "What excerpt does with each class of hostile or broken input, and how many inputs of",
        "each class the test suite tries. Each test names the class it covers with",
        "`@pytest.mark.reliability(row, cases=N)` (the rows: `tests/reliability_rows.py`).",
        "This page is one run of the suite, made by",
        "",
        f"    {command}",
        "",
        f"which runs `python {run}` (`--check` compares with this page instead of writing it).",
        "",
        "**Cases**: the inputs tried by the tests that ran (a hypothesis test counts its",
        "examples, a parametrised test its instances), of the fewest the row asks for; bold",
        "where fewer ran.",
        "",
        "## Totals",
        "",
        "| Rows | Count |",
        "|---|---:|",
        *(f"| {name} | {statuses[name]} |" for name in ("pass", "FAIL", "skipped", "not covered")),
        f"| covered, with fewer cases than asked | {len(below)} |",
        f"| all | {len(rows)} |",
        "",
        f"{len(items):,} tagged tests, {present_cases(doc['tests']):,} cases tried.",
    ]
    for group in doc["groups"]:
        members = [r for r in rows if r["group"] == group["id"]]
        out += [
            "",
            f"## {group['id']}. {group['title']}",
            "",
            "| Row | Input class | Expected | Tests | Cases | Outcome |",
            "|---|---|---|---|---:|---|",
        ]
        for r in members:
            tests = by_row[r["id"]]
            cells = [
                r["id"],
                cell(r["title"]),
                cell(r["expected"]),
                names_cell(tests),
                cases_cell(present_cases(tests), r["need"]),
                cell(outcome(tests)),
            ]
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


# -- command line ---------------------------------------------------------------------------


def parse_args(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="the page")
    parser.add_argument("--from-json", type=Path, help="render a saved run, run nothing")
    parser.add_argument("--keep-json", type=Path, help="also keep the run's JSON here")
    args, rest = parser.parse_known_args(argv)
    return args, rest[1:] if rest[:1] == ["--"] else rest


def main(argv: Sequence[str] | None = None) -> int:
    args, pytest_args = parse_args(sys.argv[1:] if argv is None else argv)
    status = 0
    if args.from_json is not None:
        doc = json.loads(args.from_json.read_text(encoding="utf-8"))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "reliability.json"
            status = run_suite(pytest_args, path)
            if status not in RENDERABLE or not path.exists():
                print(f"reliability_report: pytest exited {status}; no page", file=sys.stderr)
                return status or 1
            doc = json.loads(path.read_text(encoding="utf-8"))
            if args.keep_json is not None:
                args.keep_json.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    page = render(doc, pytest_args)
    failed = 1 if status == 1 else 0
    if args.check:
        old = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if old == page:
            return failed
        sys.stdout.writelines(
            difflib.unified_diff(
                old.splitlines(keepends=True), page.splitlines(keepends=True),
                str(args.output), "from this run",
            )
        )  # fmt: skip
        print(f"reliability_report: {args.output} is out of date", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(page, encoding="utf-8")
    print(f"reliability_report: wrote {args.output}", file=sys.stderr)
    return failed


if __name__ == "__main__":
    sys.exit(main())
