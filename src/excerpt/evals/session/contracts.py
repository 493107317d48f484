"""The built-in tools of Claude Code and Codex as their results reach the model: formats and
limits copied from the pinned clients (Claude Code 2.1.332, Codex 0.171.0), each with where it
comes from. Pure: rows in, the exact text and the lines it shows out.

Where each figure comes from, and how sure it is:

- Read's 2,000 lines from the start, its cut of lines longer than 2,000 characters and its
  ``cat -n``-style numbered gutter are what Claude Code's Read tool description tells the
  model; the gutter's exact form (a number right-aligned in six columns, then ``→``) and the
  empty-file reminder are as Claude Code 2.x prints them, not yet compared byte for byte with
  a recorded 2.1.332 result.
- Grep's output is ripgrep's (``path:line:text``, ``path-line-text`` for context, ``--``
  between groups) behind Claude Code's ``Found N files`` header; its 250-entry default
  ``head_limit`` is an assumption, unverified against 2.1.332.
- Codex 0.171 keeps a tool result whole up to 1.2 x its truncation policy, 10,000 tokens of
  4 bytes for OpenAI's models (48,000 bytes, measured for MCP results by the real-client
  tests, ``excerpt.mcp.clients``), and cuts it in the middle past that; the same policy is
  taken for shell output. Its ``Wall time … Output:`` framing of an MCP result is measured;
  the ``Exit code`` line of a shell result is assumed. Wall time is fixed here, so sessions
  are deterministic.

A row is one line of a file a tool prints: ``(path, line, text, match)``; ``match`` false for
a context line. Every formatter returns the text and, for each file line the text shows, the
bytes that line took in it (what ``Ledger.charge`` attributes to gold files or not).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from excerpt.evals.session.ledger import Shown

__all__ = [
    "CLAUDE_GREP_HEAD_LIMIT",
    "CLAUDE_READ_LIMIT",
    "CLAUDE_READ_LINE_CHARS",
    "CODEX_OUTPUT_BYTES",
    "Row",
    "claude_grep_content",
    "claude_grep_files",
    "claude_read",
    "codex_exec",
]


@dataclass(frozen=True, slots=True)
class Row:
    path: str
    line: int
    text: str
    match: bool = True


# Claude Code: Grep's default head_limit for files_with_matches and content output
CLAUDE_GREP_HEAD_LIMIT = 250
# Claude Code: Read's default limit (lines from the offset) and the characters a line keeps
CLAUDE_READ_LIMIT = 2000
CLAUDE_READ_LINE_CHARS = 2000
# Codex: bytes of a command's output the model receives whole (1.2 x 10,000 tokens of 4
# bytes, its policy for OpenAI's models); past it, head and tail are kept
CODEX_OUTPUT_BYTES = 48_000


EMPTY_FILE = "Warning: the file exists but the contents are empty."


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def claude_grep_files(paths: Sequence[str]) -> str:
    """Grep ``output_mode: files_with_matches``: a count, then one path a line."""
    if not paths:
        return "No files found"
    shown = list(paths[:CLAUDE_GREP_HEAD_LIMIT])
    text = f"Found {len(shown)} file{'s' if len(shown) != 1 else ''}\n" + "\n".join(shown)
    if len(paths) > CLAUDE_GREP_HEAD_LIMIT:
        text += f"\n\n[Showing results with pagination = limit: {CLAUDE_GREP_HEAD_LIMIT}]"
    return text


def claude_grep_content(rows: Sequence[Row]) -> tuple[str, Shown]:
    """Grep ``output_mode: content`` with ``-n``: ripgrep's ``path:line:text`` for a match,
    ``path-line-text`` for context, ``--`` between groups that do not touch."""
    if not rows:
        return "No matches found", []
    out: list[str] = []
    shown: list[tuple[str, int, int]] = []
    previous: Row | None = None
    for row in rows[:CLAUDE_GREP_HEAD_LIMIT]:
        if previous is not None and (row.path != previous.path or row.line > previous.line + 1):
            out.append("--")
        sep = ":" if row.match else "-"
        line = f"{row.path}{sep}{row.line}{sep}{row.text}"
        out.append(line)
        shown.append((row.path, row.line, _bytes(line) + 1))
        previous = row
    return "\n".join(out), shown


def claude_read(path: str, lines: Sequence[str], offset: int, limit: int) -> tuple[str, Shown]:
    """Read: lines ``offset..offset+limit-1`` (1-based), each behind a right-aligned line
    number and an arrow, a line longer than the cut shortened."""
    if not lines:
        return f"<system-reminder>{EMPTY_FILE}</system-reminder>", []
    chosen = lines[offset - 1 : offset - 1 + limit]
    out: list[str] = []
    shown: list[tuple[str, int, int]] = []
    for number, text in enumerate(chosen, start=offset):
        if len(text) > CLAUDE_READ_LINE_CHARS:
            text = text[:CLAUDE_READ_LINE_CHARS] + "... (line truncated)"
        line = f"{number:>6}\u2192{text}"
        out.append(line)
        shown.append((path, number, _bytes(line) + 1))
    return "\n".join(out), shown


def codex_exec(body: Sequence[tuple[str, Row | None]]) -> tuple[str, Shown]:
    """A shell command's result: the framing, then its output, cut in the middle past the
    cap. ``body`` is the output's lines, each with the file line it shows (or None)."""
    lines = [text for text, _ in body]
    total = sum(_bytes(t) + 1 for t in lines)
    keep = list(range(len(lines)))
    marker = ""
    if total > CODEX_OUTPUT_BYTES:
        head, tail, used = [], [], 0
        for i, t in enumerate(lines):
            if used + _bytes(t) + 1 > CODEX_OUTPUT_BYTES // 2:
                break
            head.append(i)
            used += _bytes(t) + 1
        used = 0
        for i in range(len(lines) - 1, head[-1] if head else -1, -1):
            if used + _bytes(lines[i]) + 1 > CODEX_OUTPUT_BYTES // 2:
                break
            tail.append(i)
            used += _bytes(lines[i]) + 1
        keep = head + sorted(tail)
        cut = total - sum(_bytes(lines[i]) + 1 for i in keep)
        marker = f"…{cut // 4} tokens truncated…"
    out: list[str] = []
    shown: list[tuple[str, int, int]] = []
    for position, i in enumerate(keep):
        if marker and position > 0 and keep[position - 1] != i - 1:
            out.append(marker)
        out.append(lines[i])
        row = body[i][1]
        if row is not None:
            shown.append((row.path, row.line, _bytes(lines[i]) + 1))
    text = "\n".join(out)
    return f"Exit code: 0\nWall time: 0.1 seconds\nOutput:\n{text}", shown
