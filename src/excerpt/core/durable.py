"""Atomic writes: a file's new bytes put in place all at once, a directory's entries flushed
after a rename, and labelled crash points.

``replace_atomic`` is the one way excerpt writes a file whole or not at all: a temporary file
beside it, renamed over it, so a reader (or the next run after a crash) finds the old file or
the new one, never a part; ``sync`` (the default) flushes file and directory to disk, so the
write survives a power cut too. ``write_atomic`` is that for a path a user or a client's
configuration names (through a symlink, an existing file's mode kept, a pipe written straight
through); ``replace_config`` that for a client's configuration, its old text kept beside it.

Labelled crash points: where a write could be cut off by a crash, the process can be made
to die on purpose (``EXCERPT_TEST_CRASH_AT=<label>``: ``os._exit(137)``, as a SIGKILL would
leave it), so a test can check what every such moment leaves behind. Unset, a crash point is
one dictionary lookup."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Literal

__all__ = [
    "LABELS",
    "WRITE_POINTS",
    "CrashPoints",
    "crash_point",
    "fsync_directory",
    "replace_atomic",
    "replace_config",
    "write_atomic",
]

ENV = "EXCERPT_TEST_CRASH_AT"
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)

# Every label placed in the code, in the order a write passes them.
LABELS = (
    "output.after_temp_write",
    "output.before_replace",
    "output.after_replace",
    "salt.after_temp_write",
    "salt.after_link",
    "compact.after_temp_write",
    "compact.after_replace",
    "index.after_batch",
    "index.before_graph",
    "index.before_clean",
)

CrashPoints = Literal["output", "compact"]
# The labels a ``replace_atomic`` passes, by whose they are: once the temporary file is
# written, just before the rename (None: not labelled), just after it.
WRITE_POINTS: dict[CrashPoints, tuple[str, str | None, str]] = {
    "output": ("output.after_temp_write", "output.before_replace", "output.after_replace"),
    "compact": ("compact.after_temp_write", None, "compact.after_replace"),
}


def crash_point(label: str) -> None:
    """Die here, at once and without cleaning up, when ``EXCERPT_TEST_CRASH_AT`` names
    ``label``."""
    if os.environ.get(ENV) == label:
        os._exit(137)


def fsync_directory(path: os.PathLike[str] | str) -> None:
    """Flush ``path``'s entries (a rename or a new file in it) to disk; a filesystem that
    cannot sync a directory is passed over."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def replace_atomic(
    path: Path,
    data: bytes,
    *,
    mode: int | None = None,
    sync: bool = True,
    crash_points: CrashPoints | None = None,
) -> None:
    """Put ``data`` at ``path`` all at once: written to a new temporary file beside it (the
    same filesystem, so the rename is atomic), then renamed over the name itself (a symlink
    there is replaced, not followed). A failure leaves the old file and no temporary one.

    ``mode``: the new file's permission bits, exactly (``0o600``: private; an existing
    file's, to keep them); None: what a plain ``open`` gives (``0o666`` less the umask).
    ``sync``: the bytes, then the rename, flushed to disk before this returns; off where a
    write lost to a power cut is only made again. ``crash_points``: whose labelled crash
    points (``WRITE_POINTS``) the write passes.

    Raises:
        OSError: the directory is missing or not writable, or the write failed.
    """
    written, before, replaced = WRITE_POINTS[crash_points] if crash_points else (None, None, None)
    temp, fd = _temp_beside(path, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        _crash_at(written)
        if mode is not None:  # exactly: the umask took bits off at creation
            os.chmod(temp, mode)
        _crash_at(before)
        os.replace(temp, path)
        _crash_at(replaced)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if sync:
        fsync_directory(path.parent)  # the rename itself survives a power cut


def _crash_at(label: str | None) -> None:
    if label is not None:
        crash_point(label)


def _temp_beside(target: Path, mode: int) -> tuple[Path, int]:
    """A new, exclusively created file in ``target``'s directory, created with ``mode``
    (less the umask)."""
    for _ in range(100):
        temp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
        try:
            return temp, os.open(temp, _CREATE, mode)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")


def write_atomic(path: Path, data: bytes) -> None:
    """Replace the file a user or a client's configuration names with ``data`` all at once,
    durably (``replace_atomic``): a symlink's target, the link kept; an existing file's mode
    kept.

    A path that exists and is not a regular file (a terminal, a pipe, ``/dev/stdout``) has
    nothing to rename over: it is written straight through.

    Raises:
        OSError: the directory is missing or not writable, or the write failed.
    """
    try:
        existing: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        with open(path, "wb") as fh:  # /dev/stdout may name a pipe no path resolves to
            fh.write(data)
        return
    mode = None if existing is None else stat.S_IMODE(existing.st_mode)
    replace_atomic(Path(os.path.realpath(path)), data, mode=mode, crash_points="output")


def replace_config(path: Path, before: str, after: str) -> None:
    """A client's configuration file replaced by ``after`` whole or not at all (through a
    symlink to its target), its previous text ``before`` kept in ``path.bak``.

    Raises:
        EnvironmentFault: the file or its backup cannot be written.
    """
    from excerpt.errors import EnvironmentFault

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if before:
            write_atomic(path.with_name(path.name + ".bak"), before.encode("utf-8"))
        write_atomic(path, after.encode("utf-8"))
    except OSError as exc:
        raise EnvironmentFault(f"cannot write {path}: {exc.strerror or exc}") from None
