"""The built-in tools of Claude Code and Codex as their results reach the model: formats and
limits of the pinned clients (Claude Code 2.1.332, Codex 0.171.0), each recorded from the
real clients through the loopback model stub of ``tests/real_clients.py`` (the tool results
in the request that follows each call) unless it says otherwise. Pure: rows in, the exact
text and the lines it shows out.

Claude Code 2.1.332 offers no Grep or Glob tool: a model searches through ``Bash``, whose
result is the command's output with its last newline dropped, ``(Bash completed with no
output)`` for none, and past 30,000 characters a ``<persisted-output>`` note with a preview
of the whole lines in its first 2,000 bytes. ``Read`` numbers each line as ``N<TAB>text``,
keeps long lines whole, reads a whole file (its description's "up to 2000 lines" is not
applied) unless the part read is over 262,144 bytes, which is an error naming ``offset``
and ``limit``, or over 25,000 tokens (counted by the model provider; o200k here), which gives
the lines that fill 85% of that cap and a note naming the next page (limits in the client's
code, behaviour recorded); a read that reaches the end of a file ending in a newline shows
one more, empty, numbered line.

Codex 0.171.0 runs commands through ``exec_command``: the output behind ``Chunk ID``, ``Wall
time``, ``Process exited with code N``, ``Original token count`` (bytes / 4, rounded up) and
``Output:``; past 10,000 tokens (the tool's default ``max_output_tokens``) it keeps the first
and last 20,000 bytes around ``…N tokens truncated…``, after a ``Warning: truncated output``
line and the total line count. The chunk id (random) and wall time are fixed here, with
their real lengths, so sessions are deterministic.

A row is one line of a file a tool prints: ``(path, line, text, match)``; ``match`` false for
a context line. Every formatter returns the text and, for each file line the text shows, the
bytes that line took in it (what ``Ledger.charge`` attributes to gold files or not).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from excerpt_bench.session.ledger import Shown

__all__ = [
    "CLAUDE_BASH_CHARS",
    "CLAUDE_READ_LIMIT",
    "CLAUDE_READ_MAX_BYTES",
    "CLAUDE_READ_MAX_TOKENS",
    "CODEX_OUTPUT_TOKENS",
    "Row",
    "claude_bash",
    "claude_read",
    "codex_exec",
    "rg_rows",
]


@dataclass(frozen=True, slots=True)
class Row:
    path: str
    line: int
    text: str
    match: bool = True


# Claude Code: Bash output kept whole up to this many characters; past it, a preview
CLAUDE_BASH_CHARS = 30_000
CLAUDE_PREVIEW_BYTES = 2000
# where Claude Code saves an output too large to show: its length, not this machine's path
PERSISTED_PATH = (
    "/home/user/.claude/projects/-home-user-src-project/"
    "00000000-0000-0000-0000-000000000000/tool-results/b00000000.txt"
)
# Claude Code: Read's limits on the part read, and the lines a scripted agent asks for at
# once when a whole file is over them (its description's default)
CLAUDE_READ_MAX_BYTES = 262_144
CLAUDE_READ_MAX_TOKENS = 25_000
CLAUDE_READ_LIMIT = 2000
CLAUDE_PARTIAL_SHARE = 0.85  # of the token cap, what a partial view fills
# Codex: exec_command's default max_output_tokens, at 4 bytes a token
CODEX_OUTPUT_TOKENS = 10_000
BYTES_PER_TOKEN = 4

EMPTY_FILE = "Warning: the file exists but the contents are empty."
NO_OUTPUT = "(Bash completed with no output)"
_READ_HINT_ANYWAY = (
    "To read it anyway, up to what still fits in your context, call Read again with "
    "allow_large: true \u2014 only if you genuinely need all of it or the user asked for the "
    "whole file."
)
_READ_HINT = (
    "Use offset and limit parameters to read specific portions of the file, or search for "
    f"specific content instead of reading the whole file. {_READ_HINT_ANYWAY}"
)


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _kb(size: int) -> str:
    """Claude Code's size: kilobytes to one decimal, a trailing ``.0`` dropped."""
    return f"{size / 1024:.1f}".removesuffix(".0") + "KB"


def rg_rows(
    rows: Sequence[Row], *, with_path: bool = True, context: bool = False
) -> list[tuple[str, Row]]:
    """ripgrep's ``-n`` lines for ``rows``: ``path:line:text`` for a match, ``path-line-text``
    for context, and with ``context`` (``-C``) ``--`` between groups that do not touch (no
    path for a one-file search)."""
    out: list[tuple[str, Row]] = []
    previous: Row | None = None
    for row in rows:
        apart = previous is not None and (row.path != previous.path or row.line > previous.line + 1)
        if context and apart:
            out.append(("--", Row("", 0, "")))
        sep = ":" if row.match else "-"
        head = f"{row.path}{sep}" if with_path else ""
        out.append((f"{head}{row.line}{sep}{row.text}", row))
        previous = row
    return out


def claude_bash(body: Sequence[tuple[str, Row | None]]) -> tuple[str, Shown]:
    """A Bash result: the output's lines (each with the file line it shows, or None)."""
    lines = [text for text, _ in body]
    output = "\n".join(lines)
    if not output:
        return NO_OUTPUT, []
    keep = len(lines)
    if len(output) > CLAUDE_BASH_CHARS:
        used, keep = 0, 0
        for text in lines:
            if used + _bytes(text) + 1 > CLAUDE_PREVIEW_BYTES:
                break
            used, keep = used + _bytes(text) + 1, keep + 1
        preview = "".join(t + "\n" for t in lines[:keep])
        output = (
            f"<persisted-output>\nOutput too large ({_kb(_bytes(output))}). Full output "
            f"saved to: {PERSISTED_PATH}\n\nPreview (first 2KB):\n{preview}...\n"
            "</persisted-output>"
        )
    shown = [
        (row.path, row.line, _bytes(text) + 1)
        for text, row in body[:keep]
        if row is not None and row.path
    ]
    return output, shown


def claude_read(
    path: str,
    lines: Sequence[str],
    offset: int,
    limit: int | None,
    *,
    final_newline: bool,
    count: Callable[[str], int],
) -> tuple[str, Shown, int | None]:
    """Read: lines ``offset..offset+limit-1`` (1-based; ``limit`` None: to the end), each as
    ``N<TAB>text``. The third value is where to go on (the next line to ask for), or None
    when the part came whole: a part over Read's size limit is only its error; over its
    token cap (``count``: the client counts with its model's tokenizer), a partial view of
    the lines that fill 85% of the cap, and the note that names the next page."""
    if not lines:
        return f"<system-reminder>{EMPTY_FILE}</system-reminder>", [], None
    end = len(lines) if limit is None else min(len(lines), offset - 1 + limit)
    chosen = list(lines[offset - 1 : end])
    size = sum(_bytes(t) + 1 for t in chosen)
    if size > CLAUDE_READ_MAX_BYTES:
        return (
            (
                f"File content ({_kb(size)}) exceeds maximum allowed size "
                f"({CLAUDE_READ_MAX_BYTES // 1024}KB). {_READ_HINT}"
            ),
            [],
            offset,
        )
    numbered = [f"{n}\t{t}" for n, t in enumerate(chosen, start=offset)]
    if end == len(lines) and final_newline:
        numbered.append(f"{end + 1}\t")
    text = "\n".join(numbered)
    tokens = count(text)
    going_on = None
    if tokens > CLAUDE_READ_MAX_TOKENS:
        total = len(numbered)
        keep = max(1, math.floor(total * CLAUDE_PARTIAL_SHARE * CLAUDE_READ_MAX_TOKENS / tokens))
        numbered = numbered[:keep]
        going_on = offset + keep
        text = "\n".join(numbered) + (
            f"\n[Truncated: PARTIAL view \u2014 {path}: showing lines {offset}-{going_on - 1} "
            f"of {total} total ({tokens} tokens, cap {CLAUDE_READ_MAX_TOKENS}). Call Read with "
            f"offset={going_on} limit={keep} for the next page, or Grep to find a specific "
            f"section. {_READ_HINT_ANYWAY} Do NOT answer from this page alone if the answer may "
            "be further in the file.]"
        )
    shown = [
        (path, n, _bytes(line) + 1)
        for n, line in zip(range(offset, end + 1), numbered, strict=False)
    ]
    return text, shown, going_on


def codex_exec(body: Sequence[tuple[str, Row | None]], exit_code: int = 0) -> tuple[str, Shown]:
    """An ``exec_command`` result: the framing, then the output (each line with the file line
    it shows, or None), its middle cut past the token cap."""
    data = "".join(text + "\n" for text, _ in body).encode("utf-8")
    tokens = math.ceil(len(data) / BYTES_PER_TOKEN)
    spans: list[tuple[int, int]] = []  # each line's byte range in the output
    at = 0
    for text, _ in body:
        spans.append((at, at + _bytes(text) + 1))
        at += _bytes(text) + 1
    if tokens > CODEX_OUTPUT_TOKENS:
        half = CODEX_OUTPUT_TOKENS * BYTES_PER_TOKEN // 2
        head, tail = data[:half], data[len(data) - half :]
        output = (
            f"Warning: truncated output (original token count: {tokens})\n"
            f"Total output lines: {len(body)}\n\n"
            + head.decode("utf-8", "ignore")
            + f"\u2026{tokens - CODEX_OUTPUT_TOKENS} tokens truncated\u2026"
            + tail.decode("utf-8", "ignore")
        )
        kept = [b <= half or a >= len(data) - half for a, b in spans]
    else:
        output = data.decode("utf-8")
        kept = [True] * len(body)
    shown = [
        (row.path, row.line, b - a)
        for (_, row), (a, b), k in zip(body, spans, kept, strict=True)
        if k and row is not None and row.path
    ]
    framing = (
        "Chunk ID: 000000\nWall time: 0.0000 seconds\n"
        f"Process exited with code {exit_code}\nOriginal token count: {tokens}\nOutput:\n"
    )
    return framing + output, shown
