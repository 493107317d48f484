"""Shared fixtures: repositories built at test time, an isolated cache, a write audit."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=200, derandomize=True, deadline=None)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("nightly", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Create ``files`` (relative POSIX path → text or bytes) under ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
    )


def git_commit_all(root: Path) -> None:
    """``git init`` (if needed), add everything, commit with fixed dates."""
    if not (root / ".git").exists():
        git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fixture")


def tree_snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """``{path: (size, mtime_ns, sha256)}`` of every regular file under ``root``, ``.git`` too."""
    out: dict[str, tuple[int, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if not path.is_symlink() and path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns, digest)
    return out


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache directory, also exported as ``EXCERPT_CACHE_DIR``."""
    path = tmp_path / "cache"
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(path))
    return path


@pytest.fixture
def make_repo(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Factory: ``make_repo(files, git=True, name="repo")`` → a fixture repository path."""

    def make(files: Mapping[str, str | bytes], *, use_git: bool = True, name: str = "repo") -> Path:
        root = write_tree(tmp_path / name, files)
        if use_git:
            git_commit_all(root)
        return root

    yield make
