"""Register ``excerpt mcp`` with a client through the client's own mechanism.

Claude Code: ``claude mcp add`` (its scopes: ``local``, this project for you alone, kept in
Claude's own configuration; ``user``, every project; ``project``, the repository's
``.mcp.json``, which Claude writes). Codex: the ``[mcp_servers.excerpt]`` table of
``$CODEX_HOME/config.toml`` (default ``~/.codex/config.toml``), merged with ``tomlkit`` so that
every other key, comment and blank line stays byte for byte, after a backup of the file.

Either way the command registered is the absolute path of the running installation's
``excerpt`` and the repository's absolute path. Registering again what is registered changes
nothing and says so; ``dry_run`` only says what would be done. Nothing is written inside the
repository but Claude's ``.mcp.json`` for ``scope="project"``, which is that scope's meaning.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit

from excerpt.core.durable import replace_config
from excerpt.core.installation import excerpt_command
from excerpt.errors import EnvironmentFault, UsageError

__all__ = [
    "NAME",
    "Registration",
    "Scope",
    "register",
    "server_command",
    "server_env",
    "unregister",
]

Client = Literal["claude", "codex"]
Scope = Literal["local", "user", "project"]
NAME = "excerpt"
_TIMEOUT_S = 120


@dataclass(frozen=True, slots=True, kw_only=True)
class Registration:
    """What ``register`` did (or would do, with ``dry_run``)."""

    client: str  # as ``excerpt setup`` names it
    scope: str
    command: tuple[str, ...]  # the server's command line, as registered
    changed: bool  # False: it was registered so already
    dry_run: bool
    where: str  # the client's configuration it lives in
    actions: tuple[str, ...]  # what was run or written, in order (or would be)

    def to_dict(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "scope": self.scope,
            "command": list(self.command),
            "changed": self.changed,
            "dry_run": self.dry_run,
            "where": self.where,
            "actions": list(self.actions),
        }


def server_command(repo: Path, tools: str = "core", client: str | None = None
                   ) -> tuple[str, ...]:  # fmt: skip
    """The command line of this installation's server for ``repo`` (absolute paths), for
    ``client`` when given (its profile, should it not name itself as a known one)."""
    argv = [*excerpt_command(), "mcp", "--repo", str(repo)]
    if tools != "core":
        argv += ["--tools", tools]
    if client is not None:
        argv += ["--client", client]
    return tuple(argv)


def server_env() -> dict[str, str]:
    """What a client must pass the server of its own environment: a client starts a server
    with its own, which may lack the cache's directory."""
    cache = os.environ.get("EXCERPT_CACHE_DIR")
    return {"EXCERPT_CACHE_DIR": str(Path(cache).absolute())} if cache else {}


def register(
    client: Client,
    repo: Path,
    *,
    scope: Scope = "local",
    tools: str = "core",
    dry_run: bool = False,
) -> Registration:
    """Register the server for ``repo`` with ``client``.

    Raises:
        UsageError: a scope the client has not.
        EnvironmentFault: the client is not installed, or refused the registration.
    """
    command = server_command(repo.resolve(), tools)
    if client == "claude":
        return _claude(command, repo.resolve(), scope, dry_run)
    if scope == "project":
        raise UsageError("Codex reads MCP servers from its own config.toml: use --scope user")
    return _codex(command, dry_run)


def unregister(client: Client, repo: Path, *, scope: Scope = "local", dry_run: bool = False
               ) -> Registration:  # fmt: skip
    """Take the server's registration out of ``client`` (nothing when there is none).

    Raises:
        EnvironmentFault: the client is not installed, or refused.
    """
    if client == "claude":
        binary = shutil.which("claude")
        if binary is None and not dry_run:
            raise EnvironmentFault("Claude Code is not installed (no claude on PATH)")
        current = _claude_current(binary, repo, scope) if binary and not dry_run else ()
        remove = ["claude", "mcp", "remove", "-s", scope, NAME]
        if current is not None and binary is not None and not dry_run:
            _run([binary, *remove[1:]], repo)
        found = current is not None
        return Registration(client="claude", scope=scope, command=(), changed=found,
                            dry_run=dry_run, where=f"Claude's {scope} configuration",
                            actions=(shlex.join(remove),) if found else ())  # fmt: skip
    path, before, document = _codex_document()
    servers = document.get("mcp_servers")
    if servers is None or NAME not in servers:
        return Registration(client="codex", scope="user", command=(), changed=False,
                            dry_run=dry_run, where=str(path), actions=())  # fmt: skip
    del servers[NAME]
    after = tomlkit.dumps(document)
    if before.endswith("\n"):  # the blank line that set the table apart goes with it
        after = after.rstrip("\n") + "\n"
    if not dry_run:
        replace_config(path, before, after)
    return Registration(
        client="codex",
        scope="user",
        command=(),
        changed=True,
        dry_run=dry_run,
        where=str(path),
        actions=(f"remove [mcp_servers.{NAME}] from {path}",),
    )


# -- Claude Code ---------------------------------------------------------------------------


def _claude(command: tuple[str, ...], repo: Path, scope: Scope, dry_run: bool) -> Registration:
    binary = shutil.which("claude")
    if binary is None and not dry_run:
        raise EnvironmentFault(
            "Claude Code is not installed (no claude on PATH): install it with"
            " npm install -g @anthropic-ai/claude-code, or see what would be run with --print"
        )
    env = [word for k, v in server_env().items() for word in ("-e", f"{k}={v}")]
    add = ["claude", "mcp", "add", "-s", scope, NAME, *env, "--", *command]
    where = {"local": "Claude's configuration for this project", "user": "Claude's user"
             " configuration", "project": f"{repo / '.mcp.json'}"}[scope]  # fmt: skip
    # (with ``dry_run`` claude is not run at all: any run of it writes its own configuration)
    current = _claude_current(binary, repo, scope) if binary and not dry_run else None
    if current == command:
        return Registration(client="claude", scope=scope, command=command, changed=False,
                            dry_run=dry_run, where=where, actions=())  # fmt: skip
    actions = []
    if current is not None:
        actions.append(shlex.join(["claude", "mcp", "remove", "-s", scope, NAME]))
    actions.append(shlex.join(add))
    if binary is not None and not dry_run:
        if current is not None:
            _run([binary, "mcp", "remove", "-s", scope, NAME], repo)
        _run([binary, *add[1:]], repo)
    return Registration(client="claude", scope=scope, command=command, changed=True,
                        dry_run=dry_run, where=where, actions=tuple(actions))  # fmt: skip


def _claude_current(binary: str, repo: Path, scope: Scope) -> tuple[str, ...] | None:
    """The command line registered as ``excerpt`` in ``scope``, or None."""
    proc = _run([binary, "mcp", "get", NAME], repo, check=False)
    if proc.returncode != 0:
        return None
    fields: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.strip().partition(": ")
        fields.setdefault(key, value)
    if not fields.get("Scope", "").lower().startswith(scope):
        return None  # one of another scope: this one is added beside it
    return (fields.get("Command", ""), *fields.get("Args", "").split())


def _run(argv: Sequence[str], cwd: Path, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(
            list(argv), cwd=cwd, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentFault(f"{argv[0]} could not be run: {exc}") from None
    if check and proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().splitlines()
        raise EnvironmentFault(
            f"claude refused the registration: {said[-1] if said else proc.returncode}"
        )
    return proc


# -- Codex -----------------------------------------------------------------------------------


def _codex(command: tuple[str, ...], dry_run: bool) -> Registration:
    if shutil.which("codex") is None and not dry_run:
        raise EnvironmentFault(
            "Codex is not installed (no codex on PATH): install it with"
            " npm install -g @openai/codex, or see what would be written with --print"
        )
    path, before, document = _codex_document()
    table = tomlkit.table()
    table["command"] = command[0]
    table["args"] = list(command[1:])
    table["required"] = True  # codex exec waits for the server, or fails loudly
    cache = os.environ.get("EXCERPT_CACHE_DIR")
    if cache:  # Codex passes servers HOME, PATH and a few others, not this
        table["env"] = {"EXCERPT_CACHE_DIR": cache}
    servers = document.get("mcp_servers")
    current = servers.get(NAME) if servers is not None else None
    if current is not None and all(current.get(k) == v for k, v in table.unwrap().items()):
        return Registration(client="codex", scope="user", command=command, changed=False,
                            dry_run=dry_run, where=str(path), actions=())  # fmt: skip
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        document["mcp_servers"] = servers
    if current is not None:
        for key, value in table.items():  # other keys the user set stay
            current[key] = value
    else:
        servers[NAME] = table
    after = tomlkit.dumps(document)
    actions = ([f"copy {path} to {path}.bak"] if before else []) + [f"write [mcp_servers.{NAME}]"
               f" in {path}"]  # fmt: skip
    if not dry_run:
        replace_config(path, before, after)
    return Registration(client="codex", scope="user", command=command, changed=True,
                        dry_run=dry_run, where=str(path), actions=tuple(actions))  # fmt: skip


def _codex_document() -> tuple[Path, str, tomlkit.TOMLDocument]:
    """Codex's ``config.toml``: its path, its text and its parsed document.

    Raises:
        EnvironmentFault: it cannot be read or parsed.
    """
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    path = home / "config.toml"
    try:
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        return path, before, tomlkit.parse(before)
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.TOMLKitError) as exc:
        raise EnvironmentFault(f"cannot read {path}: {exc}") from None
