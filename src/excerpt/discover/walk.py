"""List candidate files: git's own list inside a work tree, ``.gitignore`` rules outside.

Outside one the walk applies the ``.gitignore`` files as git does (``excerpt.discover.ignore``):
the nearest file with a matching line decides, a directory it ignores is not entered (nothing
below it comes back), and a ``.gitignore`` that is a symlink is not read.

Only names are gathered here (plus ``lstat`` for the incremental check); the guarded reader
decides what may be opened. A directory or file this process may not read is an ``unreadable``
omission (a directory is listed with a trailing ``/``: its files are unknown), never an error;
only a root that cannot be listed is.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from excerpt.core import git
from excerpt.core.settings import Limits
from excerpt.discover.filters import PathFilter, repository_filter
from excerpt.discover.ignore import IgnoreRules
from excerpt.discover.reader import (
    FileContent,
    Omission,
    failure_reason,
    list_beneath,
    lstat_beneath,
    read_file,
)
from excerpt.discover.sensitive import is_sensitive_path
from excerpt.errors import NotADirectoryFault

__all__ = [
    "JUNK_DIRS",
    "Discovery",
    "FoundFile",
    "discover",
    "display_path",
    "file_verdict",
    "resolve_root",
]

# (the byte length of a directory's path with its trailing /, its .gitignore rules)
_Ignores = tuple[tuple[int, IgnoreRules], ...]

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


class FoundFile(NamedTuple):
    """A path that may be indexed, with what ``lstat`` said of it at discovery (a named
    tuple: a refresh makes one for every file of the tree)."""

    path: str
    size: int
    mtime_ns: int
    is_link: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Discovery:
    """What a workspace holds: candidates to read and paths refused by name or type."""

    root: Path
    in_git: bool
    candidates: tuple[FoundFile, ...]
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


def discover(root: Path, limits: Limits, filters: PathFilter | None = None) -> Discovery:
    """Candidates and name-level omissions under ``root`` (a resolved directory), sorted.

    Paths ``filters`` leaves out (default: the root's ``.excerptignore`` and include/exclude
    settings) are omitted as ``excluded``, before anything else is looked at.

    Raises:
        UsageError: a settings file or ``.excerptignore`` is invalid.
        GitFault: ``root`` is in a git work tree that git refuses to read.
        NotADirectoryFault: ``root`` cannot be listed.
    """
    top = git.work_tree_top(root)
    unlisted: list[str] = []
    if top is not None:
        tracked, untracked, unopened = git.ls_files_checked(root)
        listed = [(p, True) for p in tracked] + [(p, False) for p in untracked]
        for directory in _below(root, top, unopened):
            # git could not open it (a path past PATH_MAX): walked by descriptors, with the
            # .gitignore files above it; still unlisted only when it cannot be read at all
            below, still = _walk(root, limits, start=directory)
            listed.extend((p, False) for p in below)
            unlisted.extend(still)
    else:
        paths, unlisted = _walk(root, limits)
        listed = [(p, False) for p in paths]
    listed, excluded = (filters or repository_filter(root, limits)).partition(listed)
    found = _classify(root, top is not None, sorted(listed), limits)
    found = _with_excluded(found, excluded)
    if not unlisted:
        return found
    dirs = [Omission(path=display_path(d), reason="unreadable") for d in unlisted]
    omitted = sorted((*found.omitted, *dirs), key=lambda o: (o.path, o.reason))
    return Discovery(
        root=root,
        in_git=found.in_git,
        candidates=found.candidates,
        omitted=tuple(omitted),
        truncated=found.truncated,
    )


def _below(root: Path, top: Path, dirs: list[str]) -> list[str]:
    """``dirs`` (relative to the work tree ``top``, as git reports them) that lie under
    ``root``, made relative to it."""
    try:
        prefix = root.relative_to(top.resolve()).as_posix()
    except ValueError:
        return []
    prefix = "" if prefix == "." else prefix + "/"
    return sorted(d[len(prefix) :] for d in dirs if d.startswith(prefix) and d != prefix)


def _classify(
    root: Path, in_git: bool, listed: list[tuple[str, bool]], limits: Limits
) -> Discovery:
    candidates: list[FoundFile] = []
    omitted: list[Omission] = []
    total = 0
    truncated = False
    seen: set[str] = set()
    base = str(root)
    prefix = base if base.endswith("/") else base + "/"
    skipped: dict[tuple[str, bool], bool] = {}  # by directory: a tree has far fewer of them
    for path, tracked in listed:
        if path in seen:
            continue
        parent = path.rpartition("/")[0]
        skip = skipped.get((parent, tracked))
        if skip is None:
            skip = skipped[(parent, tracked)] = _skipped_dir(parent.split("/"), tracked)
        if skip:
            continue
        seen.add(path)
        verdict = _regular(prefix, path, limits.max_file_bytes) or file_verdict(
            prefix, path, limits
        )
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
    candidates, linked = _without_links_to_sensitive(base, candidates, omitted)
    return Discovery(
        root=root,
        in_git=in_git,
        candidates=tuple(candidates),
        omitted=tuple(omitted + linked),
        truncated=truncated,
    )


def _without_links_to_sensitive(
    root: str, candidates: list[FoundFile], omitted: list[Omission]
) -> tuple[list[FoundFile], list[Omission]]:
    """Candidates that are hard links to a sensitive file of the tree (a ``.env`` under a
    neutral name) moved to the omissions as ``sensitive``. Found by inode: the sensitive
    file's metadata is looked at, never its content; only when one has other links."""
    inodes = set()
    for o in omitted:
        if o.reason != "sensitive":
            continue
        try:
            st = os.lstat(os.path.join(root, o.path))
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            inodes.add((st.st_dev, st.st_ino))
    if not inodes:
        return candidates, []
    kept: list[FoundFile] = []
    linked: list[Omission] = []
    for c in candidates:
        try:
            st = os.stat(os.path.join(root, c.path))  # through a symlink too: its target
        except (OSError, ValueError):
            kept.append(c)
            continue
        if (st.st_dev, st.st_ino) in inodes:
            linked.append(Omission(path=c.path, reason="sensitive"))
        else:
            kept.append(c)
    return kept, linked


def _regular(prefix: str, path: str, max_bytes: int) -> FoundFile | None:
    """The verdict on a listed file in the common case, a regular file of an ASCII name off
    the deny list and within the size limit, in one ``lstat``; None for any other case,
    which ``file_verdict`` then decides (a refresh asks for every file of the tree)."""
    if not path.isascii() or is_sensitive_path(path):
        return None
    try:
        st = os.lstat(prefix + path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
        return None
    return FoundFile(path, st.st_size, st.st_mtime_ns, False)


def file_verdict(prefix: str, path: str, limits: Limits) -> FoundFile | Omission | None:
    """The verdict on the listed file ``path`` (``prefix``: the root with a trailing ``/``):
    a candidate, an omission, or None when it is gone or a directory."""
    if not path.isascii() and display_path(path) != path:
        return Omission(path=display_path(path), reason="not_utf8")
    if is_sensitive_path(path):
        return Omission(path=path, reason="sensitive")
    try:
        st = lstat_beneath(prefix, path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None  # listed by git but gone from the work tree: nothing to read
        return Omission(path=display_path(path), reason=failure_reason(exc))
    except ValueError:  # a name the OS cannot take (a NUL byte)
        return Omission(path=display_path(path), reason="not_regular_file")
    is_link = stat.S_ISLNK(st.st_mode)
    if not is_link and not stat.S_ISREG(st.st_mode):
        # submodule checkouts are directories; FIFOs, sockets and devices are never opened
        return None if stat.S_ISDIR(st.st_mode) else Omission(path=path, reason="not_regular_file")
    if not is_link and st.st_size > limits.max_file_bytes:
        # never read, so it must not spend the total-bytes budget of files that will be
        return Omission(path=path, reason="too_large", size=st.st_size)
    if is_link:
        # what a refresh compares for a link is its target's size and mtime (what the index
        # read through it), so an unchanged link is not read again; a link to nothing is
        # omitted here, as reading it would (metadata only: the target is never opened here)
        try:
            st = os.stat(prefix + path)
            real = os.path.realpath(prefix + path)
        except (OSError, ValueError) as exc:  # a link to nothing, or too deep to name
            return Omission(path=path, reason=failure_reason(exc))
        top = os.path.realpath(prefix)
        if os.path.commonpath([top, real]) != top:
            return Omission(path=path, reason="symlink_outside_root")
    return FoundFile(path, st.st_size, st.st_mtime_ns, is_link)


def _walk(root: Path, limits: Limits, start: str = "") -> tuple[list[str], list[str]]:
    """Iterative walk outside git (or of the directory ``start``, ``dir/``, below the root),
    honouring nested ``.gitignore`` files; never follows links. A directory too deep to name
    in one call is listed from its descriptor.

    Returns the file paths and the directories that could not be listed (``dir/``).

    Raises:
        NotADirectoryFault: the root itself cannot be listed.
    """
    out: list[str] = []
    unlisted: list[str] = []
    base = str(root)
    specs: _Ignores = ()
    parts = start.split("/")[:-1]
    for depth in range(len(parts)):  # the rules of each directory above ``start``
        above = "".join(f"{p}/" for p in parts[:depth])
        try:
            if stat.S_ISREG(lstat_beneath(base, f"{above}.gitignore").st_mode):
                specs = _with_gitignore(root, above, specs, limits)
        except (OSError, ValueError):
            continue
    stack: list[tuple[str, _Ignores]] = [(start, specs)]
    while stack:
        rel_dir, specs = stack.pop()
        try:
            entries = list_beneath(base, rel_dir)
        except OSError as exc:
            if not rel_dir:
                raise NotADirectoryFault(
                    f"repository is not readable: {root}: {exc.strerror}"
                ) from None
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):  # not merely gone meanwhile
                unlisted.append(rel_dir)
            continue
        if rel_dir != start and any(e.name == "pyvenv.cfg" for e in entries):
            continue  # a virtualenv (seen in its own listing: no lookup per directory)
        gitignore = next((e for e in entries if e.name == ".gitignore"), None)
        if gitignore is not None and not gitignore.is_link:  # git does not follow a link
            specs = _with_gitignore(root, rel_dir, specs, limits)
        for name, is_dir, _ in entries:
            rel = f"{rel_dir}{name}"
            if _ignored(rel, is_dir, specs):
                continue
            if is_dir:
                if not _skipped_dir((name,), tracked=False):
                    stack.append((rel + "/", specs))
            else:
                out.append(rel)
            if len(out) > limits.max_files * 2:
                return out, unlisted
    return out, unlisted


def _with_gitignore(root: Path, rel_dir: str, specs: _Ignores, limits: Limits) -> _Ignores:
    """``specs`` with the rules of ``rel_dir``'s ``.gitignore`` (raw bytes, as git reads
    them); unchanged when it cannot be read."""
    content = read_file(root, f"{rel_dir}.gitignore", limits)
    if not isinstance(content, FileContent):
        return specs
    rules = IgnoreRules.from_bytes(content.data)
    return (*specs, (len(os.fsencode(rel_dir)), rules)) if rules else specs


def _ignored(rel: str, is_dir: bool, specs: _Ignores) -> bool:
    """git's verdict: the deepest ``.gitignore`` with a line matching ``rel`` decides."""
    if not specs:
        return False
    encoded = os.fsencode(rel)
    for base, rules in reversed(specs):
        verdict = rules.verdict(encoded[base:], is_dir)
        if verdict is not None:
            return verdict
    return False


def resolve_root(repo: str | os.PathLike[str]) -> Path:
    """The resolved workspace root.

    Raises:
        NotADirectoryFault: it does not exist, is not a directory, or cannot be listed.
    """
    path = Path(repo)
    try:
        root = path.resolve(strict=True)
    except PermissionError:
        raise NotADirectoryFault(f"repository is not readable: {path}") from None
    except (OSError, RuntimeError, ValueError):
        raise NotADirectoryFault(f"repository not found: {path}") from None
    if not root.is_dir():
        raise NotADirectoryFault(f"not a directory: {path}")
    if not os.access(root, os.R_OK | os.X_OK):
        raise NotADirectoryFault(f"repository is not readable: {path}")
    return root


def _with_excluded(found: Discovery, excluded: list[str]) -> Discovery:
    """``found`` plus the paths the user's filters left out, as ``excluded`` omissions."""
    if not excluded:
        return found
    dropped = [Omission(path=display_path(p), reason="excluded") for p in excluded]
    omitted = sorted((*found.omitted, *dropped), key=lambda o: (o.path, o.reason))
    return replace(found, omitted=tuple(omitted))
