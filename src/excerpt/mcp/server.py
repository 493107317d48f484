"""The ``excerpt mcp`` server (SPEC §2.1) on the official SDK: the tools of
``excerpt.mcp.tools`` registered in one place, a deadline (``excerpt.mcp.calls``) and an
argument gate in front of them, served over stdio by ``excerpt.mcp.wire``."""

from __future__ import annotations

import inspect
import json
import logging
import re
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Literal, get_args

import anyio
from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.tools.base import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError

from excerpt import __version__
from excerpt.core.escape import escape_controls
from excerpt.discover.walk import resolve_root
from excerpt.errors import ExcerptError
from excerpt.mcp.calls import Deadline
from excerpt.mcp.seeds import SeedService
from excerpt.mcp.session import ServedRepo
from excerpt.mcp.tools import TOOLS
from excerpt.mcp.wire import serve_stdio

__all__ = [
    "CORE_TOOLS",
    "TOOL_SETS",
    "ToolSet",
    "build_server",
    "check_server",
    "listed_definitions",
    "serve",
]

log = logging.getLogger("excerpt.mcp")

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_INSTRUCTIONS = (
    "excerpt finds the exact lines to read first for a task in this repository: call "
    "context_pack with the task before searching, then context_retrieve with its handles."
)
ToolSet = Literal["core", "all"]
TOOL_SETS: tuple[ToolSet, ...] = get_args(ToolSet)
# The tools of the localization loop: what a session lists by default. Each listed tool's
# definition rides along on every model turn of a client that does not defer tools.
CORE_TOOLS = ("context_plan", "context_pack", "context_retrieve")


class _ArgumentGate:
    """Refuse malformed tool arguments before the SDK sees them: unknown keys, wrong types,
    oversized values. The error names the fields only, never the values sent."""

    def __init__(self, models: dict[str, type[BaseModel]]) -> None:
        self.models = models

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        params = ctx.params if isinstance(ctx.params, dict) else {}
        model = self.models.get(str(params.get("name"))) if ctx.method == "tools/call" else None
        if model is None:
            return await call_next(ctx)
        arguments = params.get("arguments") or {}
        try:
            model.model_validate(arguments)
        except ValidationError as exc:
            fields = sorted(
                {".".join(_part(p) for p in e["loc"]) or "arguments" for e in exc.errors()}
            )
            kinds = sorted({str(e["type"]) for e in exc.errors()})
            message = f"invalid arguments: {', '.join(fields)} ({', '.join(kinds)})"
            return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
        return await call_next(ctx)


def _part(part: str | int) -> str:
    """One part of a field's path, as one short line: an unknown key is the client's text,
    shown with its controls escaped and cut at 40 characters."""
    text = str(part)
    return escape_controls(text[:40]) + ("…" if len(text) > 40 else "")


def _strict(model: type[BaseModel]) -> type[BaseModel]:
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, strict=True)
    return type(f"Strict{model.__name__}", (model,), {"model_config": config})


def build_server(
    repo: str | Path,
    cache_dir: Path | None = None,
    tools: ToolSet = "core",
    *,
    seeds: bool = False,
    client: str | None = None,
) -> MCPServer[ServedRepo]:
    """The MCP server for one repository, listing the ``core`` tools (CORE_TOOLS) or
    ``all`` of them; with ``seeds``, it also answers the hooks' seed requests on the
    repository's socket while it runs (``excerpt.mcp.seeds``). A repository that cannot be
    served still gives a server, whose every tool call answers with the problem."""  # fmt: skip
    if tools not in TOOL_SETS:
        raise ValueError(f"tools must be one of {', '.join(TOOL_SETS)}, not {tools!r}")
    try:
        served = ServedRepo(resolve_root(repo), cache_dir, client=client)
    except ExcerptError as exc:
        served = ServedRepo(None, cache_dir, problem=exc.message, client=client)
    listed = [_tool(fn) for fn in TOOLS if tools == "all" or fn.__name__ in CORE_TOOLS]
    gate = _ArgumentGate({t.name: _strict(t.fn_metadata.arg_model) for t in listed})
    instructions = _INSTRUCTIONS
    if served.problem:
        instructions = f"excerpt cannot serve this repository: {served.problem}. " + instructions
    return MCPServer(
        name="excerpt",
        version=__version__,
        instructions=instructions,
        tools=listed,
        middleware=[Deadline(), gate],
        log_level="WARNING",
        lifespan=_serving(served, seeds),
    )


def _tool(fn: Callable[..., Any]) -> Tool:
    """A tool of ``excerpt.mcp.tools``: described by its docstring, read-only, closed."""
    tool = Tool.from_function(
        fn,
        description=inspect.cleandoc(fn.__doc__ or ""),
        annotations=READ_ONLY,
        structured_output=False,
    )
    tool.parameters = _lean(tool.parameters)
    tool.parameters["additionalProperties"] = False
    return tool


# Bounds a model never meets: the argument gate still enforces them, naming the field, but
# listing them would cost every turn's context for nothing.
_UNLISTED_BOUNDS = 1000


def _lean(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema as it is listed: no titles (each repeats its property's name), an optional
    ``X | None = None`` listed as ``X`` (leaving it out is how a client says None), and no
    length bounds of ``_UNLISTED_BOUNDS`` or more."""
    node = {k: v for k, v in schema.items() if k != "title"}
    options = node.get("anyOf")
    if isinstance(options, list) and node.get("default", ...) is None:
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1 and isinstance(kept[0], dict):
            del node["anyOf"], node["default"]
            node = {**kept[0], **node}
    for bound in ("maxLength", "maxItems"):
        if isinstance(node.get(bound), int) and node[bound] >= _UNLISTED_BOUNDS:
            del node[bound]
    if isinstance(node.get("properties"), dict):
        node["properties"] = {k: _lean(v) for k, v in node["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            node[key] = _lean(node[key])
    if isinstance(node.get("anyOf"), list):
        node["anyOf"] = [_lean(o) if isinstance(o, dict) else o for o in node["anyOf"]]
    return node


def listed_definitions(tools: ToolSet = "core", repo: str | Path | None = None) -> str:
    """What a client receives from ``excerpt mcp --tools TOOLS`` before any call, as
    compact JSON: ``tools/list``'s tools and the server's instructions. Its size is what
    being installed costs a client that sends every definition on every turn."""
    from mcp import Client  # the client half of the SDK is needed only here

    async def go() -> dict[str, Any]:
        async with Client(build_server(repo or Path.cwd(), tools=tools)) as client:
            listed = (await client.list_tools()).tools
            return {
                "tools": [t.model_dump(by_alias=True, exclude_none=True) for t in listed],
                "instructions": client.instructions or "",
            }

    return json.dumps(anyio.run(go), separators=(",", ":"), ensure_ascii=False)


def _serving(
    served: ServedRepo, seeds: bool
) -> Callable[[MCPServer[ServedRepo]], AbstractAsyncContextManager[ServedRepo]]:
    """The server's lifespan: every session of it serves ``served`` (``Session``), and with
    ``seeds`` the hooks' seed requests too."""

    @asynccontextmanager
    async def lifespan(_: MCPServer[ServedRepo]) -> AsyncIterator[ServedRepo]:
        served.watch()
        service = SeedService(served) if seeds else None
        if service is not None:
            service.start()
        try:
            yield served
        finally:
            if service is not None:
                service.stop()
            served.unwatch()

    return lifespan


def check_server(
    repo: str | Path, cache_dir: Path | None = None, tools: ToolSet = "core"
) -> dict[str, Any]:
    """Start the server as a client would (in process) and report whether it serves: the
    tools it lists with ``tools`` and their definitions' size, and the repository indexed
    through ``index_status`` (called on a server listing every tool), or the problem."""
    from mcp import Client  # the client half of the SDK is needed only here

    definitions = listed_definitions(tools, repo)

    async def go() -> dict[str, Any]:
        async with Client(build_server(repo, cache_dir, tools="all")) as client:
            status = await client.call_tool("index_status", {})
            text = "".join(c.text for c in status.content if isinstance(c, TextContent))
            listed = [t["name"] for t in json.loads(definitions)["tools"]]
            report: dict[str, Any] = {
                "ok": status.is_error is not True,
                "tools": listed,
                "tool_set": tools,
                "definitions_bytes": len(definitions.encode("utf-8")),
            }
            if status.is_error:  # the SDK's "Error executing tool …: " prefix is not ours
                report["problem"] = re.sub(r"^Error executing tool \w+: ", "", text.strip())
            else:
                report["index"] = status.structured_content
            return report

    return anyio.run(go)


def serve(repo: str | Path, cache_dir: Path | None = None, tools: ToolSet = "core",
          client: str | None = None) -> None:  # fmt: skip
    """Serve over stdio until the client closes the connection."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True)
    try:
        resolve_root(repo)
    except ExcerptError as exc:  # a client shows a server's stderr in its logs
        log.error("cannot serve the repository (every tool call will say so): %s", exc.message)
    serve_stdio(build_server(repo, cache_dir, tools, seeds=True, client=client))
