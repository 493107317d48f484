"""JSON-RPC 2.0 over stdio for ``excerpt mcp``, every line judged by ``excerpt.mcp.frames``
before the SDK sees it, so that every request is answered.

A line longer than ``MAX_FRAME`` bytes is answered with -32600 (id null) and skipped, not
kept. While serving, fd 0 reads the null device and fd 1 writes to stderr, so nothing but
JSON-RPC reaches the wire; stdin and stdout are read and written from daemon threads, so a
call abandoned at shutdown never holds the process open. The server ends when the client
closes stdin or stdout.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, BinaryIO

import anyio
from anyio import CancelScope
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server import MCPServer
from mcp.shared.message import SessionMessage
from mcp.types import INTERNAL_ERROR, INVALID_REQUEST, ErrorData, JSONRPCError, JSONRPCResponse
from pydantic_core import PydanticSerializationError

from excerpt.mcp.calls import in_thread
from excerpt.mcp.frames import error_frame, read_frame

__all__ = ["MAX_FRAME", "serve_pipes", "serve_stdio"]

log = logging.getLogger("excerpt.mcp")

MAX_FRAME = 16 * 1024 * 1024  # bytes in one line; a 10 MB argument still gets its isError
_CHUNK = 1 << 20


async def serve_pipes(server: MCPServer[Any], stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Serve ``server`` on one connection: JSON-RPC lines read from ``stdin``, written to
    ``stdout``, until ``stdin`` ends or ``stdout`` is closed."""
    lowlevel = server._lowlevel_server  # the SDK's own in-process Client runs it this way
    to_server, from_wire = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_wire, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_read, stdin, to_server, to_wire.clone())
        tg.start_soon(_write, stdout, from_server, tg.cancel_scope)
        await lowlevel.run(from_wire, to_wire, lowlevel.create_initialization_options())


async def _read(
    stdin: BinaryIO,
    to_server: MemoryObjectSendStream[SessionMessage | Exception],
    to_wire: MemoryObjectSendStream[SessionMessage],
) -> None:
    async with to_server, to_wire:
        while True:
            try:
                line = await in_thread(partial(stdin.readline, MAX_FRAME + 1))
            except (OSError, ValueError):  # stdin unreadable or closed: the client is gone
                return
            if not line:
                return
            if len(line) > MAX_FRAME and not line.endswith(b"\n"):
                if not await in_thread(partial(_skip_line, stdin)):
                    return
                detail = f"a message larger than {MAX_FRAME >> 20} MiB"
                frame = error_frame(None, INVALID_REQUEST, "Invalid Request", detail)
            else:
                frame = await in_thread(partial(read_frame, line))
            if frame.message is not None:
                await to_server.send(frame.message)
            if frame.reply is not None:
                await to_wire.send(frame.reply)


def _skip_line(stdin: BinaryIO) -> bool:
    """Read past the rest of an oversized line; False when stdin ended first."""
    while True:
        chunk = stdin.readline(_CHUNK)
        if not chunk:
            return False
        if chunk.endswith(b"\n"):
            return True


async def _write(
    stdout: BinaryIO, from_server: MemoryObjectReceiveStream[SessionMessage], scope: CancelScope
) -> None:
    async with from_server:
        async for session_message in from_server:
            text = _encode(session_message)
            if text is None:
                continue
            data = text.encode("utf-8") + b"\n"
            try:
                await in_thread(partial(_put, stdout, data))
            except (OSError, ValueError):  # stdout closed: nobody reads any answer
                log.debug("stdout is closed; stopping")
                scope.cancel()
                return


def _put(stdout: BinaryIO, data: bytes) -> None:
    stdout.write(data)
    stdout.flush()


def _encode(session_message: SessionMessage) -> str | None:
    """The message as one line of JSON; an answer that cannot be encoded (text that is not
    Unicode: never expected) becomes an internal error, anything else is dropped."""
    message = session_message.message
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        log.warning("a message could not be encoded as JSON")
        if not isinstance(message, JSONRPCResponse | JSONRPCError):
            return None
        error = JSONRPCError(
            jsonrpc="2.0",
            id=message.id,
            error=ErrorData(code=INTERNAL_ERROR, message="Internal error", data="not encodable"),
        )
        return error.model_dump_json(by_alias=True, exclude_unset=True)


def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` on this process's stdin and stdout until the client closes either."""
    with _claimed(0, os.O_RDONLY) as wire_in, _claimed(1, os.O_WRONLY) as wire_out:
        stdin = os.fdopen(wire_in, "rb", closefd=False)
        stdout = os.fdopen(wire_out, "wb", closefd=False)
        try:
            anyio.run(serve_pipes, server, stdin, stdout)
        finally:
            for stream in (stdin, stdout):
                with contextlib.suppress(OSError):  # a closed stdout: nothing left to say
                    stream.close()


@contextmanager
def _claimed(fd: int, mode: int) -> Iterator[int]:
    """A private copy of ``fd`` for the wire while ``fd`` itself points elsewhere (stdin at
    the null device, stdout at stderr), so that nothing else reads or writes the wire.
    When ``fd`` cannot be copied or diverted, it is served as it is."""
    try:
        private = os.dup(fd)
    except OSError:  # not open: reading or writing it fails, and the server ends
        yield fd
        return
    os.set_inheritable(private, False)
    try:
        elsewhere = os.open(os.devnull, mode) if fd == 0 else os.dup(2)
        try:
            os.dup2(elsewhere, fd)
        finally:
            os.close(elsewhere)
    except OSError:
        os.close(private)
        yield fd
        return
    try:
        yield private
    finally:
        os.dup2(private, fd)
        os.close(private)
