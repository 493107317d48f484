"""Reading an input the user names (a file, or ``-`` for stdin) up to a cap, never whole: a
``/dev/zero`` or a sparse 3 GiB file is refused after ``cap + 1`` bytes, not read forever."""

from __future__ import annotations

import sys
from pathlib import Path

from excerpt.errors import UsageError

__all__ = ["read_capped"]


def read_capped(name: str, cap: int, *, reading: str, what: str) -> bytes:
    """The bytes of file ``name`` (``-``: stdin), at most ``cap``.

    Raises:
        UsageError: ``cannot read {reading}: …`` when it cannot be opened or read, ``the
            {what} is larger than N MiB`` past the cap.
    """
    if name == "-":
        data = sys.stdin.buffer.read(cap + 1)
    else:
        try:
            with Path(name).open("rb") as fh:
                data = fh.read(cap + 1)
        except OSError as exc:
            raise UsageError(f"cannot read {reading}: {exc.strerror or exc}") from None
        except ValueError:  # a NUL byte in the name
            raise UsageError(f"cannot read {reading}: not a valid name") from None
    if len(data) > cap:
        raise UsageError(f"the {what} is larger than {cap // 2**20} MiB")
    return data
