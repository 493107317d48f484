"""``excerpt mcp``: the MCP stdio server, and ``--check`` to see that it serves."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from excerpt.cli.common import command, complete_as
from excerpt.errors import EnvironmentFault

__all__ = ["register"]


def register(sub: Any) -> None:
    p = command(
        sub,
        "mcp",
        help="serve excerpt's tools over MCP (stdio)",
        description="Serve excerpt's tools over MCP on stdin/stdout. With --check, start the "
        "server in process instead, call it as a client would, and report whether it serves.",
        examples=[
            (
                'claude mcp add excerpt -- ~/excerpt/.venv/bin/excerpt mcp --repo "$PWD"',
                "register the server with Claude Code for the current repository",
            ),
            ("excerpt mcp --check --repo ~/src/shop", "see that it serves, without a client"),
        ],
    )
    complete_as(
        p.add_argument("--repo", default=".", metavar="DIR", help="repository directory"),
        "directory",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="start the server, list its tools, index the repository, report, and exit",
    )
    p.add_argument("--json", action="store_true", help="with --check: machine-readable output")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.mcp import check_server, serve  # the SDK is only imported for the server
    from excerpt.render.text import to_json

    if not args.check:
        serve(args.repo)
        return 0
    report = check_server(args.repo)
    if args.json:
        sys.stdout.write(to_json(report))
        return 0 if report["ok"] else EnvironmentFault.exit_code
    if report["ok"]:
        index = report["index"]
        sys.stdout.write(
            f"excerpt mcp serves {len(report['tools'])} tools on {index['files_indexed']} indexed"
            f" files ({', '.join(report['tools'])}).\n"
        )
    if not report["ok"]:
        raise EnvironmentFault(report["problem"])
    return 0
