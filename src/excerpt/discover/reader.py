"""The guarded reader: the only code that opens workspace files.

Order of checks, each before any open: sensitive name, ``lstat`` type, symlink target
resolved and contained by whole path components, sensitive target, regular file. The file is
then opened with ``O_NOFOLLOW | O_NONBLOCK`` and the descriptor's ``(st_dev, st_ino)`` must be
the one that was checked, so a swap between check and open is refused. Size comes from
``fstat`` and nothing past the cap is read.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from excerpt.core.hashing import sha256_hex
from excerpt.core.settings import Limits
from excerpt.discover.sensitive import is_sensitive_path

__all__ = ["FileContent", "Omission", "classify_encoding", "read_file"]

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


def _contained(root: Path, target: Path) -> bool:
    # Path.is_relative_to compares whole components: /repo_evil is not inside /repo.
    return target == root or target.is_relative_to(root)


def _resolve_target(root: Path, rel: str) -> Path | Omission:
    """The real path a workspace path names, or why it may not be opened."""
    try:
        real = (root / rel).resolve(strict=True)
    except (OSError, RuntimeError):  # dangling link, loop (RuntimeError before 3.13), EACCES
        return Omission(path=rel, reason="not_regular_file")
    if not _contained(root, real):
        return Omission(path=rel, reason="symlink_outside_root")
    resolved = real.relative_to(root).as_posix()
    if resolved != rel and is_sensitive_path(resolved):
        return Omission(path=rel, reason="sensitive")
    return real


def read_file(root: Path, rel: str, limits: Limits) -> FileContent | Omission:
    """Read workspace file ``rel`` (POSIX, relative to the resolved ``root``) if it is safe.

    Never raises for anything the filesystem does; every refusal is an ``Omission``.
    """
    if is_sensitive_path(rel):
        return Omission(path=rel, reason="sensitive")
    target = _resolve_target(root, rel)
    if isinstance(target, Omission):
        return target
    try:
        checked = os.stat(target, follow_symlinks=False)
    except OSError:
        return Omission(path=rel, reason="not_regular_file")
    if not stat.S_ISREG(checked.st_mode):
        return Omission(path=rel, reason="not_regular_file")
    if checked.st_size > limits.max_file_bytes:
        return Omission(path=rel, reason="too_large", size=checked.st_size)
    try:
        fd = os.open(target, _OPEN_FLAGS)
    except OSError:
        return Omission(path=rel, reason="not_regular_file")
    try:
        return _read_checked(fd, rel, checked, limits)
    except OSError:
        return Omission(path=rel, reason="not_regular_file")
    finally:
        os.close(fd)


def _read_checked(
    fd: int, rel: str, checked: os.stat_result, limits: Limits
) -> FileContent | Omission:
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino) or not stat.S_ISREG(
        opened.st_mode
    ):
        return Omission(path=rel, reason="not_regular_file")
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
