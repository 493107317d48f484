"""Durable writes: a directory's entries flushed after a rename, and labelled crash points.

Labelled crash points: where a write could be cut off by a crash, the process can be made
to die on purpose (``EXCERPT_TEST_CRASH_AT=<label>``: ``os._exit(137)``, as a SIGKILL would
leave it), so a test can check what every such moment leaves behind. Unset, a crash point is
one dictionary lookup."""

from __future__ import annotations

import os

__all__ = ["LABELS", "crash_point", "fsync_directory"]

ENV = "EXCERPT_TEST_CRASH_AT"

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
