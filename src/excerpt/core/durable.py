"""Durable writes: a file replaced atomically, a directory's entries flushed after a rename,
and labelled crash points.

Labelled crash points: where a write could be cut off by a crash, the process can be made
to die on purpose (``EXCERPT_TEST_CRASH_AT=<label>``: ``os._exit(137)``, as a SIGKILL would
leave it), so a test can check what every such moment leaves behind. Unset, a crash point is
one dictionary lookup."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = ["LABELS", "crash_point", "fsync_directory", "replace_config", "write_atomic"]

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


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once, durably (a symlink: its target, the link
    kept; an existing file's mode kept).

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
    _replace(Path(os.path.realpath(path)), data, existing)


def _replace(target: Path, data: bytes, existing: os.stat_result | None) -> None:
    temp, fd = _temp_beside(target)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        crash_point("output.after_temp_write")
        if existing is not None:  # overwriting keeps the file's mode; a new one gets the umask's
            os.chmod(temp, stat.S_IMODE(existing.st_mode))
        crash_point("output.before_replace")
        os.replace(temp, target)
        crash_point("output.after_replace")
        fsync_directory(target.parent)  # the rename itself survives a power cut
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _temp_beside(target: Path) -> tuple[Path, int]:
    """A new, exclusively created file in ``target``'s directory (the same filesystem, so the
    rename is atomic), with the mode a plain ``open`` would give it."""
    for _ in range(100):
        temp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
        try:
            return temp, os.open(temp, _CREATE, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")


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
