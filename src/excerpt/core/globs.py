"""What makes a gitignore-style glob unusable, asked of every include and exclude pattern a
user writes (flags, settings files). Pure."""

from __future__ import annotations

import os

__all__ = ["escapes_nothing", "glob_problem"]


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable gitignore-style glob, or None when it is."""
    if not pattern.strip():
        return "a glob must not be empty"
    if "\0" in pattern or "\n" in pattern or "\r" in pattern:
        return "a glob must be one line without NUL"
    if pattern.startswith("#"):
        return f"{pattern!r} is a comment in gitignore syntax (write \\# for a literal #)"
    if escapes_nothing(pattern):
        return (
            f"{pattern!r} is not a valid gitignore-style glob (a trailing backslash escapes"
            " nothing)"
        )
    return None


def escapes_nothing(line: str) -> bool:
    """Whether an ignore line ends in an unescaped backslash (trailing spaces aside), which
    git keeps and never matches: the one certain mistake a gitignore-style line can hold."""
    encoded = os.fsencode(line)
    while encoded.endswith(b" ") and not encoded.endswith(b"\\ "):
        encoded = encoded[:-1]
    tail = len(encoded) - len(encoded.rstrip(b"\\"))
    return bool(tail % 2) and not encoded.startswith(b"#")
