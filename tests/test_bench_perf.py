"""``excerpt bench perf``: the SPEC §11 figures, measured on a copy of the tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import tree_snapshot
from excerpt.cli import main

FILES = {
    **{
        f"pkg/mod{n}.py": "".join(
            f"def settle_invoice_{n}_{k}(invoice):\n    return invoice.total - {k}\n\n\n"
            for k in range(8)
        )
        for n in range(6)
    },
    "pkg/util.go": "package pkg\n\nfunc Settle() int { return 1 }\n",
}


def test_bench_perf_reports_every_figure_beside_its_floors_and_leaves_the_tree_untouched(
    repo: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_snapshot(repo)
    code = main(["bench", "perf", "--repo", str(repo), "--runs", "1", "--count", "2", "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert tree_snapshot(repo) == before  # the edit runs changed a copy
    assert doc["files"] == len(FILES) and doc["tasks"] == 2
    assert doc["cold_index_s"] > 0 and doc["warm_refresh_s"] > 0 and doc["peak_rss_mb"] > 0
    for key in ("pack_ms", "cli_process_ms", "repack_after_edit_ms"):
        assert 0 < doc[key]["p50"] <= doc[key]["p95"]
    # a whole process pays its start-up besides the pack itself
    assert doc["cli_process_ms"]["p50"] > doc["pack_ms"]["p50"]
    base = doc["baseline"]
    assert base["stat_all_s"] > 0 and base["read_all_s"] > 0 and base["parse_only_s"] > 0
    assert base["aider_cold_s"] is None and base["aider_warm_s"] is None  # not run


def test_bench_perf_packs_the_given_tasks_and_renders_a_table(
    repo: Path, cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        json.dumps({"problem_statement": "settle_invoice_3_2 returns a negative total"})
        + "\n\n" + json.dumps({"task": "Settle in util.go returns 1"}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    args = ["bench", "perf", "--repo", str(repo), "--runs", "1", "--tasks", str(tasks)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "2 tasks" in out and "x the parse floor" in out and "| warm pack | p50 " in out
    assert "| warm pack, whole `excerpt pack` process | p50 " in out


@pytest.mark.parametrize(
    ("lines", "message"),
    [("{not json}\n", "line 1 is not JSON"), ('{"title": "x"}\n', "no problem_statement")],
)
def test_bench_perf_refuses_bad_tasks_and_a_missing_tree_with_exit_2(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: str, message: str
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(lines, encoding="utf-8")
    assert main(["bench", "perf", "--repo", str(repo), "--tasks", str(tasks)]) == 2
    assert message in capsys.readouterr().err
    assert main(["bench", "perf", "--repo", str(tmp_path / "none"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["code"] == "usage_error"


def test_the_synthetic_tree_is_the_same_bytes_for_the_same_size_and_has_imports(
    tmp_path: Path,
) -> None:
    from excerpt_bench.synthetic import write_tree

    a, b = write_tree(tmp_path / "a", 250), write_tree(tmp_path / "b", 250)

    def content(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert content(a) == content(b)
    files = sorted(p for p in a.rglob("*") if p.is_file())
    assert len(files) == 251
    assert {p.suffix for p in files} == {".py", ".ts", ".go", ".rs", ".md"}
    assert any("from pkg0." in p.read_text(encoding="utf-8") for p in files if p.suffix == ".py")


def test_bench_perf_measures_a_synthetic_tree_and_wants_exactly_one_tree(
    capsys: pytest.CaptureFixture[str], cache_dir: Path
) -> None:
    args = ["bench", "perf", "--synthetic", "150", "--runs", "1", "--count", "2", "--json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["synthetic"] == 150 and doc["files"] > 100 and doc["tasks"] == 2
    assert main(["bench", "perf", "--json"]) == 2
    assert "give --repo DIR or --synthetic N" in capsys.readouterr().out


def test_bench_perf_surface_mcp_times_the_packs_through_a_real_server_under_the_same_keys(
    repo: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_snapshot(repo)
    args = ["bench", "perf", "--repo", str(repo), "--runs", "1", "--count", "2"]
    assert main([*args, "--surface", "mcp", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert tree_snapshot(repo) == before
    mcp = doc["mcp"]
    for key in ("pack_ms", "repack_after_edit_ms", "repack_after_switch_ms"):
        assert 0 < mcp[key]["p50"] <= mcp[key]["p95"], key
        assert key in doc or key == "repack_after_switch_ms"  # the CLI surface's keys
    assert mcp["switch_files"] == 50
    assert main([*args, "--surface", "mcp"]) == 0
    out = capsys.readouterr().out
    assert "through one `excerpt mcp --tools core` process" in out
    assert "| pack after 50 files changed at once | p50 " in out
    assert main([*args, "--json"]) == 0
    assert "mcp" not in json.loads(capsys.readouterr().out)  # the CLI surface alone by default


def test_bench_perf_surface_hook_times_hook_processes_cold_and_warm_beside_the_floor(
    repo: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_snapshot(repo)
    args = ["bench", "perf", "--repo", str(repo), "--runs", "1", "--count", "2"]
    assert main([*args, "--surface", "hook", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert tree_snapshot(repo) == before  # the hooks ran on the copy, their caches elsewhere
    hook = doc["hook"]
    assert hook["command"].endswith("hook EVENT --client claude --repo COPY")
    assert hook["timeout_s"] == 1.5
    cold = hook["seed_cold"]
    # an empty cache: the first task prompt gets the note and starts the index; a later
    # prompt is seeded once it is built
    assert cold["runs"] == 1 and cold["first_prompt_notes"] == 1 and cold["prompts"] >= 2
    assert cold["seeded_runs"] == 1 and cold["background_index_s"]["p50"] is not None
    assert cold["notes"] + cold["nothing"] == cold["prompts"] - 1
    assert cold["first_prompt_ms"]["p50"] > 0 and cold["until_seeded_s"]["p50"] > 0
    for warm in (hook["seed_warm"], hook["seed_warm_server"]):
        assert warm["prompts"] == 2
        assert warm["seeded"] + warm["notes"] + warm["nothing"] == 2
        assert 0 < warm["seed_ms"]["p50"] <= warm["seed_ms"]["p95"]
    assert hook["seed_warm_server"]["server_sockets"] == 1  # the hooks could ask the server
    tool, floor = hook["post_tool_use"], hook["floor"]
    assert tool["small_runs"] == 4 and tool["small_replaced"] == 0  # too small to compact
    assert tool["large_runs"] == 2 and tool["large_replaced"] == 2  # the 200 KB log is
    assert tool["large_bytes"] >= 200_000 and tool["large_compacted_bytes"] < 200_000 // 2
    assert tool["small_target_ms"] == 50 and isinstance(tool["small_target_met"], bool)
    assert floor["runs"] == 4
    for key in ("python_pass_ms", "excerpt_version_ms"):
        assert 0 < floor[key]["p50"] <= floor[key]["p95"], key
    assert main([*args, "--surface", "hook"]) == 0
    out = capsys.readouterr().out
    assert "| seed, warm (2 task prompts) | " in out
    assert "| seed, warm, an `excerpt mcp` running (its seed socket) | " in out
    assert "| PostToolUse, small output (" in out and "| floor: `python -c pass` | " in out


def test_the_large_log_is_the_same_for_a_run_another_for_another_and_has_its_failure() -> None:
    from excerpt_bench.perf_hook import LARGE_BYTES, large_log

    first, again, other = large_log(0), large_log(0), large_log(1)
    assert first == again and first != other
    assert LARGE_BYTES <= len(first.encode("utf-8")) < LARGE_BYTES + 2000
    assert "LinkError: undefined symbol" in first and "WARNING " in first
