"""Diagnostics in a log (compilers, linters, type checkers): each one's block of lines, the
location it names and the group it belongs to.

Two layouts are read. Location first, on one line (gcc, clang, mypy, ruff's concise output,
flake8, pylint, tsc, go vet)::

    src/core.c:120:10: warning: conversion from 'long' to 'int' may change value [-Wconversion]
      120 |   return r;
          |          ^

and a header line with the location on the next (rustc, cargo, ruff's full output)::

    warning: unused variable: `x`
     --> src/main.rs:3:9

A block runs from its diagnostic line through the lines that belong to it: indented source
and caret lines and its located ``note:`` lines (location first), or everything up to the
next blank line (header first). Its group is (severity, code, message) with the message's
quoted names and numbers masked, so two ``-Wconversion`` warnings about different types
group together and a different message does not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Diagnostic", "diagnostics"]

_LOCATED = re.compile(
    r"^(?P<loc>(?:[A-Za-z]:[\\/])?[^\s:()\[\]][^:()]*?(?::\d+(?::\d+)?|\(\d+,\d+\))):[ \t]*"
    r"(?:(?P<sev>fatal error|error|warning|note|info|hint|remark)"
    r"(?:\[(?P<code>[^\]]+)\]| (?P<tscode>[A-Z]{1,4}\d{2,5}))?:"
    r"[ \t]*|(?P<lint>[A-Z]{1,4}\d{2,5})\b:?[ \t]+)(?P<msg>\S.*)$"
)
_HEADED = re.compile(
    r"^(?:(?P<sev>error|warning)(?:\[(?P<code>[^\]]+)\])?|(?P<lint>[A-Z]{1,4}\d{2,5})"
    r"(?: \[\*\])?):[ \t]*(?P<msg>\S.*)$"
)
_ARROW = re.compile(r"^[ \t]*--> (?P<loc>\S+?:\d+(?::\d+)?)[ \t]*$")
_CODE_AT_END = re.compile(r"[ \t]+(\[[-\w.:/=]+\]|\([a-z][\w-]*\))[ \t]*$")
_CODE_AT_START = re.compile(r"^([A-Z]{1,4}\d{2,5}):?[ \t]")
_QUOTED = re.compile(r"\u2018[^\u2019]*\u2019|'[^']*'|\"[^\"]*\"|`[^`]*`|«[^»]*»")
_NUMBER = re.compile(r"\d+")
_NOTE = re.compile(r"^(\S[^:]*:\d+(?::\d+)?):[ \t]*note:")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Lines ``start`` to ``end - 1`` (0-based) hold one diagnostic; ``at`` is the line
    that names its ``location`` (``file:line[:col]``, exactly as written)."""

    start: int
    end: int
    at: int
    location: str
    severity: str  # "error", "warning", "note", … or "" for a lint code given alone
    code: str
    template: str
    notes: tuple[str, ...] = ()  # the locations its located notes name (a macro's use site)

    @property
    def group(self) -> tuple[str, str, str]:
        return self.severity, self.code, self.template

    @property
    def is_error(self) -> bool:
        return self.severity in ("error", "fatal error")


def diagnostics(lines: Sequence[str]) -> list[Diagnostic]:
    """The diagnostics of a log given as its lines (without their newlines), in order."""
    out: list[Diagnostic] = []
    n = len(lines)
    i = 0
    while i < n:
        found = _located(lines, i) or _headed(lines, i)
        if found is None:
            i += 1
            continue
        out.append(found)
        i = found.end
    return out


def _located(lines: Sequence[str], i: int) -> Diagnostic | None:
    m = _LOCATED.match(lines[i])
    if m is None or m.group("sev") == "note":
        return None
    j = i + 1
    notes = []
    while j < len(lines) and (_continues(lines[j]) or _NOTE.match(lines[j])):
        note = _NOTE.match(lines[j])
        if note:
            notes.append(note.group(1))
        j += 1
    given = m.group("code") or m.group("tscode") or m.group("lint")
    code, template = _code_and_template(m.group("msg"), given)
    return Diagnostic(
        start=i, end=j, at=i, location=m.group("loc"), severity=m.group("sev") or "",
        code=code, template=template, notes=tuple(notes),
    )  # fmt: skip


def _headed(lines: Sequence[str], i: int) -> Diagnostic | None:
    m = _HEADED.match(lines[i])
    if m is None or i + 1 >= len(lines):
        return None
    arrow = _ARROW.match(lines[i + 1])
    if arrow is None:
        return None
    j = i + 2
    while j < len(lines) and lines[j].strip() and not _HEADED.match(lines[j]):
        j += 1
    code, template = _code_and_template(m.group("msg"), m.group("code") or m.group("lint"))
    return Diagnostic(
        start=i, end=j, at=i + 1, location=arrow.group("loc"), severity=m.group("sev") or "",
        code=code, template=template,
    )  # fmt: skip


def _continues(line: str) -> bool:
    """An indented line under a diagnostic: its source line, caret or fix-it."""
    return line[:1] in (" ", "\t") and bool(line.strip())


def _code_and_template(message: str, code: str | None) -> tuple[str, str]:
    """The diagnostic's code (given in brackets, at the end or the start of the message) and
    the message with what varies between occurrences masked."""
    text = message.strip()
    if not code:
        at_end = _CODE_AT_END.search(text)
        at_start = _CODE_AT_START.match(text)
        if at_end:
            code, text = at_end.group(1), text[: at_end.start()]
        elif at_start:
            code, text = at_start.group(1), text[at_start.end() :]
    template = _NUMBER.sub("#", _QUOTED.sub("\u2018…\u2019", text))
    return code or "", template
