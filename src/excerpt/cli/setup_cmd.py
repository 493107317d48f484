"""``excerpt setup claude|codex``: register the MCP server with a client, check that it
serves, and say what to type next."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from excerpt.cli.common import command, complete_as
from excerpt.cli.mcp_cmd import TOOL_SETS
from excerpt.errors import EnvironmentFault

__all__ = ["register"]

_NEXT = {
    "claude": "claude mcp list      # excerpt: … - ✔ Connected\n"
    "then, in Claude Code: ask for context on a task, e.g. \"use excerpt's context_pack for:"
    ' <the issue>"',
    "codex": "codex mcp list       # excerpt  …  enabled\n"
    "then, in Codex: ask for context on a task, e.g. \"use excerpt's context_pack for:"
    ' <the issue>"',
}


def register(sub: Any) -> None:
    p = command(
        sub,
        "setup",
        help="register excerpt's MCP server with Claude Code or Codex",
        description="Register `excerpt mcp` for a repository with Claude Code (`claude mcp "
        "add`) or Codex (`[mcp_servers.excerpt]` in ~/.codex/config.toml, other keys kept, a "
        "backup beside it), by this installation's absolute path; then check that the server "
        "serves (as `excerpt mcp --check`) and print what to type next. Running it again "
        "changes nothing; --print only prints.",
        examples=[
            ("excerpt setup claude --repo ~/src/shop", "register with Claude Code, this user"),
            ("excerpt setup codex --print", "show the Codex table it would write"),
        ],
    )
    p.add_argument("client", choices=("claude", "codex"), help="the client to register with")
    complete_as(
        p.add_argument("--repo", default=".", metavar="DIR", help="repository to serve"),
        "directory",
    )
    p.add_argument(
        "--scope",
        choices=("local", "user", "project"),
        default=None,
        help="Claude Code's scope: local (default: this project, for you), user (every "
        "project) or project (the repository's .mcp.json, which Claude writes); Codex: user",
    )
    p.add_argument("--tools", choices=TOOL_SETS, default="core", help="which tools to list")
    p.add_argument("--print", action="store_true", help="print what would be done, do nothing")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.index.build import resolve_root
    from excerpt.mcp.register import Scope
    from excerpt.mcp.register import register as register_with
    from excerpt.render.text import to_json

    repo = resolve_root(Path(args.repo))
    scope: Scope = args.scope or ("local" if args.client == "claude" else "user")
    done = register_with(args.client, repo, scope=scope, tools=args.tools, dry_run=args.print)
    check: dict[str, Any] | None = None
    if not args.print:
        from excerpt.mcp import check_server

        check = check_server(str(repo), tools=args.tools)
    if args.json:
        sys.stdout.write(to_json({**done.to_dict(), "check": check}))
    else:
        sys.stdout.write(_text(done.to_dict(), check, args.client))
    if check is not None and not check["ok"]:
        raise EnvironmentFault(f"registered, but the server does not serve: {check['problem']}")
    return 0


def _text(done: dict[str, Any], check: dict[str, Any] | None, client: str) -> str:
    verb = "would" if done["dry_run"] else "did"
    lines = []
    if not done["changed"]:
        lines.append(f"excerpt is already registered with {client} ({done['where']}): nothing"
                     " changed.")  # fmt: skip
    else:
        lines += [f"{verb}: {action}" for action in done["actions"]]
    lines.append(f"server: {' '.join(done['command'])}")
    if check is not None and check["ok"]:
        lines.append(
            f"checked: it serves {len(check['tools'])} tools on"
            f" {check['index']['files_indexed']} indexed files."
        )
    if not done["dry_run"]:
        lines += ["", "next:", _NEXT[client]]
    return "\n".join(lines) + "\n"
