"""Where a command's document goes: stdout, or the file ``-o/--output`` names, atomically.

excerpt never writes inside a repository by itself; a path given with ``-o`` is the user's
choice and is written wherever it points. The document is written to a temporary file in the
target's directory, flushed to disk, and renamed over the target, so a reader never sees half
a document and a failed run leaves the old file as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
from pathlib import Path

from excerpt.core.durable import crash_point, fsync_directory
from excerpt.core.escape import for_terminal
from excerpt.errors import UsageError

__all__ = ["emit", "write_atomic"]

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def emit(args: argparse.Namespace, text: str) -> None:
    """Write ``text`` to ``args.output`` when it names a file (``-`` is stdout), else stdout;
    to a terminal with the characters it would act on escaped (``for_terminal``), to a file
    or pipe byte for byte.

    Raises:
        UsageError: the file cannot be written.
    """
    output = getattr(args, "output", None)
    if output is None or str(output) == "-":
        sys.stdout.write(for_terminal(text) if _is_terminal(sys.stdout) else text)
        return
    data = text.encode("utf-8")
    write_atomic(Path(output), data)
    sys.stderr.write(f"excerpt: wrote {output} ({len(data):,} bytes)\n")


def _is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        return False


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once (a symlink: its target, the link kept).

    A path that exists and is not a regular file (a terminal, a pipe, ``/dev/stdout``) has
    nothing to rename over: it is written straight through.

    Raises:
        UsageError: the directory is missing or not writable, or the write failed.
    """
    try:
        try:
            existing: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            existing = None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            with open(path, "wb") as fh:  # /dev/stdout may name a pipe no path resolves to
                fh.write(data)
            return
        _replace(Path(os.path.realpath(path)), data, existing)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


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
