"""``excerpt mcp``: the MCP stdio server, and ``--check`` to see that it serves."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from excerpt.cli.common import command, complete_as
from excerpt.errors import EnvironmentFault

TOOL_SETS = ("core", "all")  # excerpt.mcp.server.TOOL_SETS, without importing the SDK here
# the clients with an MCP file of their own (excerpt.mcp.configs.CLIENTS), and all the clients
# excerpt setup knows (excerpt.mcp.clients.SETUP_NAMES): here so that the parser loads neither
FILE_CLIENTS = ("cursor", "vscode", "gemini", "windsurf", "zed", "opencode")
CLIENT_NAMES = ("claude", "codex", *FILE_CLIENTS)

__all__ = ["register"]


def register(sub: Any) -> None:
    p = command(
        sub,
        "mcp",
        help="serve excerpt's tools over MCP (stdio)",
        description="Serve excerpt's tools over MCP on stdin/stdout. With --check, start the "
        "server in process instead, call it as a client would, and report whether it serves. "
        "--tools core (the default) lists context_plan, context_pack and context_retrieve; "
        "--tools all adds index_status, harness_infer, risk_classify, gate_check, "
        "context_handoff, context_handoff_validate, context_compact and context_expand. A "
        "client that does not defer tools sends every listed definition on every model turn.",
        examples=[
            (
                'claude mcp add excerpt -- ~/excerpt/.venv/bin/excerpt mcp --repo "$PWD"',
                "register the server with Claude Code for the current repository",
            ),
            (
                "excerpt mcp --check --tools all --repo ~/src/shop",
                "see that it serves every tool, and their definitions' size, without a client",
            ),
        ],
    )
    complete_as(
        p.add_argument("--repo", default=".", metavar="DIR", help="repository directory"),
        "directory",
    )
    p.add_argument(
        "--tools",
        choices=TOOL_SETS,
        default="core",
        help="which tools to list: core (default: plan, pack, retrieve) or all",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="start the server, list its tools, index the repository, report, and exit",
    )
    p.add_argument(
        "--client", choices=CLIENT_NAMES, metavar="CLIENT",
        help="the client this server is registered for (excerpt setup writes it): its default "
        "budget and result limit, when the client does not name itself as a known one",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="with --check: machine-readable output")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.mcp import check_server, serve  # the SDK is only imported for the server
    from excerpt.render.text import to_json

    if not args.check:
        serve(args.repo, tools=args.tools, client=args.client)
        return 0
    report = check_server(args.repo, tools=args.tools)
    if report["ok"]:
        from excerpt.discover.walk import resolve_root
        from excerpt.hooks.check import hooks_serving

        report["hooks"] = hooks_serving(resolve_root(args.repo))
    if args.json:
        sys.stdout.write(to_json(report))
        return 0 if report["ok"] else EnvironmentFault.exit_code
    if report["ok"]:
        index = report["index"]
        sys.stdout.write(
            f"excerpt mcp serves {len(report['tools'])} tools on {index['files_indexed']} indexed"
            f" files ({', '.join(report['tools'])}); their definitions and instructions take"
            f" {report['definitions_bytes']:,} bytes.\n"
        )
        sys.stdout.write(_hooks_text(report["hooks"]))
    if not report["ok"]:
        raise EnvironmentFault(report["problem"])
    return 0


def _hooks_text(hooks: dict[str, Any]) -> str:
    if not hooks:
        return "hooks: none installed for this repository (excerpt setup claude|codex|gemini)\n"
    lines = []
    for client, found in hooks.items():
        answered = ", ".join(found["answered"]) or "none"
        line = f"hooks ({client}, {found['file']}): {answered} answered a probe"
        if found.get("problems"):
            line += "; " + "; ".join(f"{e}: {p}" for e, p in found["problems"].items())
        if client == "codex":
            trusted = {True: "trusted", False: "not trusted yet (codex, then /hooks)",
                       None: "trust unknown (codex not found)"}[found.get("trusted")]  # fmt: skip
            line += f"; {trusted}"
        lines.append(line)
    return "\n".join(lines) + "\n"
