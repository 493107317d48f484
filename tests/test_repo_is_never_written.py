"""excerpt never writes inside the repository and never runs what the repository names.

RELIABILITY B6 #42-43: a byte-and-metadata audit of the whole work tree including ``.git``
around every way of running ``excerpt index``, with a negative control showing that a plain
``git status`` is caught by the same audit; and a repository whose ``.git/config``, attributes
and hooks point at scripts that leave marker files, none of which may appear.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import GIT_ENV, full_snapshot, git, git_commit_all, write_tree
from excerpt.cli import main
from hostile_git import ALL_MARKERS, arm

pytestmark = pytest.mark.timeout(30)


def plain_git_env() -> dict[str, str]:
    """The test's own git environment: no global config, no lock or pager overrides."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PAGER"}
    return {**env, **GIT_ENV}


def build_repo(tmp_path: Path) -> Path:
    """A committed repo with a modified tracked file, a touched one, and an untracked one."""
    repo = write_tree(
        tmp_path / "repo",
        {
            "src/app.py": "from src.util import helper\n\ndef app():\n    return helper()\n",
            "src/util.py": "def helper():\n    return 1\n",
            "touched.py": "TOUCHED = 1\n",
            "README.md": "# fixture\n",
        },
    )
    git_commit_all(repo)
    (repo / "src/util.py").write_text("def helper():\n    return 2  # edited\n", encoding="utf-8")
    # Same bytes, newer mtime: its stat data in .git/index is stale, so a plain
    # `git status` rehashes it and refreshes (rewrites) .git/index.
    later = (repo / ".git/index").stat().st_mtime_ns + 5_000_000_000
    os.utime(repo / "touched.py", ns=(later, later))
    write_tree(repo, {"notes/untracked.py": "UNTRACKED = 1\n"})
    return repo


def run_module(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "excerpt", *argv],
        cwd=cwd,
        capture_output=True,
        check=False,
        timeout=25,
    )


def run_every_index_entry_point(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``excerpt index`` twice in-process (cold, then warm), text and ``--stats``, and as a
    ``python -m excerpt`` subprocess, once with ``--repo`` and once from inside the repo."""
    for _ in range(2):
        assert main(["index", "--repo", str(repo), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["files_indexed"] >= 4
    assert main(["index", "--repo", str(repo), "--stats"]) == 0
    assert main(["index", "--repo", str(repo), "--json", "--stats"]) == 0
    capsys.readouterr()
    proc = run_module("index", "--repo", str(repo), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files_indexed"] >= 4
    proc = run_module("index", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stderr


# -- write audit (B6 #43) ------------------------------------------------------------------------


@pytest.mark.reliability("B6.43")
def test_excerpt_index_through_the_cli_and_the_module_never_writes_inside_the_repo(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = build_repo(tmp_path)
    before = full_snapshot(repo)
    assert ".git/index" in before[0]
    run_every_index_entry_point(repo, capsys)
    assert full_snapshot(repo) == before
    # the work went somewhere: the cache, outside the repository
    assert any(cache_dir.rglob("index.sqlite3"))
    assert not cache_dir.resolve().is_relative_to(repo.resolve())


def test_a_plain_git_status_in_the_same_situation_is_caught_by_the_audit(tmp_path: Path) -> None:
    repo = build_repo(tmp_path)
    before = full_snapshot(repo)
    subprocess.run(
        ["git", "status", "--porcelain"],
        cwd=repo,
        env=plain_git_env(),
        capture_output=True,
        check=True,
    )
    after = full_snapshot(repo)
    if after == before:
        pytest.skip("this git version's `git status` did not refresh .git/index here")
    assert after[0][".git/index"] != before[0][".git/index"]


# -- hostile repository configuration (B6 #42) ---------------------------------------------------


def build_hostile_repo(tmp_path: Path) -> tuple[Path, Path]:
    """``build_repo`` plus config, attributes and hooks that each touch a marker when run.

    Set up after the fixture's own commit, so the fixture's git calls trigger none of them.
    Markers land in a directory of their own, outside the repository.
    """
    repo = build_repo(tmp_path)
    markers = arm(repo, tmp_path)
    (repo / ".gitattributes").write_text("* diff=x filter=x\n", encoding="utf-8")
    assert not any(markers.iterdir())  # setting it up ran nothing
    return repo, markers


@pytest.mark.reliability("B6.42")
def test_hostile_git_config_attributes_and_hooks_never_run_during_index(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, markers = build_hostile_repo(tmp_path)
    before = full_snapshot(repo)
    run_every_index_entry_point(repo, capsys)
    assert sorted(p.name for p in markers.iterdir()) == []
    assert full_snapshot(repo) == before


@pytest.mark.reliability("B6.42")
def test_hostile_git_config_never_runs_during_harness_inference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, markers = build_hostile_repo(tmp_path)
    (repo / "package.json").write_text('{"scripts": {"test": "node t.js"}}', encoding="utf-8")
    before = full_snapshot(repo)
    assert main(["harness", "--repo", str(repo), "--json"]) == 0
    assert "npm test" in capsys.readouterr().out
    assert sorted(p.name for p in markers.iterdir()) == []
    assert full_snapshot(repo) == before


def test_the_hostile_scripts_do_run_under_plain_git(tmp_path: Path) -> None:
    """Control: the same setup does execute under ordinary git, so the test above can fail."""
    repo, markers = build_hostile_repo(tmp_path)
    env = plain_git_env()

    def run(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=False)

    run("status")  # core.fsmonitor, filter.x.clean, post-index-change
    run("diff")  # diff.external
    run("diff", "--no-ext-diff")  # diff.x.textconv
    run("-c", f"core.fsmonitor={repo / '.git/hooks/fsmonitor-watchman'}", "status")
    run("commit", "-q", "-a", "-m", "control")  # pre-commit, reference-transaction
    run("checkout", "-q", "-b", "other")  # post-checkout
    run("checkout", "-q", "-f", "main", "--", "touched.py")  # filter.x.smudge
    primary, secondary = os.openpty()  # the pager only starts when stdout is a terminal
    try:
        subprocess.run(
            ["git", "log", "-1"],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=secondary,
            stderr=secondary,
            check=False,
            timeout=20,
        )
    finally:
        os.close(primary)
        os.close(secondary)
    assert {p.name for p in markers.iterdir()} == ALL_MARKERS


@pytest.mark.parametrize("command", [["index"], ["pack", "refund retry"], ["plan", "refund"]])
@pytest.mark.reliability("T3")
def test_a_cache_directory_inside_the_repository_is_refused_before_any_write(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    repo = build_repo(tmp_path)
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(repo / "build" / "cache"))
    before = full_snapshot(repo)
    assert main([*command, "--repo", str(repo)]) == 3
    err = capsys.readouterr().err
    assert "lies inside the repository" in err and "EXCERPT_CACHE_DIR" in err
    assert full_snapshot(repo) == before


# Every command and tool that reads the repository, as a user would call it.
CLI_READERS = {
    "pack": ["pack", "helper returns the wrong value", "--json"],
    "plan": ["plan", "helper returns the wrong value", "--json"],
    "get": ["get", "src/app.py#L1-L4@0000000000000000", "--json"],
    "gate": ["gate", "--staged", "--json"],
    "gate-range": ["gate", "--range", "HEAD..HEAD", "--json"],
    "graph": ["graph", "export", "--json"],
    "risk": ["risk", "--paths", "src/app.py", "--json"],
    "config": ["config", "show", "--json"],
}
MCP_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("context_pack", {"task": "helper returns the wrong value"}),
    ("context_plan", {"task": "helper returns the wrong value"}),
    ("context_retrieve", {"handles": ["src/app.py#L1-L4@0000000000000000"]}),
    ("index_status", {}),
    ("harness_infer", {}),
    ("risk_classify", {"paths": ["src/app.py"]}),
    ("gate_check", {}),
]


async def _every_tool(repo: Path, cache: Path) -> list[bool]:
    from mcp import Client

    from excerpt.mcp.server import build_server

    async with Client(build_server(repo, cache, tools="all")) as client:
        return [(await client.call_tool(n, a)).is_error is not True for n, a in MCP_CALLS]


@pytest.mark.reliability("B6.42", cases=len(CLI_READERS) + len(MCP_CALLS))
@pytest.mark.reliability("B6.43", cases=len(CLI_READERS) + len(MCP_CALLS))
def test_hostile_git_config_never_runs_and_nothing_is_written_by_any_command_or_tool(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import anyio

    repo, markers = build_hostile_repo(tmp_path)
    git(repo, "add", "src/util.py")  # a staged change for the gate: plain git runs the
    for marker in markers.iterdir():  # hostile scripts here, before the audit starts
        marker.unlink()
    before = full_snapshot(repo)
    codes = {}
    for name, argv in CLI_READERS.items():
        words = (
            [*argv[:2], "--repo", str(repo), *argv[2:]]
            if name == "config"
            else [*argv, "--repo", str(repo)]
        )
        codes[name] = main(words)
        capsys.readouterr()
    assert all(code in (0, 1, 2) for code in codes.values()), codes  # a stale handle: 1
    assert codes["pack"] == codes["plan"] == 0
    served = anyio.run(_every_tool, repo, cache_dir)
    assert served.count(True) >= len(MCP_CALLS) - 1  # the made-up handle may be an error
    assert sorted(p.name for p in markers.iterdir()) == []
    assert full_snapshot(repo) == before


@pytest.mark.reliability("B6.48", cases=2)
def test_fixture_repositories_are_built_the_same_every_time(tmp_path: Path) -> None:
    """Fixed author and committer dates and the branch name: two builds of the same fixture
    give the same commit, so a test that names one sees the same repository on any machine."""
    heads = []
    for name in ("one", "two"):
        repo = write_tree(tmp_path / name, {"a.py": "A = 1\n"})
        git_commit_all(repo)
        proc = subprocess.run(
            ["git", "rev-parse", "HEAD", "--abbrev-ref", "HEAD"],
            cwd=repo, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=True,
        )  # fmt: skip
        heads.append(proc.stdout.split())
    assert heads[0] == heads[1] and heads[0][1] == "main"
