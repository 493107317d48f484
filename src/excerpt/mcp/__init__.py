"""The MCP server: excerpt's library calls as tools for Claude Code, Codex and any MCP client.

In: JSON-RPC over stdio. Out: tool results with structured content and a readable Markdown
text. Adapters only: every tool calls the same library function as the CLI. Nothing but
JSON-RPC is written to stdout; logs go to stderr; repository text appears only in data
fields, never in tool descriptions or error messages. Every request gets an answer, a
malformed one its JSON-RPC error (``excerpt.mcp.wire``); a tool call that takes longer
than ``EXCERPT_MCP_DEADLINE`` seconds (default 120) is answered with an error while the
server keeps answering others (``excerpt.mcp.calls``).
"""

from excerpt.mcp.server import CORE_TOOLS, build_server, check_server, listed_definitions, serve

__all__ = ["CORE_TOOLS", "build_server", "check_server", "listed_definitions", "serve"]
