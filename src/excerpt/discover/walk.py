"""List candidate files: git's own list inside a work tree, ``.gitignore`` rules outside.

Only names are gathered here (plus ``lstat`` for the incremental check); the guarded reader
decides what may be opened.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pathspec

from excerpt.core import git
from excerpt.core.settings import Limits
from excerpt.discover.reader import FileContent, Omission, read_file
from excerpt.discover.sensitive import is_sensitive_path
from excerpt.errors import NotADirectoryFault

__all__ = ["Candidate", "Discovery", "discover", "display_path", "resolve_root"]

# Never part of a workspace's source, tracked or not.
JUNK_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "bower_components", "__pycache__",
        ".venv", "venv", ".virtualenv", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
        ".ruff_cache", ".hypothesis", ".eggs", ".gradle", ".terraform", ".idea", ".cache",
        ".next", ".nuxt", ".svelte-kit", ".parcel-cache", ".turbo",
    }
)  # fmt: skip
# Build outputs: skipped unless git tracks them (then someone meant to keep them).
BUILD_DIRS = frozenset({"build", "dist", "target", "out", "_build", "coverage", "htmlcov"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """A path that may be indexed, with what ``lstat`` said of it at discovery."""

    path: str
    size: int
    mtime_ns: int
    is_link: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Discovery:
    """What a workspace holds: candidates to read and paths refused by name or type."""

    root: Path
    in_git: bool
    candidates: tuple[Candidate, ...]
    omitted: tuple[Omission, ...]
    truncated: bool


def display_path(path: str) -> str:
    """A printable, JSON-safe form of a path that may hold undecodable bytes."""
    raw = path.encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "backslashreplace")


def _skipped_dir(parts: Iterable[str], tracked: bool) -> bool:
    for part in parts:
        if part in JUNK_DIRS or part.endswith(".egg-info"):
            return True
        if not tracked and part in BUILD_DIRS:
            return True
    return False


def discover(root: Path, limits: Limits) -> Discovery:
    """Candidates and name-level omissions under ``root`` (a resolved directory), sorted.

    Raises:
        GitFault: ``root`` is in a git work tree that git refuses to read.
    """
    in_git = git.work_tree_top(root) is not None
    if in_git:
        tracked, untracked = git.ls_files(root)
        listed = [(p, True) for p in tracked] + [(p, False) for p in untracked]
    else:
        listed = [(p, False) for p in _walk(root, limits)]
    return _classify(root, in_git, sorted(listed), limits)


def _classify(
    root: Path, in_git: bool, listed: list[tuple[str, bool]], limits: Limits
) -> Discovery:
    candidates: list[Candidate] = []
    omitted: list[Omission] = []
    total = 0
    truncated = False
    seen: set[str] = set()
    base = str(root)
    for path, tracked in listed:
        if path in seen or _skipped_dir(path.split("/")[:-1], tracked):
            continue
        seen.add(path)
        verdict = _candidate(base, path, limits)
        if isinstance(verdict, Omission):
            omitted.append(verdict)
            continue
        if verdict is None:
            continue
        if len(candidates) >= limits.max_files or total + verdict.size > limits.max_total_bytes:
            truncated = True
            omitted.append(Omission(path=path, reason="discovery_limit"))
            continue
        total += verdict.size
        candidates.append(verdict)
    return Discovery(
        root=root,
        in_git=in_git,
        candidates=tuple(candidates),
        omitted=tuple(omitted),
        truncated=truncated,
    )


def _candidate(root: str, path: str, limits: Limits) -> Candidate | Omission | None:
    if not path.isascii() and display_path(path) != path:
        return Omission(path=display_path(path), reason="not_utf8")
    if is_sensitive_path(path):
        return Omission(path=path, reason="sensitive")
    try:
        st = os.lstat(os.path.join(root, path))
    except OSError:
        return None  # listed by git but gone from the work tree: nothing to read
    is_link = stat.S_ISLNK(st.st_mode)
    if not is_link and not stat.S_ISREG(st.st_mode):
        # submodule checkouts are directories; FIFOs, sockets and devices are never opened
        return None if stat.S_ISDIR(st.st_mode) else Omission(path=path, reason="not_regular_file")
    if not is_link and st.st_size > limits.max_file_bytes:
        # never read, so it must not spend the total-bytes budget of files that will be
        return Omission(path=path, reason="too_large", size=st.st_size)
    return Candidate(
        path=path, size=0 if is_link else st.st_size, mtime_ns=st.st_mtime_ns, is_link=is_link
    )


def _walk(root: Path, limits: Limits) -> list[str]:
    """Iterative walk outside git, honouring nested ``.gitignore`` files; never follows links."""
    out: list[str] = []
    stack: list[tuple[str, tuple[tuple[str, pathspec.GitIgnoreSpec], ...]]] = [("", ())]
    while stack:
        rel_dir, specs = stack.pop()
        try:
            entries = sorted(os.scandir(root / rel_dir), key=lambda e: e.name)
        except OSError:
            continue
        if any(e.name == ".gitignore" for e in entries):
            specs = _with_gitignore(root, rel_dir, specs, limits)
        for entry in entries:
            rel = f"{rel_dir}{entry.name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if _ignored(rel, is_dir, specs):
                continue
            if is_dir:
                if (
                    not _skipped_dir((entry.name,), tracked=False)
                    and not (Path(entry.path) / "pyvenv.cfg").exists()
                ):
                    stack.append((rel + "/", specs))
            else:
                out.append(rel)
            if len(out) > limits.max_files * 2:
                return out
    return out


def _with_gitignore(
    root: Path,
    rel_dir: str,
    specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...],
    limits: Limits,
) -> tuple[tuple[str, pathspec.GitIgnoreSpec], ...]:
    content = read_file(root, f"{rel_dir}.gitignore", limits)
    if not isinstance(content, FileContent) or content.binary:
        return specs
    lines = content.data.decode("utf-8", "replace").splitlines()
    return (*specs, (rel_dir, pathspec.GitIgnoreSpec.from_lines(lines)))


def _ignored(rel: str, is_dir: bool, specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]) -> bool:
    for base, spec in specs:
        local = rel[len(base) :] + ("/" if is_dir else "")
        if spec.match_file(local):
            return True
    return False


def resolve_root(repo: str | os.PathLike[str]) -> Path:
    """The resolved workspace root.

    Raises:
        NotADirectoryFault: it does not exist, is not a directory, or cannot be listed.
    """
    path = Path(repo)
    try:
        root = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise NotADirectoryFault(f"repository not found: {path}") from None
    if not root.is_dir():
        raise NotADirectoryFault(f"not a directory: {path}")
    if not os.access(root, os.R_OK | os.X_OK):
        raise NotADirectoryFault(f"repository is not readable: {path}")
    return root
