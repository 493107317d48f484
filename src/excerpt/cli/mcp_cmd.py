"""``excerpt mcp``: the MCP stdio server."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("mcp", help="serve excerpt's tools over MCP (stdio)")
    p.add_argument("--repo", default=".", help="repository directory (default: .)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.mcp import serve  # the SDK is only imported for the server

    serve(args.repo)
    return 0
