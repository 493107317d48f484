"""The originals of compacted payloads: a content-addressed store in the cache directory.

An original is written once, durably (a temporary file, flushed and fsynced, renamed into
place, the directory fsynced) before its id is handed out. Its file is named by the SHA-256
of its bytes, so reading it back re-hashes it: bytes that do not hash to their name are
``corrupt`` and never returned. The store is capped; past the cap the least recently used
originals are removed, each leaving a tombstone so that asking for it says ``evicted``
rather than "unknown". A file's modification time is its last use (set on store and read).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from excerpt.core.durable import fsync_directory, replace_atomic
from excerpt.core.memo import Memo, register
from excerpt.errors import CacheFault, ExcerptError, UsageError

__all__ = [
    "DEFAULT_CAP",
    "ID_LENGTH",
    "OriginalCorrupt",
    "OriginalEvicted",
    "OriginalUnknown",
    "Store",
    "id_of",
]

ID_LENGTH = 16  # hex digits of the SHA-256 an id keeps: what an elision marker spells out
DEFAULT_CAP = 256 * 1024 * 1024
CAP_ENV = "EXCERPT_COMPACT_STORE_BYTES"
_ID = re.compile(f"[0-9a-f]{{{ID_LENGTH}}}")
_DIGEST = re.compile(r"[0-9a-f]{64}")
_RESCAN = 100
# per store root: its bytes when last listed plus what this process added since, and how
# many originals it stored since (a root dropped from the memo is listed again)
_known: Memo[str, tuple[int | None, int]] = register(Memo("compact_store_sizes", max_entries=256))


class OriginalEvicted(ExcerptError):
    """The original was removed to keep the store under its cap (exit 1)."""

    exit_code = 1
    code = "evicted"


class OriginalUnknown(ExcerptError):
    """No original was ever stored under this id in this cache (exit 1)."""

    exit_code = 1
    code = "unknown_id"


class OriginalCorrupt(CacheFault):
    """The stored file no longer hashes to its name: damaged, never returned (exit 3)."""

    code = "corrupt"


def id_of(data: bytes) -> str:
    """The id of a payload: the first hex digits of its SHA-256."""
    return hashlib.sha256(data).hexdigest()[:ID_LENGTH]


@dataclass(frozen=True, slots=True, kw_only=True)
class Store:
    """Originals under ``root`` (``objects/<2 hex>/<sha256>``, ``tombstones/<id>``), at most
    ``cap`` bytes of them."""

    root: Path
    cap: int = DEFAULT_CAP

    def __post_init__(self) -> None:
        if self.cap <= 0:
            raise ValueError("cap must be positive")

    @classmethod
    def in_cache(cls, cache_root: Path) -> Store:
        """The store of a cache directory; ``$EXCERPT_COMPACT_STORE_BYTES`` sets its cap.

        Raises:
            UsageError: the cap variable is not a positive whole number.
        """
        raw = os.environ.get(CAP_ENV, "").strip()
        if not raw:
            return cls(root=cache_root / "compact")
        if not raw.isdigit() or int(raw) <= 0:
            raise UsageError(f"{CAP_ENV} must be a positive number of bytes, not {raw!r}")
        return cls(root=cache_root / "compact", cap=int(raw))

    def put(self, data: bytes) -> str:
        """Store ``data`` durably and return its id; evicts the least recently used others
        while the store is over its cap.

        Raises:
            CacheFault: the store cannot be written.
        """
        digest = hashlib.sha256(data).hexdigest()
        ident = digest[:ID_LENGTH]
        try:
            folder = self._folder(ident, create=True)
            path = folder / digest
            if not (path.is_file() and _hash_of(path) == digest):
                _write_private(path, data)
            _touch(path)
            tomb = self.root / "tombstones" / ident
            with contextlib.suppress(FileNotFoundError):
                tomb.unlink()
            self._maybe_evict(keep=path, added=len(data))
        except OSError as exc:
            raise CacheFault(f"cannot write the compaction store {self.root}: {exc}") from None
        return ident

    def get(self, ident: str) -> bytes:
        """The exact bytes stored under ``ident``; marks them used.

        Raises:
            UsageError: ``ident`` is not an id.
            OriginalEvicted, OriginalUnknown, OriginalCorrupt: no bytes to give.
        """
        if not _ID.fullmatch(ident):
            raise UsageError(f"not a compaction id: {ident[:40]!r} ({ID_LENGTH} hex digits)")
        folder = self._folder(ident, create=False)
        names = sorted(n for n in _listdir(folder) if n.startswith(ident) and _DIGEST.fullmatch(n))
        if not names:
            if (self.root / "tombstones" / ident).exists():
                raise OriginalEvicted(
                    f"the original of {ident} was evicted from the compaction store (its cap "
                    f"is {self.cap:,} bytes): run the command again"
                )
            raise OriginalUnknown(f"no original is stored under {ident} in {self.root}")
        path = folder / names[0]
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise OriginalCorrupt(f"the original of {ident} cannot be read: {exc}") from None
        if hashlib.sha256(data).hexdigest() != names[0]:
            raise OriginalCorrupt(
                f"the original of {ident} is corrupt (its bytes no longer match their hash): "
                "nothing returned"
            )
        with contextlib.suppress(OSError):
            _touch(path)
        return data

    def _folder(self, ident: str, *, create: bool) -> Path:
        folder = self.root / "objects" / ident[:2]
        if create and not folder.is_dir():
            for path in (self.root, self.root / "objects", folder):
                if not path.is_dir():
                    path.mkdir(mode=0o700, parents=True, exist_ok=True)
                    fsync_directory(path.parent)
        return folder

    def _maybe_evict(self, *, keep: Path, added: int) -> None:
        """Evict when the store may be over its cap. A process counts what it added since it
        last listed the store and lists it again when that could pass the cap, or every
        ``_RESCAN`` stores (another process may have added originals meanwhile)."""
        key = os.fspath(self.root)
        total, puts = _known.get(key) or (None, 0)
        if total is not None and total + added <= self.cap and puts < _RESCAN:
            _known.put(key, (total + added, puts + 1))
            return
        _known.put(key, (self._evict(keep=keep), 0))

    def _evict(self, *, keep: Path) -> int:
        """Remove the least recently used originals (never ``keep``) until under the cap,
        writing each one's tombstone first."""
        entries = []
        objects = self.root / "objects"
        for sub in _scan(os.fspath(objects)):
            for entry in _scan(sub.path):
                if _DIGEST.fullmatch(entry.name):
                    with contextlib.suppress(FileNotFoundError):
                        st = entry.stat(follow_symlinks=False)
                        entries.append((st.st_mtime_ns, entry.name, st.st_size))
        total = sum(size for _, _, size in entries)
        if total <= self.cap:
            return total
        tombs = self.root / "tombstones"
        tombs.mkdir(mode=0o700, exist_ok=True)
        for _, name, size in sorted(entries):
            if total <= self.cap:
                break
            path = objects / name[:2] / name
            if path == keep:
                continue
            _write_private(tombs / name[:ID_LENGTH], f"{name} {size}\n".encode("ascii"))
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            fsync_directory(path.parent)
            total -= size
        return total


def _write_private(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` (readable by its owner only) once this returns, across a
    crash or power cut."""
    replace_atomic(path, data, mode=0o600, crash_points="compact")


def _touch(path: Path) -> None:
    """Mark ``path`` used now (at the clock's resolution, not the filesystem's coarser one,
    so the order of uses is kept)."""
    now = time.time_ns()
    os.utime(path, ns=(now, now))


def _hash_of(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _scan(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _listdir(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except (FileNotFoundError, NotADirectoryError):
        return []
