"""How the CLI reports an error: the only place an exception becomes text and an exit code.

For a person: ``Error: MESSAGE`` on stderr, one line (a rejected command line shows its usage
first). For a machine, when the command line asks for JSON (``--json`` or ``--format json``):
``{"error": MESSAGE, "code": CODE, "exit": N}`` on stdout and the same line on stderr
(SPEC §11). The codes are documented with the exception tree in ``excerpt.errors``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from excerpt.errors import EnvironmentFault, ExcerptError, UsageError

__all__ = ["ArgumentsRejected", "Failure", "failure_of", "report", "wants_json"]

INTERNAL_EXIT = 70
INTERRUPTED_EXIT = 130
# Control characters never reach a terminal raw (an ANSI escape in a file name, say).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class ArgumentsRejected(UsageError):
    """argparse refused the command line; ``usage`` is the usage line shown to a person."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """An error as reported: one-line message, stable code, exit status."""

    message: str
    code: str
    exit: int
    usage: str = ""

    def to_dict(self) -> dict[str, str | int]:
        return {"error": self.message, "code": self.code, "exit": self.exit}


def wants_json(argv: Sequence[str]) -> bool:
    """Whether a command line asks for machine output, read from the raw words so it also
    holds when argparse rejects them (``--json``, ``--format json``, ``--format=json`` and
    the abbreviations argparse accepts); words after ``--`` are operands."""
    for i, word in enumerate(argv):
        if word == "--":
            return False
        option, eq, value = word.partition("=")
        if len(option) >= 3 and "--json".startswith(option) and not eq:
            return True
        if len(option) >= 4 and "--format".startswith(option):
            given = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            if given == "json":
                return True
    return False


def failure_of(exc: BaseException) -> Failure:
    """What to report for ``exc``: its own code for an excerpt error, ``environment_error``
    (exit 3) for an operating-system error, ``interrupted``, else ``internal_error`` (70)."""
    if isinstance(exc, ArgumentsRejected):
        return Failure(message=_one_line(exc.message), code=exc.code, exit=2, usage=exc.usage)
    if isinstance(exc, ExcerptError):
        return Failure(message=_one_line(exc.message), code=exc.code, exit=exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        return Failure(message="interrupted", code="interrupted", exit=INTERRUPTED_EXIT)
    if isinstance(exc, OSError):
        return Failure(
            message=_one_line(_os_message(exc)),
            code=EnvironmentFault.code,
            exit=EnvironmentFault.exit_code,
        )
    message = f"internal error: {type(exc).__name__}: {exc}"
    return Failure(message=_one_line(message), code="internal_error", exit=INTERNAL_EXIT)


def report(failure: Failure, *, machine: bool, stdout: TextIO, stderr: TextIO) -> int:
    """Print ``failure`` in the form asked for and return its exit status."""
    line = json.dumps(failure.to_dict(), ensure_ascii=True) + "\n"
    if machine:
        _write(stdout, line)
    _write(stderr, line if machine else f"{failure.usage}Error: {failure.message}\n")
    return failure.exit


def _write(stream: TextIO, text: str) -> None:
    """Write and flush; a closed stream is passed over (the other one, and the exit
    status, still tell)."""
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        pass


def _os_message(exc: OSError) -> str:
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [os.fsdecode(n) for n in (exc.filename, exc.filename2) if n is not None]
    return f"{' -> '.join(names)}: {reason}" if names else reason


def _one_line(text: str) -> str:
    joined = " ".join(part.strip() for part in text.splitlines() if part.strip())
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", joined)
