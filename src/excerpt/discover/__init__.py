"""Find the files of a workspace, safely.

In: a root directory and limits. Out: a ``Discovery`` (candidate paths and omissions with
reasons) and, per file, a ``ReadResult`` from the guarded reader. Never follows a symlink out
of the root, never opens a FIFO, device or sensitive path, never writes anything.
"""

from excerpt.discover.reader import FileContent, Omission, read_file
from excerpt.discover.sensitive import is_sensitive_path
from excerpt.discover.walk import Discovery, discover, resolve_root

__all__ = [
    "Discovery",
    "FileContent",
    "Omission",
    "discover",
    "is_sensitive_path",
    "read_file",
    "resolve_root",
]
