"""The CLI adapter: exit codes, one-line errors, JSON keys of SPEC §11."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from excerpt.cli import main

INDEX_KEYS = {
    "files_discovered",
    "files_indexed",
    "symbols",
    "edges",
    "languages",
    "omitted",
    "discovery_truncated",
    "seconds",
}


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_index_json_has_the_contract_keys(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"app/main.py": "def run():\n    return 1\n", ".env": "X=1\n"})
    code, doc = run_json(capsys, "index", "--repo", str(repo), "--json")
    assert code == 0
    assert doc.keys() >= INDEX_KEYS
    assert doc["files_indexed"] == 1
    assert doc["languages"] == {"python": 1}
    assert doc["omitted"] == {"sensitive": 1}
    assert doc["symbols"] == 1


def test_missing_repo_is_a_one_line_error_with_exit_3(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["index", "--repo", str(tmp_path / "nope")])
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith("Error: ") and err.count("\n") == 1


def test_repo_that_is_a_file_is_exit_3(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x", encoding="utf-8")
    assert main(["index", "--repo", str(target)]) == 3


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", "--bogus"]) == 2
    assert "Error:" in capsys.readouterr().err


def test_json_output_draws_no_progress_bar(make_repo: Any, cache_dir: Path) -> None:
    repo = make_repo({f"m{i}.py": f"X{i} = {i}\n" for i in range(5)})
    proc = subprocess.run(
        [sys.executable, "-m", "excerpt", "index", "--repo", str(repo), "--json"],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stderr == b""
    assert json.loads(proc.stdout)["files_indexed"] == 5


def test_second_run_reads_nothing_when_nothing_changed(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"a.py": "import b\n", "b.py": "def f():\n    pass\n"})
    _, first = run_json(capsys, "index", "--repo", str(repo), "--json")
    _, second = run_json(capsys, "index", "--repo", str(repo), "--json")
    assert first["files_read"] == 2
    assert second["files_read"] == 0
    assert first["edges"] == second["edges"] == 1


def test_a_terminal_gets_a_progress_bar_on_stderr(make_repo: Any, cache_dir: Path) -> None:
    import os
    import pty

    repo = make_repo({f"m{i}.py": f"X{i} = {i}\n" for i in range(5)})
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "excerpt", "index", "--repo", str(repo)],
            stdout=subprocess.PIPE,
            stderr=slave,
            check=False,
            timeout=60,
        )
        os.close(slave)
        drawn = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(master)
    assert proc.returncode == 0
    # each phase named, with its counts; the line cleared at the end
    assert b"discover" in drawn and b"parse [" in drawn and b"5/5" in drawn
    assert drawn.endswith(b"\r\x1b[2K")
    assert b"parse" not in proc.stdout
    assert proc.stdout.startswith(b"Indexed 5 of 5")


def test_a_subdirectory_of_a_git_repository_indexes_only_its_files_with_relative_paths(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(
        {"svc/api/handler.py": "import util\n", "svc/api/util.py": "X = 1\n", "top.py": ""}
    )
    code, doc = run_json(capsys, "index", "--repo", str(repo / "svc"), "--json", "--stats")
    assert code == 0
    assert doc["files_indexed"] == 2
    from excerpt.core.settings import repo_cache_dir
    from excerpt.index.store import IndexStore

    store = IndexStore.open(repo_cache_dir((repo / "svc").resolve(), cache_dir))
    try:
        paths = sorted(p for (p,) in store.conn.execute("SELECT path FROM files"))
    finally:
        store.close()
    assert paths == ["api/handler.py", "api/util.py"]


def test_without_git_on_path_discovery_falls_back_to_gitignore_rules(
    make_repo: Any,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_repo({"a.py": "", "b.log": "", ".gitignore": "*.log\n"})
    monkeypatch.setenv("PATH", "/nonexistent")
    code, doc = run_json(capsys, "index", "--repo", str(repo), "--json")
    assert code == 0
    assert doc["files_indexed"] == 2  # a.py and .gitignore; b.log ignored


@pytest.mark.parametrize("kind", ["dev-zero", "sparse"])
def test_a_huge_task_file_is_refused_after_reading_only_the_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """``--task-file /dev/zero`` or a 3 GiB sparse file was read whole before the size check
    (memory exhausted); now at most the 4 MiB cap and one byte are read."""
    if kind == "dev-zero":
        task = Path("/dev/zero")
    else:
        task = tmp_path / "sparse.txt"
        with task.open("wb") as fh:
            fh.truncate(3 << 30)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n")
    assert main(["pack", "--repo", str(repo), "--task-file", str(task)]) == 2
    assert "larger than 4 MiB" in capsys.readouterr().err
