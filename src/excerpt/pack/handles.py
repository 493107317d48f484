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


# How a rendering shows a control, bidi or zero-width character of a path (``\\u000a``):
# a handle copied from Markdown reads back as the path it names
_ESCAPED = re.compile(r"\\u(00[01][0-9a-f]|007f|00[89][0-9a-f]|202[a-e]|206[6-9]|200[b-f])")


def _unescaped(text: str) -> str:
    if "\\u" not in text:
        return text
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def parse_handle(text: str) -> Handle:
    """Parse a handle; the path is not checked here (see ``retrieve``).

    Raises:
        UsageError: the handle is malformed or its range is not ``1 ≤ start ≤ end``.
    """
    if len(text) > _MAX_HANDLE_CHARS:
        raise UsageError("malformed handle: too long")
    match = _SHAPE.fullmatch(_unescaped(text))
    if match is None:
        raise UsageError("malformed handle: expected PATH#L<start>-L<end>@<16 hex digits>")
    start_s, end_s = match.group("start"), match.group("end")
    if len(start_s) > _MAX_DIGITS or len(end_s) > _MAX_DIGITS:
        raise UsageError("malformed handle: line number too large")
    start, end = int(start_s), int(end_s)
    if not 1 <= start <= end:
        raise UsageError("malformed handle: the range must satisfy 1 <= start <= end")
    return Handle(match.group("path"), start, end, match.group("digest"))
