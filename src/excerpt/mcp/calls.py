"""A tool call's blocking work: off the event loop, under a deadline, abandoned when late.

Each piece of blocking work runs in a daemon thread of its own while the event loop keeps
answering pings, other calls and cancellations. A tool call still running at its deadline
(``EXCERPT_MCP_DEADLINE`` seconds, default 120) is answered with an ``isError`` result
saying so; a client's ``notifications/cancelled`` ends the wait the same way, unanswered as
the protocol asks. The late work is abandoned, not stopped (Python cannot stop a thread): it
runs on unobserved and its result is dropped. Daemon threads never hold the process open
once the client has gone, and while ``MAX_ABANDONED`` abandoned calls still run, new calls
are refused instead of piling more work on the interpreter.

Not covered: work that holds the interpreter lock inside C (a backtracking regular
expression) stops the event loop itself, deadline included. Such work is removed where it
is written (linear-time matching for untrusted text).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import math
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from excerpt.errors import ExcerptError

__all__ = [
    "DEADLINE_ENV",
    "DEFAULT_DEADLINE",
    "MAX_ABANDONED",
    "Deadline",
    "deadline",
    "in_thread",
    "off_loop",
    "text_only",
    "tool_call",
]

T = TypeVar("T")
log = logging.getLogger("excerpt.mcp")

DEADLINE_ENV = "EXCERPT_MCP_DEADLINE"
DEFAULT_DEADLINE = 120.0  # seconds
MAX_ABANDONED = 4

_abandoned: set[threading.Thread] = set()
_abandoned_lock = threading.Lock()


def deadline() -> float:
    """The per-call deadline in seconds: ``EXCERPT_MCP_DEADLINE`` when it is a positive
    number, else the default (an unusable value is logged once)."""
    return _parse_deadline(os.environ.get(DEADLINE_ENV, ""))


@functools.lru_cache(maxsize=8)
def _parse_deadline(raw: str) -> float:
    if not raw.strip():
        return DEFAULT_DEADLINE
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and value > 0:
        return value
    log.warning("%s must be a positive number of seconds; using %g", DEADLINE_ENV, DEFAULT_DEADLINE)
    return DEFAULT_DEADLINE


class Deadline:
    """Middleware: a ``tools/call`` that outlives the deadline is answered with an error.

    The deadline covers the whole call, waiting for the client's roots included; the work
    under it is abandoned (``off_loop``)."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        seconds = deadline()
        with anyio.move_on_after(seconds):
            return await call_next(ctx)
        params = ctx.params if isinstance(ctx.params, dict) else {}
        name = params.get("name")
        tool = name if isinstance(name, str) and name.isidentifier() else "this call"
        message = (
            f"{tool} took longer than {seconds:g} s; it was abandoned and its result will not"
            f" come. Try a shorter task or fewer paths, or raise {DEADLINE_ENV} (seconds)"
            " where this server is registered."
        )
        return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


async def off_loop(fn: Callable[[], T]) -> T:
    """Run a tool call's work in a daemon thread and wait for it; a cancelled wait
    abandons the thread, which ``MAX_ABANDONED`` counts while it still runs.

    Raises:
        ToolError: ``MAX_ABANDONED`` abandoned calls are still running.
    """
    still_running = _still_running()
    if still_running >= MAX_ABANDONED:
        raise ToolError(
            f"{still_running} earlier calls are still running past their deadline; try again"
            " when they finish, or restart this MCP server to stop them"
        )
    return await in_thread(fn, on_abandon=_abandon)


async def tool_call(fn: Callable[[], T]) -> T:
    """Run a blocking library call, and the rendering of its result, off the event loop
    (abandoned when the call is cancelled or late); library errors become tool errors."""
    try:
        return await off_loop(fn)
    except ExcerptError as exc:
        raise ToolError(exc.message) from None


def text_only(text: str) -> CallToolResult:
    """A model-facing result: the text as the only content. No structured content, which
    Claude Code and Codex would forward in its place."""
    return CallToolResult(content=[TextContent(type="text", text=text)])


async def in_thread(
    fn: Callable[[], T], on_abandon: Callable[[threading.Thread], None] | None = None
) -> T:
    """Run ``fn`` in a daemon thread of its own and wait for it; when the wait is
    cancelled the thread runs on (``on_abandon`` is told) and its result is dropped."""
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    outcome: list[tuple[bool, Any]] = []
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome.append((True, context.run(fn)))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting task below
            outcome.append((False, exc))
        with contextlib.suppress(RuntimeError):  # the event loop has ended: nobody waits
            anyio.from_thread.run_sync(done.set, token=token)

    thread = threading.Thread(target=work, name="excerpt mcp worker", daemon=True)
    thread.start()
    try:
        await done.wait()
    finally:
        if not outcome and on_abandon is not None:  # cancelled: deadline, client, shutdown
            on_abandon(thread)
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def _abandon(thread: threading.Thread) -> None:
    with _abandoned_lock:
        _abandoned.add(thread)


def _still_running() -> int:
    with _abandoned_lock:
        for thread in [t for t in _abandoned if not t.is_alive()]:
            _abandoned.discard(thread)
        return len(_abandoned)
