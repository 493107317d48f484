"""The pack and plan commands: usage errors exit 2 with one line and no traceback; the
plan's JSON ranks regions with reasons and sizes but no text; and none of plan, pack, get or
graph export writes inside the repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import tree_snapshot
from excerpt.pipeline import export_graph
from pack_repos import SETTINGS_PY, TASK_CASES
from packs import cli, pack_of, plan_of

# -- usage errors ----------------------------------------------------------------------------

USAGE_ERRORS = [
    pytest.param([], id="no-task"),
    pytest.param([""], id="empty-task"),
    pytest.param([" \n\t "], id="blank-task"),
    pytest.param(["fix it", "--task-file", "{task_file}"], id="task-and-task-file"),
    pytest.param(["fix it", "--budget", "-1"], id="negative-budget"),
    pytest.param(["fix it", "--changed", "{outside}"], id="changed-outside-repo"),
    pytest.param(
        ["fix it", "--changed", "app/models.py", "--changed", "../elsewhere.py"],
        id="changed-dotdot",
    ),
    pytest.param(["--task-file", "{missing}"], id="missing-task-file"),
    pytest.param(["--task-file", "{empty_file}"], id="empty-task-file"),
    pytest.param(["fix it", "--graph", "{missing}"], id="missing-graph-file"),
]


@pytest.mark.parametrize("command", ["pack", "plan"])
@pytest.mark.parametrize("extra", USAGE_ERRORS)
def test_usage_errors_exit_2_with_one_line_and_no_traceback(
    repos: dict[str, Path],
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    extra: list[str],
) -> None:
    repo = repos["py_shop"]
    monkeypatch.chdir(repo)
    (tmp_path / "task.txt").write_text("fix the refund\n", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "outside.py").write_text("x = 1\n", encoding="utf-8")
    names = {
        "task_file": str(tmp_path / "task.txt"),
        "empty_file": str(tmp_path / "empty.txt"),
        "missing": str(tmp_path / "missing.txt"),
        "outside": str(tmp_path / "outside.py"),
    }
    argv = [command, *(a.format(**names) for a in extra), "--repo", str(repo), "--format", "json"]
    code, out, err = cli(capsys, *argv)
    assert code == 2, err
    # under --format json the error is one JSON line on stdout, and the same on stderr
    assert err == out and out.count("\n") == 1, err
    assert json.loads(out)["code"] == "usage_error"
    assert "Traceback" not in err


# -- plan ------------------------------------------------------------------------------------


def _keys(obj: Any) -> set[str]:
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


@pytest.mark.parametrize(("name", "task"), TASK_CASES)
def test_plan_json_lists_ranked_regions_with_reasons_and_sizes_but_no_text(
    repos: dict[str, Path],
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    task: str,
) -> None:
    code, out, _ = cli(capsys, "plan", task, "--repo", str(repos[name]), "--json")
    assert code == 0
    plan = json.loads(out)
    assert set(plan) == {"schema", "candidates", "suggested_budget", "omitted"}
    assert plan["schema"] == "excerpt.plan/v1"
    assert plan["candidates"]
    keys = {"rank", "path", "start_line", "end_line", "score", "reasons", "bytes"}
    keys |= {"role", "confidence"}
    for rank, cand in enumerate(plan["candidates"], start=1):
        assert set(cand) - {"related_to"} == keys
        assert cand["rank"] == rank and 1 <= cand["start_line"] <= cand["end_line"]
        assert cand["reasons"] and all(set(r) == {"signal", "detail"} for r in cand["reasons"])
    assert "text" not in _keys(plan)
    assert isinstance(plan["suggested_budget"], int) and plan["suggested_budget"] >= 1000
    assert plan == plan_of(repos[name], task, cache_dir)
    # every file the pack serves was in the plan
    pack = pack_of(repos[name], task, cache_dir)
    assert {i["path"] for i in pack["items"]} <= {c["path"] for c in plan["candidates"]}


# -- write audit -----------------------------------------------------------------------------


@pytest.mark.reliability("B6.43", cases=4)
def test_plan_pack_get_and_graph_export_never_write_inside_the_repository(
    py_shop: Path, cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (py_shop / "app/settings.py").write_text(SETTINGS_PY + "# dirty\n")  # a dirty tree too
    before = tree_snapshot(py_shop)
    assert any(p.startswith(".git/") or p.startswith(".git\\") for p in before)
    task = "fix the refund webhook retry"
    base = ["--repo", str(py_shop)]
    assert cli(capsys, "plan", task, *base, "--json")[0] == 0
    assert cli(capsys, "plan", task, *base)[0] == 0
    code, out, _ = cli(capsys, "pack", task, *base, "--format", "json", "--changed-from-git")
    assert code == 0
    handles = [i["handle"] for i in json.loads(out)["items"]]
    assert cli(capsys, "pack", task, *base, "--format", "md", "--budget", "300")[0] == 0
    code, out, _ = cli(capsys, "get", *handles[:3], *base, "--json")
    assert code == 0 and [r["status"] for r in json.loads(out)] == ["fresh"] * len(handles[:3])
    graph = tmp_path / "graph.json"
    assert cli(capsys, "graph", "export", *base, "-o", str(graph))[0] == 0
    assert cli(capsys, "graph", "export", *base)[0] == 0
    assert cli(capsys, "pack", task, *base, "--graph", str(graph), "--format", "json")[0] == 0
    pack_of(py_shop, task, cache_dir, 1000)
    plan_of(py_shop, task, cache_dir)
    export_graph(py_shop, cache_dir=cache_dir)
    assert tree_snapshot(py_shop) == before
