"""The guarded reader: the only code that opens workspace files.

Order of checks, each before any open: sensitive name, ``lstat`` type, symlink target
resolved and contained by whole path components, sensitive target, regular file. The file is
then opened with ``O_NOFOLLOW | O_NONBLOCK`` and the descriptor's ``(st_dev, st_ino)`` must be
the one that was checked, so a swap between check and open is refused. Size comes from
``fstat`` and nothing past the cap is read. A file or directory the process may not open
(permissions, an I/O error) is ``unreadable``; anything else that fails is ``not_regular_file``.
"""

from __future__ import annotations

import codecs
import errno
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from excerpt.core.hashing import sha256_hex
from excerpt.core.settings import Limits
from excerpt.discover.sensitive import is_sensitive_path

__all__ = [
    "FileContent",
    "Listed",
    "Omission",
    "classify_encoding",
    "failure_reason",
    "list_beneath",
    "lstat_beneath",
    "read_file",
]

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Omission:
    """A path that was not indexed, and why (a SPEC §3.1 omission reason)."""

    path: str
    reason: str
    size: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FileContent:
    """The verified bytes of one regular file inside the root."""

    path: str
    data: bytes
    size: int
    mtime_ns: int
    sha256: str
    binary: bool
    encoding: str


def classify_encoding(data: bytes, prefix: int) -> tuple[bool, str]:
    """``(binary, encoding)`` decided on a fixed prefix (binary) and BOM / strict UTF-8."""
    if data.startswith(codecs.BOM_UTF8):
        return False, "utf-8-sig" if _is_utf8(data[3:]) else "not_utf8"
    if data.startswith(codecs.BOM_UTF16_LE):
        return False, "utf-16-le"
    if data.startswith(codecs.BOM_UTF16_BE):
        return False, "utf-16-be"
    if b"\0" in data[:prefix]:
        return True, "binary"
    return False, "utf-8" if _is_utf8(data) else "not_utf8"


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# What the filesystem says when the file is there but this process cannot read it (its
# path longer than PATH_MAX included: git lists such a file, the kernel will not open it).
_UNREADABLE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EIO, errno.ENAMETOOLONG})


def failure_reason(exc: BaseException) -> str:
    """The omission reason of a failed look-up or read: ``unreadable`` when the path is
    there but may not be read (permission bits, an I/O error, a path too long to name),
    else ``not_regular_file``."""
    if isinstance(exc, OSError) and exc.errno in _UNREADABLE_ERRNOS:
        return "unreadable"
    return "not_regular_file"


def _contained(root: Path, target: Path) -> bool:
    # Path.is_relative_to compares whole components: /repo_evil is not inside /repo.
    return target == root or target.is_relative_to(root)


class _SymlinkOnPath(Exception):
    """A component of the path is a symlink: resolve it before opening."""


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _open_dirs(root: str, parts: list[str]) -> int:
    """A descriptor of ``root/parts``, each directory opened relative to its parent's
    descriptor without following a link: a path longer than one system call can name
    (PATH_MAX) is reached this way.

    Raises:
        OSError: a component is missing, no directory, a link, or may not be opened.
    """
    dir_fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            next_fd = os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = next_fd
    except BaseException:
        os.close(dir_fd)
        raise
    return dir_fd


def lstat_beneath(root: str, rel: str) -> os.stat_result:
    """``os.lstat`` of ``root/rel``; a path too long to name in one call is looked up from
    its directory's descriptor (``fstatat``), so no file of the tree is beyond reach.

    Raises:
        OSError: as ``os.lstat``.
    """
    try:
        return os.lstat(root + rel if root.endswith("/") else f"{root}/{rel}")
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
    *dirs, name = rel.split("/")
    dir_fd = _open_dirs(root, dirs)
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    finally:
        os.close(dir_fd)


class Listed(NamedTuple):
    """One entry of a listed directory: its name, and whether it is a directory or a link
    (neither followed)."""

    name: str
    is_dir: bool
    is_link: bool


def list_beneath(root: str, rel_dir: str) -> list[Listed]:
    """The entries of directory ``root/rel_dir`` by name; one too deep to name in one call
    is listed from its descriptor. An entry whose type cannot be had counts as a file (the
    reader decides what it is, and says so).

    Raises:
        OSError: the directory cannot be listed.
    """
    try:
        with os.scandir(os.path.join(root, rel_dir)) as listing:
            return sorted(_listed(e) for e in listing)
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
    dir_fd = _open_dirs(root, [p for p in rel_dir.split("/") if p])
    try:
        with os.scandir(dir_fd) as listing:
            return sorted(_listed(e) for e in listing)
    finally:
        os.close(dir_fd)


def _listed(entry: os.DirEntry[str]) -> Listed:
    name = entry.name  # (a listing by str path or by descriptor names entries in str)
    try:
        return Listed(name, entry.is_dir(follow_symlinks=False), entry.is_symlink())
    except OSError:
        return Listed(name, False, False)


def _open_beneath(
    root: Path, parts: list[str], rel: str, limits: Limits
) -> tuple[int, os.stat_result] | Omission:
    """Open ``root/parts`` holding each directory by descriptor, never following a link.

    Each directory is opened relative to its parent's descriptor with ``O_NOFOLLOW``, so a
    directory swapped for a symlink after a check cannot redirect the open. The file itself
    is ``lstat``-ed (type and size) before it is opened, and the descriptor must be that inode.

    Raises:
        _SymlinkOnPath: a component is a symlink (the caller resolves and checks it).
    """
    dir_fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _SymlinkOnPath from None
                raise
            os.close(dir_fd)
            dir_fd = next_fd
        checked = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(checked.st_mode):
            raise _SymlinkOnPath
        if not stat.S_ISREG(checked.st_mode):
            return Omission(path=rel, reason="not_regular_file")
        if checked.st_size > limits.max_file_bytes:
            return Omission(path=rel, reason="too_large", size=checked.st_size)
        return os.open(parts[-1], _OPEN_FLAGS, dir_fd=dir_fd), checked
    finally:
        os.close(dir_fd)


def _resolve_target(root: Path, rel: str) -> Path | Omission:
    """The real path a workspace path names, or why it may not be opened."""
    try:
        real = (root / rel).resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as exc:  # dangling, loop (RuntimeError < 3.13)
        return Omission(path=rel, reason=failure_reason(exc))
    if not _contained(root, real) or real == root:
        return Omission(path=rel, reason="symlink_outside_root")
    resolved = real.relative_to(root).as_posix()
    if resolved != rel and is_sensitive_path(resolved):
        return Omission(path=rel, reason="sensitive")
    return real


def _parts(rel: str) -> list[str] | None:
    """The components of a plain relative path; None when ``.``/``..``/empty ones need the
    kernel's resolution (and its containment check) first."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None
    return parts


def read_file(root: Path, rel: str, limits: Limits) -> FileContent | Omission:
    """Read workspace file ``rel`` (POSIX, relative to the resolved ``root``) if it is safe.

    Never raises for anything the filesystem does; every refusal is an ``Omission``.
    """
    if not rel or "\0" in rel or rel.startswith("/"):
        return Omission(path=rel, reason="not_regular_file")
    if is_sensitive_path(rel):
        return Omission(path=rel, reason="sensitive")
    parts = _parts(rel)
    try:
        try:
            if parts is None:
                raise _SymlinkOnPath
            opened = _open_beneath(root, parts, rel, limits)
        except _SymlinkOnPath:
            target = _resolve_target(root, rel)
            if isinstance(target, Omission):
                return target
            # the resolved path has no links; if one appears now, the open refuses it
            opened = _open_beneath(root, list(target.relative_to(root).parts), rel, limits)
    except (OSError, ValueError, _SymlinkOnPath) as exc:  # ValueError: an unencodable name
        return Omission(path=rel, reason=failure_reason(exc))
    if isinstance(opened, Omission):
        return opened
    fd, checked = opened
    try:
        return _read_checked(root, fd, rel, checked, limits)
    except OSError as exc:
        return Omission(path=rel, reason=failure_reason(exc))
    finally:
        os.close(fd)


def _links_to_sensitive(root: Path, rel: str, opened: os.stat_result) -> bool:
    """Whether a file with other hard links is one of a sensitive name beside it or at the
    root (a ``.env`` linked under a neutral name). Names and inodes only: no sensitive file
    is opened. (Discovery checks links across the whole tree; a lone read sees these two
    directories.)"""
    parent = posixpath.dirname(rel)
    for directory in dict.fromkeys((parent, "")):
        try:
            with os.scandir(root / directory) as entries:
                for entry in entries:
                    name = posixpath.join(directory, entry.name) if directory else entry.name
                    if entry.inode() != opened.st_ino or not is_sensitive_path(name):
                        continue
                    st = entry.stat(follow_symlinks=False)
                    if (st.st_dev, st.st_ino) == (opened.st_dev, opened.st_ino):
                        return True
        except OSError:
            continue
    return False


def _read_checked(
    root: Path, fd: int, rel: str, checked: os.stat_result, limits: Limits
) -> FileContent | Omission:
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino) or not stat.S_ISREG(
        opened.st_mode
    ):
        return Omission(path=rel, reason="not_regular_file")
    if opened.st_nlink > 1 and _links_to_sensitive(root, rel, opened):
        return Omission(path=rel, reason="sensitive")
    if opened.st_size > limits.max_file_bytes:
        return Omission(path=rel, reason="too_large", size=opened.st_size)
    chunks: list[bytes] = []
    remaining = limits.max_file_bytes + 1
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    data = b"".join(chunks)
    if len(data) > limits.max_file_bytes:  # grew while being read
        return Omission(path=rel, reason="too_large", size=len(data))
    binary, encoding = classify_encoding(data, limits.binary_prefix_bytes)
    return FileContent(
        path=rel,
        data=data,
        size=len(data),
        mtime_ns=opened.st_mtime_ns,
        sha256=sha256_hex(data),
        binary=binary,
        encoding=encoding,
    )
