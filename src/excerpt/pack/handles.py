"""Handles: ``PATH#L<start>-L<end>@<first 16 hex of the file's SHA-256>`` (SPEC §3.3).

A handle binds a line range to the exact bytes of a whole file. It is a reference, not a
permission: any range of a verified file may be asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from excerpt.errors import UsageError

__all__ = ["Handle", "format_handle", "parse_handle"]

_MAX_HANDLE_CHARS = 8192
_MAX_DIGITS = 9  # a line number past 999,999,999 is malformed, not a big allocation
_SHAPE = re.compile(
    r"(?P<path>.+)#L(?P<start>[0-9]+)-L(?P<end>[0-9]+)@(?P<digest>[0-9a-f]{16})", re.DOTALL
)


@dataclass(frozen=True, slots=True)
class Handle:
    path: str
    start_line: int
    end_line: int
    digest: str

    def __str__(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}@{self.digest}"


def format_handle(path: str, start_line: int, end_line: int, source_sha256: str) -> str:
    return str(Handle(path, start_line, end_line, source_sha256[:16]))


def parse_handle(text: str) -> Handle:
    """Parse a handle; the path is not checked here (see ``retrieve``).

    Raises:
        UsageError: the handle is malformed or its range is not ``1 ≤ start ≤ end``.
    """
    if len(text) > _MAX_HANDLE_CHARS:
        raise UsageError("malformed handle: too long")
    match = _SHAPE.fullmatch(text)
    if match is None:
        raise UsageError("malformed handle: expected PATH#L<start>-L<end>@<16 hex digits>")
    start_s, end_s = match.group("start"), match.group("end")
    if len(start_s) > _MAX_DIGITS or len(end_s) > _MAX_DIGITS:
        raise UsageError("malformed handle: line number too large")
    start, end = int(start_s), int(end_s)
    if not 1 <= start <= end:
        raise UsageError("malformed handle: the range must satisfy 1 <= start <= end")
    return Handle(match.group("path"), start, end, match.group("digest"))
