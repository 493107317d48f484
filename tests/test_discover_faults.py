"""Filesystem faults in the workspace: each is indexed or an omission with its reason, and the
run ends with exit 0, never a traceback or exit 70 (SPEC §2, §3.1; matrix rows B1.6, B1.10).

Paths longer than PATH_MAX are built a directory at a time through descriptors (the kernel
refuses such a path in one call). Unreadable directories, inside git and outside it, are in
``test_newcomer_errors`` (they need a process that permission bits apply to); FIFOs, sockets
and links to devices are in ``test_discover_safety``.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import GIT_ENV, git_commit_all, write_tree
from excerpt.cli import main
from open_audit import recording_opens

PATH_MAX = 4096
GIT_IDS = [pytest.param(False, id="walk"), pytest.param(True, id="git")]


def index_json(capsys: pytest.CaptureFixture[str], repo: Path) -> dict[str, Any]:
    """``excerpt index --json --stats`` in process: exit 0 and its report."""
    code = main(["index", "--repo", str(repo), "--json", "--stats"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert code == 0, (code, out, err)
    doc: dict[str, Any] = json.loads(out)
    return doc


def omitted(doc: dict[str, Any]) -> dict[str, str]:
    return {o["path"]: o["reason"] for o in doc["omitted_paths"]}


def deep_file(root: Path, names: list[str], leaf: str, data: bytes) -> str:
    """Create ``root/names…/leaf`` one directory at a time (by descriptor, so the whole path
    may exceed PATH_MAX); returns its path relative to ``root``."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open(leaf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
        os.write(out, data)
        os.close(out)
    finally:
        os.close(fd)
    return "/".join([*names, leaf])


def beyond_path_max(root: Path) -> str:
    """A file whose absolute path is longer than PATH_MAX under ``root``."""
    levels = (PATH_MAX - len(str(root))) // 251 + 2
    rel = deep_file(root, ["d" * 250] * levels, "leaf.py", b"def leaf():\n    return 2\n")
    assert len(os.fsencode(f"{root}/{rel}")) > PATH_MAX
    return rel


def _repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "r", {"a.py": "def alpha():\n    return 1\n"})


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, input=stdin, check=True, capture_output=True
    )
    return done.stdout


# -- PATH_MAX ---------------------------------------------------------------------------------


def _served(capsys: pytest.CaptureFixture[str], repo: Path, leaf: str) -> None:
    """A pack for the leaf's function serves it, and ``get`` re-reads it by its handle."""
    code = main(["pack", "leaf returns the wrong value", "--repo", str(repo), "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    items = [i for i in json.loads(out)["items"] if i["path"] == leaf]
    assert items and items[0]["text"] == "def leaf():\n    return 2\n"
    assert main(["get", items[0]["handle"], "--repo", str(repo), "--json"]) == 0
    got = json.loads(capsys.readouterr()[0])
    assert [(r["status"], r["text"]) for r in got] == [("fresh", "def leaf():\n    return 2\n")]


@pytest.mark.reliability("B1.10")
def test_a_file_beyond_path_max_outside_git_is_indexed_through_descriptors(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path)
    leaf = beyond_path_max(repo)
    doc = index_json(capsys, repo)
    assert doc["files_indexed"] == 2 and omitted(doc) == {}
    _served(capsys, repo, leaf)


@pytest.mark.reliability("B1.10")
def test_a_tracked_file_beyond_path_max_is_indexed_through_descriptors(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path)
    git_commit_all(repo)
    leaf = beyond_path_max(repo)
    # git cannot open the file's directory; the index entry is made from the blob
    blob = _git(repo, "hash-object", "-w", "--stdin", stdin=b"def leaf():\n").decode().strip()
    _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{leaf}")
    doc = index_json(capsys, repo)
    assert doc["files_indexed"] == 2 and omitted(doc) == {}
    _served(capsys, repo, leaf)


@pytest.mark.reliability("B1.10")
def test_an_untracked_file_beyond_path_max_in_git_is_walked_through_descriptors(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # git reports the directory it could not open; the walk goes on below it by descriptor,
    # with the .gitignore files above it
    repo = _repo(tmp_path)
    (repo / ".gitignore").write_text("*.log\n")
    git_commit_all(repo)
    leaf = beyond_path_max(repo)
    deep_file(repo, [], "x", b"")  # (a file at the top, so the walk's start is not the root)
    beside = leaf.rpartition("/")[0] + "/run.log"
    fd = os.open(repo, os.O_RDONLY | os.O_DIRECTORY)
    for part in beside.split("/")[:-1]:
        inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open("run.log", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    os.close(fd)
    doc = index_json(capsys, repo)
    assert doc["files_indexed"] == 4 and omitted(doc) == {}  # not the ignored log
    _served(capsys, repo, leaf)


# -- depth and long names ------------------------------------------------------------------


@pytest.mark.parametrize("use_git", GIT_IDS)
@pytest.mark.reliability("B1.10")
def test_a_file_two_hundred_directories_deep_is_indexed(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], use_git: bool
) -> None:
    repo = _repo(tmp_path)
    leaf = deep_file(repo, ["n"] * 200, "leaf.py", b"def leaf():\n    return 2\n")
    if use_git:
        git_commit_all(repo)
    doc = index_json(capsys, repo)
    assert doc["files_indexed"] == 2 and omitted(doc) == {}
    assert leaf.count("/") == 200


@pytest.mark.parametrize("use_git", GIT_IDS)
@pytest.mark.reliability("B1.10")
def test_a_255_byte_file_name_is_indexed(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], use_git: bool
) -> None:
    repo = _repo(tmp_path)
    name = "é" * 100 + "x" * 52 + ".py"  # 255 bytes in UTF-8, 155 characters
    assert len(name.encode()) == 255
    write_tree(repo, {f"pkg/{name}": "def long_name():\n    return 3\n"})
    if use_git:
        git_commit_all(repo)
    doc = index_json(capsys, repo)
    assert doc["files_indexed"] == 2 and omitted(doc) == {}


# -- device nodes --------------------------------------------------------------------------


def _char_device(path: Path) -> None:
    """A character device node at ``path`` with /dev/zero's numbers (never to be read)."""
    try:
        os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    except PermissionError:
        if os.environ.get("CI"):
            raise
        pytest.skip("creating a device node needs CAP_MKNOD")


@pytest.mark.parametrize("use_git", GIT_IDS)
@pytest.mark.reliability("B1.6")
def test_a_character_device_is_omitted_as_not_a_regular_file_and_never_opened(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], use_git: bool
) -> None:
    repo = _repo(tmp_path)
    if use_git:  # tracked as a regular file, then replaced by the device
        write_tree(repo, {"zero.txt": "text at commit time\n"})
        git_commit_all(repo)
        (repo / "zero.txt").unlink()
    _char_device(repo / "zero.txt")
    with recording_opens() as opened:
        doc = index_json(capsys, repo)
    assert omitted(doc) == {"zero.txt": "not_regular_file"}
    assert doc["files_indexed"] == 1
    assert str(repo / "zero.txt") not in {p for p in opened if os.path.isabs(p)}


@pytest.mark.reliability("T4", cases=2)
def test_a_posix_class_in_an_exclude_glob_is_a_glob_not_a_crash(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``[[:alnum:]]`` is git glob syntax; it once reached a regex set that refused it
    (exit 70)."""
    repo = write_tree(tmp_path / "repo", {"x-1.py": "A = 1\n", "x-_.py": "B = 2\n"})
    assert main(["index", "--repo", str(repo), "--exclude", "x-[[:alnum:]].py", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["files_indexed"] == 1 and doc["omitted"] == {"excluded": 1}
