"""The evaluation framework: metrics, floors, the broken-ranker double, reports, README."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from excerpt.cli import main
from excerpt.deliver import build_pack
from excerpt.evals import suites
from excerpt.evals.metrics import line_coverage, mrr, precision_at, recall_at
from excerpt.pack import PackRequest

README = Path(__file__).resolve().parent.parent / "docs" / "evaluation.md"  # (its baseline table)


@pytest.mark.parametrize(
    ("ranked", "relevant", "k", "precision", "recall", "reciprocal"),
    [
        pytest.param(["a", "b", "c"], {"a"}, 5, 1 / 3, 1.0, 1.0, id="first-of-three"),
        pytest.param(["x", "a"], {"a", "b"}, 5, 1 / 2, 1 / 2, 1 / 2, id="second-half-found"),
        pytest.param(["x", "y", "z", "a"], {"a"}, 3, 0.0, 0.0, 1 / 4, id="outside-top-k"),
        pytest.param([], {"a"}, 5, 0.0, 0.0, 0.0, id="nothing-returned"),
    ],
)
def test_retrieval_metrics_use_the_returned_count_as_denominator(
    ranked: list[str],
    relevant: set[str],
    k: int,
    precision: float,
    recall: float,
    reciprocal: float,
) -> None:
    assert precision_at(ranked, relevant, k) == pytest.approx(precision)
    assert recall_at(ranked, relevant, k) == pytest.approx(recall)
    assert mrr(ranked, relevant) == pytest.approx(reciprocal)


def test_line_coverage_counts_expected_lines_inside_served_ranges() -> None:
    expected = {"a.py": [[1, 4]], "b.py": [[10, 10]]}
    assert line_coverage(expected, [("a.py", 3, 9)]) == pytest.approx(2 / 5)
    assert line_coverage(expected, [("a.py", 1, 4), ("b.py", 5, 12)]) == 1.0
    assert line_coverage(expected, [("c.py", 1, 99)]) == 0.0


def _broken_packer(request: PackRequest) -> dict[str, Any]:
    """A ranker that ignores the task: whatever a meaningless query returns."""
    blind = PackRequest(
        repo=request.repo, task="zzzz qqqq", budget=request.budget, cache_dir=request.cache_dir
    )
    return dict(build_pack(blind).pack.to_dict())


def test_a_broken_ranker_falls_below_the_accuracy_floor_and_the_command_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(suites, "default_packer", _broken_packer)
    code = main(["eval", "--accuracy", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert doc["pass"] is False
    accuracy = doc["suites"]["accuracy"]
    assert accuracy["pass"] is False
    assert accuracy["metrics"]["mrr"] < accuracy["thresholds"]["mrr"]


def test_the_real_engine_meets_every_floor_and_the_readme_table_is_what_it_prints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # one run of every suite serves three checks: floors, contract keys, the HTML report
    target = tmp_path / "report.html"
    code = main(["eval", "--all", "--json", "--html", str(target)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, {n: s["metrics"] for n, s in doc["suites"].items()}
    block = re.search(
        r"<!-- eval-baseline:begin -->(.*?)<!-- eval-baseline:end -->",
        README.read_text(encoding="utf-8"),
        re.S,
    )
    assert block is not None
    rows = [r.strip("|").split("|") for r in block.group(1).strip().splitlines()[2:]]
    table = {(c[0].strip(), c[3].strip()): (int(c[1]), int(c[2]), float(c[4])) for c in rows}
    printed = {
        (name, metric): (suite["cases"], suite["passed"], round(value, 4))
        for name, suite in doc["suites"].items()
        for metric, value in suite["metrics"].items()
    }
    assert table == printed
    for suite in doc["suites"].values():
        assert {"cases", "passed", "metrics", "thresholds", "pass"} <= suite.keys()
        assert suite["cases"] > 0
    html = target.read_text(encoding="utf-8")
    assert "<svg" in html and all(name in html for name in doc["suites"])
    assert "http://" not in html and "https://" not in html and "<script" not in html


def test_eval_without_a_suite_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval"]) == 2
    assert "Error:" in capsys.readouterr().err


def test_agent_runs_prints_a_readable_summary_and_refuses_a_malformed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = Path(suites.__file__).parent / "data" / "agent_runs.example.jsonl"
    assert main(["eval", "agent-runs", str(example)]) == 0
    out = capsys.readouterr().out
    assert "valid pairs; benchmark evidence incomplete." in out
    assert "Missing: " in out and "handoff codex->claude-code" in out
    broken = tmp_path / "runs.jsonl"
    broken.write_text('{"runId": 1}\n', encoding="utf-8")
    assert main(["eval", "agent-runs", str(broken)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
