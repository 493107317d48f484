"""Register ``excerpt mcp`` in the MCP configuration file of a client that keeps one as JSON:
Cursor, VS Code, Gemini CLI, Windsurf, Zed and opencode.

Each client's file, the key its servers live under and the shape of a stdio entry are as the
client's own documentation and, for the clients on npm, its installed code read them
(``docs/setup.md`` names the source and version of each). The entry is written into the file
in place (``excerpt.core.jsonc``): every other key, comment and blank line stays byte for
byte, the previous file is kept as ``.bak``, and writing what is there changes nothing. The
user scope is the default; the project scope (a file inside the repository) is written only
when asked for by name.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from excerpt.core.durable import replace_config
from excerpt.core.jsonc import JsoncError, loads, set_at
from excerpt.errors import EnvironmentFault, UsageError
from excerpt.mcp.register import NAME, Registration, server_command, server_env

__all__ = ["CLIENTS", "FileClient", "detect", "register_file", "unregister_file"]

FileScope = Literal["user", "project"]


def _home() -> Path:
    return Path.home()


def _xdg_config() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or _home() / ".config")


def _vscode_user() -> Path:
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support" / "Code" / "User" / "mcp.json"
    return _xdg_config() / "Code" / "User" / "mcp.json"


def _gemini_home() -> Path:
    return Path(os.environ.get("GEMINI_CLI_HOME") or _home()) / ".gemini"


def _opencode_user() -> Path:
    return _existing_or_first(_xdg_config() / "opencode", ("opencode.jsonc", "opencode.json"))


def _opencode_project(repo: Path) -> Path:
    return _existing_or_first(repo, ("opencode.jsonc", "opencode.json"))


def _existing_or_first(directory: Path, names: tuple[str, ...]) -> Path:
    """The first of ``names`` that exists in ``directory``, else the last (the plain one)."""
    for name in names:
        if (directory / name).exists():
            return directory / name
    return directory / names[-1]


def _std_entry(command: tuple[str, ...], env: dict[str, str]) -> dict[str, Any]:
    return {"command": command[0], "args": list(command[1:]), **({"env": env} if env else {})}


def _vscode_entry(command: tuple[str, ...], env: dict[str, str]) -> dict[str, Any]:
    return {"type": "stdio", **_std_entry(command, env)}


def _opencode_entry(command: tuple[str, ...], env: dict[str, str]) -> dict[str, Any]:
    return {"type": "local", "command": list(command), "enabled": True,
            **({"environment": env} if env else {})}  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class FileClient:
    """A client whose MCP servers are a JSON object in a file of its own."""

    name: str  # as ``excerpt setup`` takes it
    label: str
    user: Callable[[], Path] | None  # the user-scope file
    project: Callable[[Path], Path] | None  # the project-scope file, from the repository
    key: tuple[str, ...]  # the path of keys to the object of servers
    entry: Callable[[tuple[str, ...], dict[str, str]], dict[str, Any]]
    programs: tuple[str, ...]  # on PATH when the client is installed
    homes: tuple[Callable[[], Path], ...]  # a directory the client makes for itself
    next_step: str  # what to do in the client once registered

    def wanted(self, repo: Path, tools: str) -> tuple[tuple[str, ...], dict[str, Any]]:
        """The server's command line for ``repo`` and excerpt's entry in this client's file."""
        command = server_command(repo.resolve(), tools, self.name)
        return command, self.entry(command, server_env())

    def path(self, scope: FileScope, repo: Path) -> Path:
        """The file of ``scope``.

        Raises:
            UsageError: the client has no file of that scope.
        """
        where = self.user() if scope == "user" and self.user else None
        if scope == "project" and self.project is not None:
            where = self.project(repo)
        if where is None:
            raise UsageError(f"{self.label} has no {scope}-scope MCP configuration file")
        return where


CLIENTS: dict[str, FileClient] = {
    c.name: c
    for c in (
        FileClient(
            name="cursor", label="Cursor",
            user=lambda: _home() / ".cursor" / "mcp.json",
            project=lambda repo: repo / ".cursor" / "mcp.json",
            key=("mcpServers",), entry=_std_entry, programs=("cursor", "cursor-agent"),
            homes=(lambda: _home() / ".cursor",),
            next_step="in Cursor: Settings > MCP shows excerpt; ask the agent for context on a"
            " task",
        ),
        FileClient(
            name="vscode", label="VS Code",
            user=_vscode_user, project=lambda repo: repo / ".vscode" / "mcp.json",
            key=("servers",), entry=_vscode_entry, programs=("code", "code-insiders"),
            homes=(lambda: _vscode_user().parent,),
            next_step="in VS Code: run 'MCP: List Servers' and start excerpt; in agent mode,"
            " ask for context on a task",
        ),
        FileClient(
            name="gemini", label="Gemini CLI",
            user=lambda: _gemini_home() / "settings.json",
            project=lambda repo: repo / ".gemini" / "settings.json",
            key=("mcpServers",), entry=_std_entry, programs=("gemini",),
            homes=(_gemini_home,),
            next_step="gemini mcp list     # excerpt - Connected (in a trusted folder)",
        ),
        FileClient(
            name="windsurf", label="Windsurf",
            user=lambda: _home() / ".codeium" / "windsurf" / "mcp_config.json", project=None,
            key=("mcpServers",), entry=_std_entry, programs=("windsurf",),
            homes=(lambda: _home() / ".codeium" / "windsurf",),
            next_step="in Windsurf: Cascade > MCP servers > refresh; ask for context on a task",
        ),
        FileClient(
            name="zed", label="Zed",
            user=lambda: _xdg_config() / "zed" / "settings.json",
            project=lambda repo: repo / ".zed" / "settings.json",
            key=("context_servers",), entry=_std_entry, programs=("zed", "zeditor"),
            homes=(lambda: _xdg_config() / "zed",),
            next_step="in Zed: the Agent panel's settings list excerpt as a context server",
        ),
        FileClient(
            name="opencode", label="opencode",
            user=_opencode_user, project=_opencode_project,
            key=("mcp",), entry=_opencode_entry, programs=("opencode",),
            homes=(lambda: _xdg_config() / "opencode",),
            next_step="opencode mcp list   # excerpt connected",
        ),
    )
}  # fmt: skip


def _read(path: Path) -> tuple[str, Any]:
    """A configuration file's text and value ("" and {} when it is not there).

    Raises:
        EnvironmentFault: it cannot be read, or is not JSON (with comments).
    """
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        return text, loads(text) if text.strip() else {}
    except (OSError, UnicodeDecodeError, JsoncError) as exc:
        raise EnvironmentFault(f"cannot read {path}: {exc}") from None


def _servers(value: Any, key: tuple[str, ...]) -> Any:
    for part in key:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def register_file(
    client: FileClient, repo: Path, *, scope: FileScope = "user", tools: str = "core",
    dry_run: bool = False,
) -> tuple[Registration, str]:  # fmt: skip
    """Write excerpt's entry for ``repo`` in ``client``'s file; the registration and the file's
    text after it (for ``--print``).

    Raises:
        UsageError: a scope the client has not.
        EnvironmentFault: the file cannot be read as JSON (with comments), or written.
    """
    path = client.path(scope, repo)
    command, wanted = client.wanted(repo, tools)
    before, value = _read(path)
    current = _servers(value, client.key)
    where = str(path)
    if isinstance(current, dict) and current.get(NAME) == wanted:
        return Registration(client=client.name, scope=scope, command=command, changed=False,
                            dry_run=dry_run, where=where, actions=()), before  # fmt: skip
    try:
        after = set_at(before, [*client.key, NAME], wanted)
    except JsoncError as exc:
        raise EnvironmentFault(f"cannot add excerpt to {path}: {exc}") from None
    actions = ([f"copy {path} to {path}.bak"] if before else []) + [
        f"write {'.'.join(client.key)}.{NAME} in {path}"
    ]
    if not dry_run:
        replace_config(path, before, after)
    return Registration(client=client.name, scope=scope, command=command, changed=True,
                        dry_run=dry_run, where=where, actions=tuple(actions)), after  # fmt: skip


def unregister_file(
    client: FileClient, repo: Path, *, scope: FileScope = "user", dry_run: bool = False
) -> Registration:
    """Take excerpt's entry out of ``client``'s file (nothing when there is none).

    Raises:
        UsageError: a scope the client has not.
        EnvironmentFault: the file cannot be read as JSON (with comments), or written.
    """
    path = client.path(scope, repo)
    before, value = _read(path)
    current = _servers(value, client.key)
    if not isinstance(current, dict) or NAME not in current:
        return Registration(client=client.name, scope=scope, command=(), changed=False,
                            dry_run=dry_run, where=str(path), actions=())  # fmt: skip
    # the entry, or its object when it held excerpt alone
    after = set_at(before, [*client.key, NAME] if len(current) > 1 else list(client.key), None)
    if not dry_run:
        replace_config(path, before, after)
    return Registration(client=client.name, scope=scope, command=(), changed=True,
                        dry_run=dry_run, where=str(path),
                        actions=(f"remove {'.'.join(client.key)}.{NAME} from {path}",))  # fmt: skip


def detect(repo: Path, tools: str = "core") -> list[dict[str, Any]]:
    """Each client: whether it is installed here (and how that is known), its user file, and
    whether excerpt is registered there for ``repo`` as ``excerpt setup`` would write it."""
    out = []
    for client in CLIENTS.values():
        found = [p for p in client.programs if shutil.which(p)]
        homes = [str(h()) for h in client.homes if h().is_dir()]
        path = client.path("user", repo)
        state: str
        try:
            _, value = _read(path)
            current = _servers(value, client.key)
            entry = current.get(NAME) if isinstance(current, dict) else None
            _, wanted = client.wanted(repo, tools)
            state = ("registered" if entry == wanted else "registered differently"
                     if entry is not None else "not registered")  # fmt: skip
        except EnvironmentFault as exc:
            state = f"unreadable: {exc}"
        out.append({
            "client": client.name, "label": client.label,
            "installed": bool(found or homes), "programs": found, "homes": homes,
            "file": str(path), "state": state,
            "setup_would": "change nothing" if state == "registered"
            else f"write {'.'.join(client.key)}.{NAME} in {path}",
        })  # fmt: skip
    return out
