"""Where a command's document goes: stdout, or the file ``-o/--output`` names, atomically.

excerpt never writes inside a repository by itself; a path given with ``-o`` is the user's
choice and is written wherever it points, all at once (``core.durable.write_atomic``: a
temporary file beside it, flushed to disk and renamed over it), so a reader never sees half a
document and a failed run leaves the old file as it was.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from excerpt.core import durable
from excerpt.core.escape import for_terminal
from excerpt.errors import UsageError

__all__ = ["emit", "write_user_file"]


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
    write_user_file(Path(output), data)
    sys.stderr.write(f"excerpt: wrote {output} ({len(data):,} bytes)\n")


def _is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        return False


def write_user_file(path: Path, data: bytes) -> None:
    """Write ``data`` all at once (``core.durable.write_atomic``) to a file the user named
    on the command line (``-o``, ``--html``), a failure reported as the user's to fix.

    Raises:
        UsageError: the directory is missing or not writable, or the write failed.
    """
    try:
        durable.write_atomic(path, data)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
