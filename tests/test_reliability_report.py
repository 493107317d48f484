"""docs/reliability.md: the rows, the pytest plugin that records a run, the page made of it."""

from __future__ import annotations

import copy
import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import reliability_rows
from excerpt.core.secrets import RULES
from excerpt.mcp.tools import TOOLS

TESTS = Path(__file__).resolve().parent
SCRIPTS = TESTS.parent / "scripts"


def _load(name: str) -> ModuleType:
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module(name)


report = _load("reliability_report")


# -- the rows -------------------------------------------------------------------------------


def test_the_rows_are_every_matrix_row_then_the_seven_further_classes() -> None:
    ids = [row.id for row in reliability_rows.ROWS]
    groups = [(1, 12), (13, 22), (23, 28), (29, 35), (36, 41), (42, 48), (49, 54), (55, 57)]
    matrix = [f"B{g}.{n}" for g, (lo, hi) in enumerate(groups, 1) for n in range(lo, hi + 1)]
    assert ids == matrix + [f"T{n}" for n in range(1, 8)]
    assert {row.group for row in reliability_rows.ROWS} == set(reliability_rows.GROUPS)


def test_counts_given_per_rule_or_per_tool_follow_the_code() -> None:
    assert 3 * len(RULES) == reliability_rows.RULE_CASES
    assert len(TOOLS) == reliability_rows.TOOL_COUNT


# -- the plugin, run on a small suite of its own ----------------------------------------------

SUITE = """
import pytest

@pytest.mark.reliability("B1.1", cases=2)
def test_passes():
    pass

@pytest.mark.reliability("B2.13", ids=("empty",))
@pytest.mark.reliability("B2.14")
@pytest.mark.parametrize("n", [1], ids=["one"])
@pytest.mark.parametrize("data", [b"", b"\\r\\n"], ids=["empty", "crlf"])
def test_param(data, n):
    pass

@pytest.mark.reliability("T1", cases=3)
def test_fails():
    assert False

@pytest.mark.reliability("T2")
def test_skips():
    pytest.skip("no such tool here")

def test_untagged():
    pass
"""


def _pytest(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_suite.py").write_text(textwrap.dedent(source), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    reliability(row, cases=1): an input class\n", encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the plugin alone: a fifth of the start-up
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_the_plugin_records_each_tagged_instance_with_its_outcome(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    ran = _pytest(tmp_path, SUITE, f"--reliability-report={out}")
    assert ran.returncode == 1, ran.stdout + ran.stderr  # test_fails fails
    doc = json.loads(out.read_text(encoding="utf-8"))
    got = [(t["nodeid"], t["row"], t["cases"], t["outcome"], t["reason"]) for t in doc["tests"]]
    assert got == [
        ("test_suite.py::test_passes", "B1.1", 2, "passed", ""),
        ("test_suite.py::test_param[empty-one]", "B2.13", 1, "passed", ""),  # by one id
        ("test_suite.py::test_param[crlf-one]", "B2.14", 1, "passed", ""),
        ("test_suite.py::test_param[empty-one]", "B2.14", 1, "passed", ""),
        ("test_suite.py::test_fails", "T1", 3, "failed", ""),
        ("test_suite.py::test_skips", "T2", 1, "skipped", "no such tool here"),
    ]
    assert [r["id"] for r in doc["rows"]] == [r.id for r in reliability_rows.ROWS]


def test_a_deselected_test_is_left_out_and_nothing_is_written_without_the_option(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run.json"
    ran = _pytest(tmp_path, SUITE, f"--reliability-report={out}", "-k", "passes")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert [t["nodeid"] for t in json.loads(out.read_text(encoding="utf-8"))["tests"]] == [
        "test_suite.py::test_passes"
    ]
    out.unlink()
    before = sorted(p.name for p in tmp_path.iterdir())
    assert _pytest(tmp_path, SUITE, "-k", "passes").returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize(
    ("marker", "says"),
    [
        pytest.param('"B1.99"', "unknown reliability row 'B1.99'", id="unknown-row"),
        pytest.param('"B1.1", cases=0', "cases must be a positive integer", id="zero-cases"),
        pytest.param('"B1.1", ids=("nope",)', "names id 'nope'", id="unknown-id"),
    ],
)
def test_a_marker_naming_no_row_or_instance_is_a_collection_error(
    tmp_path: Path, marker: str, says: str
) -> None:
    source = f"""
    import pytest

    @pytest.mark.reliability({marker})
    @pytest.mark.parametrize("x", [1], ids=["one"])
    def test_it(x):
        pass
    """
    ran = _pytest(tmp_path, source)
    assert ran.returncode == 2, ran.stdout + ran.stderr  # interrupted: errors during collection
    assert "ERROR collecting test_suite.py" in ran.stdout
    assert says in ran.stdout


# -- rendering --------------------------------------------------------------------------------

ROWS = [
    {"id": "B1.1", "group": "B1", "title": "A link | out", "expected": "Refused", "need": 2},
    {"id": "B1.2", "group": "B1", "title": "A FIFO", "expected": "Not opened", "need": 4},
    {"id": "B1.3", "group": "B1", "title": "A loop", "expected": "Omitted", "need": None},
    {"id": "T1", "group": "T", "title": "Long tasks", "expected": "Linear", "need": None},
    {"id": "T2", "group": "T", "title": "Deep files", "expected": "Bounded", "need": None},
]


def _test(nodeid: str, row: str, cases: int, outcome: str, reason: str = "") -> dict[str, Any]:
    return {"nodeid": nodeid, "row": row, "cases": cases, "outcome": outcome, "reason": reason}


RUN: dict[str, Any] = {
    "format": "excerpt.reliability/v1",
    "groups": [{"id": "B1", "title": "Files"}, {"id": "T", "title": "Beyond"}],
    "rows": ROWS,
    "tests": [
        _test("tests/test_a.py::test_link[x]", "B1.1", 1, "passed"),
        _test("tests/test_a.py::test_link[y]", "B1.1", 1, "passed"),
        _test("tests/test_a.py::test_fifo", "B1.2", 3, "passed"),
        _test("tests/test_b.py::test_fifo_too", "B1.2", 5, "skipped", "needs root"),
        _test("tests/test_c.py::test_long", "T1", 200, "failed"),
        _test("tests/test_c.py::test_long2", "T1", 1, "passed"),
        _test("tests/test_c.py::test_deep", "T2", 1, "skipped", "no tree-sitter"),
    ],
}


def _row_line(page: str, row: str) -> list[str]:
    line = next(line for line in page.splitlines() if line.startswith(f"| {row} |"))
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def test_each_row_shows_its_tests_cases_and_outcome() -> None:
    page = report.render(RUN)
    assert _row_line(page, "B1.1") == [
        "B1.1", "A link \\| out", "Refused", "`test_a.py::test_link` x2", "2 of 2", "pass",
    ]  # fmt: skip
    fifo = _row_line(page, "B1.2")
    assert fifo[3] == "`test_a.py::test_fifo`<br>`test_b.py::test_fifo_too`"
    assert fifo[4:] == ["**3 of 4**", "pass, 1 skipped: needs root"]  # skipped tries nothing
    assert _row_line(page, "B1.3")[3:] == ["", "0", "not covered"]
    assert _row_line(page, "T1")[4:] == ["201", "FAIL 1"]
    assert _row_line(page, "T2")[4:] == ["0", "skipped: no tree-sitter"]
    assert "## B1. Files" in page and "## T. Beyond" in page


def test_the_totals_count_rows_by_outcome_and_rows_short_of_their_count() -> None:
    page = report.render(RUN)
    names = ("pass", "FAIL", "skipped", "not covered", "covered, with fewer cases than asked")
    assert dict(_row_line(page, name) for name in names) == {
        "pass": "2",
        "FAIL": "1",
        "skipped": "1",
        "not covered": "1",
        "covered, with fewer cases than asked": "1",
    }
    assert "7 tagged tests, 206 cases tried." in page


def test_the_page_is_the_same_bytes_for_the_same_results_in_any_order() -> None:
    shuffled = copy.deepcopy(RUN)
    shuffled["tests"].reverse()
    page = report.render(RUN, ["-m", "not slow"])
    assert page == report.render(shuffled, ["-m", "not slow"])
    assert "python scripts/reliability_report.py -- -m 'not slow'" in page
    assert not re.search(r"20\d\d-\d\d-\d\d|/tmp/|/root/", page)  # no date, no machine path


def test_check_mode_reports_a_stale_page_and_accepts_a_current_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved, page = tmp_path / "run.json", tmp_path / "reliability.md"
    saved.write_text(json.dumps(RUN), encoding="utf-8")
    common = ["--from-json", str(saved), "--output", str(page)]
    assert report.main([*common, "--check"]) == 1  # no page yet
    assert report.main(common) == 0
    assert page.read_text(encoding="utf-8") == report.render(RUN)
    assert report.main([*common, "--check"]) == 0
    page.write_text(page.read_text(encoding="utf-8").replace("FAIL 1", "pass"), encoding="utf-8")
    capsys.readouterr()
    assert report.main([*common, "--check"]) == 1
    assert "+| T1 |" in capsys.readouterr().out
