"""``excerpt setup CLIENT``: register the MCP server with a client, check that it serves, and
say what to type next; ``--detect``: which clients are here and what setup would change."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from excerpt.cli.common import command, complete_as
from excerpt.cli.mcp_cmd import CLIENT_NAMES, TOOL_SETS
from excerpt.errors import EnvironmentFault, UsageError

if TYPE_CHECKING:
    from excerpt.hooks.install import Client, HookChange
    from excerpt.mcp.configs import FileClient, FileScope
    from excerpt.mcp.register import Registration

__all__ = ["register"]

_NEXT = {
    "claude": "claude mcp list      # excerpt: … - ✔ Connected\n"
    "then, in Claude Code: ask for context on a task, e.g. \"use excerpt's context_pack for:"
    ' <the issue>"',
    "codex": "codex mcp list       # excerpt  …  enabled\n"
    "then, in Codex: ask for context on a task, e.g. \"use excerpt's context_pack for:"
    ' <the issue>"',
}
# with the hooks installed: the context comes with the task itself
_NEXT_HOOKED = {
    "claude": "claude               # then give it a task: the context arrives with your prompt",
    "codex": "codex                # trust the hooks, then give it a task: the context arrives"
    " with your prompt",
}


def register(sub: Any) -> None:
    p = command(
        sub,
        "setup",
        help="register excerpt's MCP server with a client (Claude Code, Codex, Cursor, …)",
        description="Register `excerpt mcp` for a repository with a client, by this "
        "installation's absolute path: Claude Code (`claude mcp add`), Codex "
        "(`[mcp_servers.excerpt]` in ~/.codex/config.toml), or the MCP file of Cursor, VS "
        "Code, Gemini CLI, Windsurf, Zed or opencode (the user's, or the repository's with "
        "--scope project). Every other key, comment and blank line of the file is kept, the "
        "previous file as a .bak beside it. Then check that the server serves (as `excerpt "
        "mcp --check`) and print what to type next. Running it again changes nothing; --print "
        "only prints; --detect lists the clients on this machine and what setup would change.",
        examples=[
            ("excerpt setup claude --repo ~/src/shop", "register with Claude Code, this user"),
            ("excerpt setup --detect", "which clients are here, and what setup would change"),
        ],
    )
    p.add_argument(
        "client", nargs="?", choices=CLIENT_NAMES,
        help="the client to register with",
    )  # fmt: skip
    p.add_argument(
        "--detect", action="store_true",
        help="list the clients installed here, where each keeps its MCP servers, and what "
        "`excerpt setup CLIENT` would change; writes nothing",
    )  # fmt: skip
    complete_as(
        p.add_argument("--repo", default=".", metavar="DIR", help="repository to serve"),
        "directory",
    )
    p.add_argument(
        "--scope",
        choices=("local", "user", "project"),
        default=None,
        help="Claude Code's scope: local (default: this project, for you), user (every "
        "project) or project (the repository's .mcp.json, which Claude writes); Codex: user; "
        "the file clients: user (default) or project (a file inside the repository)",
    )
    p.add_argument("--tools", choices=TOOL_SETS, default="core", help="which tools to list")
    p.add_argument(
        "--no-hooks",
        action="store_true",
        help="register the server only: no prompt seed, no compaction in flight",
    )
    p.add_argument(
        "--remove",
        action="store_true",
        help="take excerpt's server registration and hooks for this repository out again",
    )
    p.add_argument("--print", action="store_true", help="print what would be done, do nothing")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.discover.walk import resolve_root
    from excerpt.hooks.install import hooks_file, install_hooks
    from excerpt.mcp.configs import CLIENTS
    from excerpt.mcp.register import Scope, unregister
    from excerpt.mcp.register import register as register_with
    from excerpt.render.text import to_json

    if args.detect or args.client is None:
        if args.client is not None or not args.detect:
            raise UsageError("name a client to set up, or --detect (not both)")
        return _detect(resolve_root(Path(args.repo)), args)
    repo = resolve_root(Path(args.repo))
    if args.client in CLIENTS:
        return _file_client(CLIENTS[args.client], repo, args)
    scope: Scope = args.scope or ("local" if args.client == "claude" else "user")
    hooked = repo  # a hook serves the repository set up, at every scope
    path = hooks_file(args.client, scope, repo)
    if args.remove:
        done = unregister(args.client, repo, scope=scope, dry_run=args.print)
        removed = install_hooks(args.client, hooked, path, remove=True, dry_run=args.print)
        doc = {**done.to_dict(), "hooks": removed.to_dict()}
        sys.stdout.write(to_json(doc) if args.json else _removed_text(doc))
        return 0
    done = register_with(args.client, repo, scope=scope, tools=args.tools, dry_run=args.print)
    hooks: HookChange | None = None
    if not args.no_hooks:
        hooks = install_hooks(args.client, hooked, path, dry_run=args.print)
    shown = hooks.after if args.print and hooks is not None else ""
    return _checked(done, hooks, args, repo, scope, hooks_client=args.client, shown=shown)


def _checked(done: Registration, hooks: HookChange | None, args: argparse.Namespace,
             repo: Path, scope: str, *, hooks_client: Client = "claude", shown: str = "",
             file_text: str = "") -> int:  # fmt: skip
    """After registering: check that the server (and the hooks) answer, say what was done,
    and fail when either does not. ``shown``: the hooks file as it would read (``--print``);
    ``file_text``: the client's file as it would read, after the summary."""
    check: dict[str, Any] | None = None
    if not args.print:
        from excerpt.hooks.check import check_hooks
        from excerpt.mcp import check_server

        check = check_server(str(repo), tools=args.tools)
        if hooks is not None:
            check["hooks"] = check_hooks(hooks_client, repo, scope, repo)
    doc = {**done.to_dict(), "hooks": None if hooks is None else hooks.to_dict(), "check": check}
    if args.json:
        from excerpt.render.text import to_json

        sys.stdout.write(to_json(doc))
    else:
        sys.stdout.write(_text(doc, check, done.client, shown) + file_text)
    if check is not None and not check["ok"]:
        raise EnvironmentFault(f"registered, but the server does not serve: {check['problem']}")
    if check is not None and check.get("hooks") and not check["hooks"]["ok"]:
        problems = "; ".join(f"{e}: {p}" for e, p in check["hooks"]["problems"].items())
        raise EnvironmentFault(f"hooks installed, but not answering: {problems or 'none found'}")
    return 0


def _removed_text(doc: dict[str, Any]) -> str:
    verb = "would" if doc["dry_run"] else "did"
    lines = [f"{verb}: {action}" for action in doc["actions"]]
    if doc["hooks"] and doc["hooks"]["changed"]:
        lines.append(f"{verb}: remove excerpt's hooks from {doc['hooks']['path']}")
    return "\n".join(lines or ["excerpt was not registered: nothing changed."]) + "\n"


def _text(done: dict[str, Any], check: dict[str, Any] | None, client: str, hooks_json: str
          ) -> str:  # fmt: skip
    verb = "would" if done["dry_run"] else "did"
    lines = []
    if not done["changed"]:
        lines.append(f"excerpt is already registered with {client} ({done['where']}): nothing"
                     " changed.")  # fmt: skip
    else:
        lines += [f"{verb}: {action}" for action in done["actions"]]
    lines.append(f"server: {' '.join(done['command'])}")
    hooks = done.get("hooks")
    if hooks is not None:
        events = ", ".join(hooks["events"])
        if hooks["changed"]:
            kept = (
                " (other keys and hooks kept; the previous file as .bak)"
                if hooks["existed"]
                else ""
            )
            lines.append(f"{verb}: write excerpt's hooks ({events}) in {hooks['path']}{kept}")
        else:
            lines.append(f"hooks: already in {hooks['path']} ({events}): nothing changed.")
        if hooks_json:
            lines += [f"{hooks['path']} would read:", hooks_json.rstrip("\n")]
    lines += _hooks_checked(check, client)
    if check is not None and check["ok"]:
        lines.append(
            f"checked: it serves {len(check['tools'])} tools on"
            f" {check['index']['files_indexed']} indexed files."
        )
    if not done["dry_run"]:
        from excerpt.mcp.configs import CLIENTS

        step = CLIENTS[client].next_step if client in CLIENTS else None
        step = step or (_NEXT_HOOKED if hooks is not None else _NEXT)[client]
        lines += ["", "next:", step]
    return "\n".join(lines) + "\n"


def _hooks_checked(check: dict[str, Any] | None, client: str) -> list[str]:
    hooks = (check or {}).get("hooks")
    if not hooks:
        return []
    lines = [f"hooks: {', '.join(hooks['answered']) or 'none'} answered a probe."]
    if client == "codex" and hooks.get("trusted") is not True:
        lines += [
            "Codex runs a hook only once you have trusted it, and excerpt never does that for",
            'you: start codex in the repository and choose "Trust all and continue" when it',
            "lists the new hooks (or review them later in /hooks); `excerpt mcp --check` says",
            "whether they are trusted.",
        ]
    return lines


def _file_client(client: FileClient, repo: Path, args: argparse.Namespace) -> int:
    """Cursor, VS Code, Gemini CLI, Windsurf, Zed, opencode: their MCP file (and Gemini CLI's
    hooks, in the same settings file)."""
    from excerpt.core.jsonc import loads, set_at
    from excerpt.hooks.install import hooks_file, install_hooks
    from excerpt.mcp.configs import register_file, unregister_file
    from excerpt.render.text import to_json

    if args.scope not in (None, "user", "project"):
        raise UsageError(f"{client.label} has a user and a project scope, not {args.scope}")
    scope: FileScope = "project" if args.scope == "project" else "user"
    hooked = client.name == "gemini"  # the one of these whose hooks reach the model
    path = hooks_file("gemini", scope, repo) if hooked else None
    if args.remove:
        gone = unregister_file(client, repo, scope=scope, dry_run=args.print)
        removed = (
            install_hooks("gemini", repo, path, remove=True, dry_run=args.print)
            if path is not None else None
        )  # fmt: skip
        doc = {**gone.to_dict(), "hooks": None if removed is None else removed.to_dict()}
        sys.stdout.write(to_json(doc) if args.json else _removed_text(doc))
        return 0
    done, after = register_file(client, repo, scope=scope, tools=args.tools, dry_run=args.print)
    hooks: HookChange | None = None
    if path is not None and not args.no_hooks:
        hooks = install_hooks("gemini", repo, path, dry_run=args.print)
    file_text = ""
    if args.print and (done.changed or (hooks is not None and hooks.changed)):
        shown = after  # the file as it would read: the server, then the hooks
        if hooks is not None and hooks.changed:
            shown = set_at(after, ["hooks"], loads(hooks.after).get("hooks"))
        file_text = f"{done.where} would read:\n{shown.rstrip(chr(10))}\n"
    return _checked(done, hooks, args, repo, scope, hooks_client="gemini", file_text=file_text)


def _detect(repo: Path, args: argparse.Namespace) -> int:
    from excerpt.mcp.configs import detect
    from excerpt.render.text import to_json

    rows = detect(repo, args.tools)
    if args.json:
        sys.stdout.write(to_json({"repo": str(repo), "clients": rows}))
        return 0
    lines = [f"clients on this machine, for {repo}:"]
    for row in rows:
        how = ", ".join(row["programs"] + row["homes"]) or "not found"
        lines += [
            f"{row['label']}: {'installed' if row['installed'] else 'not installed'} ({how})",
            f"  {row['file']}: {row['state']}",
            f"  excerpt setup {row['client']} would {row['setup_would']}",
        ]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
