"""The compaction tools: ``context_compact`` stores a payload and returns its compacted
view; ``context_expand`` returns the part of an original the agent asks for, exact."""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from excerpt.compact import Store, compact, expand
from excerpt.core.limits import MAX_BUDGET, MIN_BUDGET
from excerpt.core.settings import cache_root
from excerpt.errors import ExcerptError
from excerpt.mcp.calls import text_only, tool_call
from excerpt.mcp.session import Client, ServedRepo, Session

__all__ = ["context_compact", "context_expand"]

T = TypeVar("T")
MAX_PAYLOAD = 16 * 1024 * 1024
Payload = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_PAYLOAD,
        description="The tool output to compact, as text: JSON (pip, npm, API responses), a "
        "log (build, test run, server) or a diff (git diff, git log -p).",
    ),
]
Kind = Annotated[
    Literal["auto", "json", "log", "diff"],
    Field(description="What the payload is (default auto: detected from its text)."),
]
Id = Annotated[
    str,
    Field(
        pattern="^[0-9a-f]{16}$",
        description="The id context_compact returned (16 hex digits), as named in its markers.",
    ),
]
Lines = Annotated[
    str | None,
    Field(max_length=40, description='Lines "A-B" of the original (1-based, inclusive).'),
]
Grep = Annotated[
    str | None,
    Field(max_length=1000, description="A Python regular expression: the lines matching it."),
]
JsonPath = Annotated[
    str | None,
    Field(
        max_length=2000,
        description='A JSON path, or a file of a diff. On a JSON original: $, .key, ["key"], '
        "[N], [A:B] (members A to B-1 of an array or object). On a diff (git diff, git log -p): "
        "a file's path, as markers name it; every section of that file, in order.",
    ),
]
Budget = Annotated[
    int | None,
    Field(
        ge=MIN_BUDGET,
        le=MAX_BUDGET,
        description="Largest part, in UTF-8 bytes, to return whole (default: what this client "
        "passes on whole); a larger part is named with its size instead of returned.",
    ),
]


async def context_compact(
    payload: Payload, session: Session, client: Client, kind: Kind = "auto"
) -> CallToolResult:
    """Call on a large JSON, log or diff output before reading it: repetition, passing
    tests, repeated warnings (their locations listed), lockfiles and generated files in
    diffs become markers naming the context_expand call that returns them exactly, while
    errors, failing tests and changed lines stay (under 10% saved, the payload comes back
    unchanged)."""
    store = _store(session)
    budget = client.default_budget - client.framing

    def run() -> CallToolResult:
        done = compact(payload.encode("utf-8", "surrogatepass"), store=store, kind=kind,
                       surface="mcp")  # fmt: skip
        text = done.text + ("" if done.text.endswith("\n") else "\n") + done.summary()
        if len(text.encode("utf-8", "surrogatepass")) > budget:
            text = (
                f"{done.summary()}\nThe compacted view is {done.compacted_bytes:,} bytes, over "
                f"the {budget:,} this client passes on whole: read parts of it with "
                f'context_expand(id="{done.id}", lines="A-B"), grep or path.'
            )
        return text_only(text)

    return await tool_call(run)


async def context_expand(
    id: Id,
    session: Session,
    client: Client,
    lines: Lines = None,
    grep: Grep = None,
    path: JsonPath = None,
    budget: Budget = None,
) -> CallToolResult:
    """Call with a compaction's id to read exactly what a marker replaced: lines, grep, or
    path (a JSON path, or a file of a diff: all its sections), at most one, or the whole
    original; an evicted original is an error."""
    store = _store(session)
    size = (budget or client.default_budget) - client.framing

    def run() -> CallToolResult:
        got = expand(id, store=store, lines=lines, grep=grep, path=path)
        try:
            text = got.data.decode("utf-8")
        except UnicodeDecodeError:
            import base64

            text = "not UTF-8; base64 of the bytes:\n" + base64.b64encode(got.data).decode()
        spans = ", ".join(f"L{a}-L{b}" for a, b in got.lines[:20]) or "none"
        head = f"{id} {got.selection}: {len(got.data):,} bytes, lines {spans}"
        if len(text.encode("utf-8")) + len(head) + 1 > size:
            return text_only(
                f"{head}.\nThat is over the {size:,} bytes to return whole: ask for fewer "
                f"lines (the original has {got.total_lines:,})."
            )
        return text_only(f"{head}\n{text}")

    return await tool_call(run)


def _store(session: ServedRepo) -> Store:
    try:
        return Store.in_cache(session.cache_dir or cache_root())
    except ExcerptError as exc:
        raise ToolError(exc.message) from None
