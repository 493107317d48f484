"""Environment faults met by the CLI process itself: a closed standard stream, a cache path
that is a file, a repository whose git names another work tree. Each is a documented exit code
and one line, never a traceback or exit 70 (SPEC §2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, git_commit_all, write_tree
from excerpt.cli import main

pytestmark = pytest.mark.timeout(60)

FILES = {"billing/refund.py": "def refund(order):\n    return order.total\n"}
COMMANDS = {
    "pack": ["pack", "refund the order"],
    "get": ["get", "billing/refund.py#L1-L2@0000000000000000"],
}


def _run(
    argv: list[str], cache: Path, *, shell_redirect: str = ""
) -> subprocess.CompletedProcess[str]:
    """The CLI in a child process; ``shell_redirect`` (e.g. ``>&-``) applied by a shell."""
    env = {**os.environ, "EXCERPT_CACHE_DIR": str(cache)}
    words = [sys.executable, "-m", "excerpt", *argv]
    if shell_redirect:
        script = f'exec "$@" {shell_redirect}'
        cmd = ["sh", "-c", script, "sh", *words]
        return subprocess.run(cmd, env=env, capture_output=False, stderr=subprocess.PIPE,
                              text=True, timeout=60, check=False)  # fmt: skip
    return subprocess.run(words, env=env, capture_output=True, text=True, timeout=60, check=False)


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    return lines[0]


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    return _one_line(proc.stderr or "")


@pytest.mark.reliability("T3", cases=1)
def test_a_process_started_with_stdout_closed_ends_with_one_line_and_exit_3(
    tmp_path: Path,
) -> None:
    root = write_tree(tmp_path / "repo", FILES)
    argv = [*COMMANDS["get"], "--repo", str(root)]
    proc = _run(argv, tmp_path / "cache", shell_redirect=">&-")
    assert proc.returncode == 3, proc.stderr
    assert "standard output is closed" in _one_line_error(proc)


@pytest.mark.reliability("T3", cases=1)
@pytest.mark.parametrize("json_flag", [False, True], ids=["text", "json"])
def test_a_closed_stdout_is_an_environment_error_with_one_line(
    tmp_path: Path,
    cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    json_flag: bool,
) -> None:
    root = write_tree(tmp_path / "repo", FILES)
    git_commit_all(root)
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", None)  # what Python gives a process without fd 1
    argv = [*COMMANDS["pack"], "--repo", str(root), *(["--json"] if json_flag else [])]
    assert main(argv) == 3
    line = _one_line(capsys.readouterr().err)
    assert "standard output is closed" in line


@pytest.mark.reliability("T3", cases=1)
def test_a_closed_stdout_does_not_matter_when_the_output_goes_to_a_file(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(tmp_path / "repo", FILES)
    out = tmp_path / "pack.md"
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["pack", "refund the order", "--repo", str(root), "-o", str(out)]) == 0
    assert "billing/refund.py" in out.read_text(encoding="utf-8")


@pytest.mark.reliability("T3", cases=1)
def test_a_cache_path_that_is_a_regular_file_is_an_environment_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_tree(tmp_path / "repo", FILES)
    cache = tmp_path / "cache"
    cache.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(cache))
    assert main(["pack", "refund the order", "--repo", str(root)]) == 3
    line = _one_line(capsys.readouterr().err)
    assert "EXCERPT_CACHE_DIR" in line and "Not a directory" in line
    assert cache.read_text(encoding="utf-8") == "not a directory"  # nothing lost


@pytest.mark.reliability("T3", cases=1)
@pytest.mark.parametrize("target", ["missing", "empty", "other-tree"])
def test_a_core_worktree_naming_another_directory_never_crashes(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """``core.worktree`` in the repository's config names a work tree elsewhere: git then
    lists another directory's files. The run still ends with a result or one line."""
    root = write_tree(tmp_path / "repo", FILES)
    git_commit_all(root)
    elsewhere = tmp_path / "elsewhere"
    if target != "missing":
        elsewhere.mkdir()
    if target == "other-tree":
        write_tree(elsewhere, {"zzz/other.py": "def other():\n    return 1\n"})
    git(root, "config", "core.worktree", str(elsewhere))
    code = main(["pack", "refund the order", "--json", "--repo", str(root)])
    out, err = capsys.readouterr()
    assert code in (0, 3), err
    if code == 3:
        _one_line(err)
    else:
        assert "zzz/other.py" not in out  # never another tree's files as ours
        assert "billing/refund.py" in out
