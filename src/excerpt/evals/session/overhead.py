"""What having excerpt installed costs every model turn: its MCP tool definitions (as
``tools/list`` gives them) and its server instructions, as one compact JSON text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

__all__ = ["CORE_TOOLS", "definitions_text"]

# the tools of the localization loop, which a session lists by default
CORE_TOOLS = ("context_plan", "context_pack", "context_retrieve")


def definitions_text(selection: str = "core", repo: Path | None = None) -> str:
    """The tool definitions and instructions a client receives from ``excerpt mcp``, as
    compact JSON (``selection`` ``core``: the core tools only; ``all``: every tool)."""
    from mcp import Client

    from excerpt.mcp.server import build_server

    async def go() -> dict[str, Any]:
        async with Client(build_server(repo or Path.cwd())) as client:
            listed = (await client.list_tools()).tools
            tools = [
                t.model_dump(by_alias=True, exclude_none=True)
                for t in listed
                if selection == "all" or t.name in CORE_TOOLS
            ]
            return {"tools": tools, "instructions": client.instructions or ""}

    return json.dumps(anyio.run(go), separators=(",", ":"), ensure_ascii=False)
