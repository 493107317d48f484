"""Which files a block of code opens: one audit hook for the whole test session (audit hooks
cannot be removed), switched on by ``recording_opens``."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from excerpt.discover import reader

_OPENED: list[str] = []
_RECORDING = {"on": False}


def _audit_hook(event: str, args: tuple[Any, ...]) -> None:
    # ``os.open`` raises the same ``open`` event as ``io.open``. A ``dir_fd``-relative open is
    # seen here as a bare name; the reader's ``os`` proxy below records what it really opened.
    if not _RECORDING["on"] or event not in ("open", "os.open") or not args:
        return
    target = args[0]
    if isinstance(target, str | bytes | os.PathLike):
        _OPENED.append(os.fsdecode(target))


class _DirFdRecorder:
    """Stands in for ``os`` inside the guarded reader: every descriptor it opens is recorded as
    the absolute path the kernel says it is (``/proc/self/fd``), not the name it was given."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def open(self, path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        fd = os.open(path, flags, mode, dir_fd=dir_fd)
        if _RECORDING["on"]:
            _OPENED.append(os.readlink(f"/proc/self/fd/{fd}"))
        return fd


sys.addaudithook(_audit_hook)  # this module is imported once per session


@contextlib.contextmanager
def recording_opens() -> Iterator[list[str]]:
    """Record every path this process opens inside the block (``io.open`` and ``os.open``)."""
    _OPENED.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "os", _DirFdRecorder())
        _RECORDING["on"] = True
        try:
            yield _OPENED
        finally:
            _RECORDING["on"] = False
