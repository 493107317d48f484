"""``excerpt setup cursor|vscode|gemini|windsurf|zed|opencode``: excerpt's entry in each
client's own MCP file, in the shape the client's documentation gives, every other byte of the
file kept; idempotent, ``--print`` and ``--remove``; nothing inside the repository unless the
project scope is asked for by name; ``--detect``."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import git_commit_all, tree_snapshot, write_tree
from excerpt.cli import main
from excerpt.cli.mcp_cmd import CLIENT_NAMES, FILE_CLIENTS
from excerpt.core.jsonc import loads
from excerpt.mcp.clients import SETUP_NAMES
from excerpt.mcp.configs import CLIENTS, register_file
from trees import SHOP

# the stdio entry of each client, as its documentation (and, for Gemini CLI 0.61 and opencode
# 1.18, its installed code) gives it: docs/setup.md names each source
_STRING_LIST = {"type": "array", "items": {"type": "string"}}
_ENV = {"type": "object", "additionalProperties": {"type": "string"}}
_STDIO: dict[str, Any] = {
    "type": "object",
    "required": ["command", "args"],
    "properties": {"command": {"type": "string"}, "args": _STRING_LIST, "env": _ENV},
}
SCHEMAS: dict[str, dict[str, Any]] = {
    "cursor": {**_STDIO, "additionalProperties": False},
    "windsurf": {**_STDIO, "additionalProperties": False},
    "gemini": {  # MCPServerConfig, whose settings schema allows no other key
        **_STDIO,
        "properties": {
            **_STDIO["properties"],
            "cwd": {"type": "string"},
            "timeout": {"type": "number"},
            "trust": {"type": "boolean"},
        },
        "additionalProperties": False,
    },
    "vscode": {
        "type": "object",
        "required": ["type", "command"],
        "properties": {
            "type": {"const": "stdio"},
            "command": {"type": "string"},
            "args": _STRING_LIST,
            "env": _ENV,
        },
        "additionalProperties": False,
    },
    "zed": {**_STDIO, "additionalProperties": False},
    "opencode": {  # McpLocalConfig
        "type": "object",
        "required": ["type", "command"],
        "properties": {
            "type": {"const": "local"},
            "command": {**_STRING_LIST, "minItems": 1},
            "environment": _ENV,
            "enabled": {"type": "boolean"},
        },
        "additionalProperties": False,
    },
}
# a file of the user's own in each client's format: comments where the client reads them,
# another server, other keys
OTHERS = {
    "cursor": '{\n  "mcpServers": {\n    "docs": {"command": "docs", "args": []}\n  }\n}\n',
    "windsurf": '{\n  "mcpServers": {\n    "docs": {"command": "docs"}\n  }\n}\n',
    "gemini": '{\n  // mine\n  "theme": "GitHub",\n  "mcpServers": {\n'
    '    "docs": {"command": "docs", "trust": false},\n  },\n}\n',
    "vscode": '{\n\t"servers": {\n\t\t"docs": {"type": "stdio", "command": "docs"}\n\t},\n'
    '\t"inputs": []\n}\n',
    "zed": '// Zed settings\n{\n  "theme": "One Dark", /* mine */\n  "context_servers": {\n'
    '    "docs": {"command": "docs", "args": []}\n  }\n}\n',
    "opencode": '{\n  "$schema": "https://opencode.ai/config.json",\n  // my model\n'
    '  "model": "anthropic/claude-sonnet-4-5",\n}\n',
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "GEMINI_CLI_HOME", "EXCERPT_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    # a PATH of git alone (and what a test puts in bin/): no client found but those it makes
    (tmp_path / "gitbin").mkdir()
    (tmp_path / "gitbin" / "git").symlink_to(str(shutil.which("git")))
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{tmp_path / 'gitbin'}")
    yield home


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    repo = write_tree(tmp_path / "shop", SHOP)
    git_commit_all(repo)
    return repo


def test_every_client_is_named_alike_by_the_cli_the_files_and_the_profiles() -> None:
    assert set(FILE_CLIENTS) == set(CLIENTS) == set(SCHEMAS)
    assert set(CLIENT_NAMES) == set(SETUP_NAMES)


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_the_entry_has_the_client_s_shape_and_every_other_byte_of_its_file_stays(
    name: str, home: Path, shop: Path
) -> None:
    client = CLIENTS[name]
    path = client.path("user", shop)
    assert home in path.parents  # the user's file, never the repository's
    path.parent.mkdir(parents=True)
    path.write_text(OTHERS[name], encoding="utf-8")
    before = tree_snapshot(shop)

    done, after = register_file(client, shop)
    written = path.read_text(encoding="utf-8")
    assert done.changed and written == after
    assert (path.parent / f"{path.name}.bak").read_text(encoding="utf-8") == OTHERS[name]
    servers = loads(written)
    for key in client.key:
        servers = servers[key]
    entry = servers["excerpt"]
    jsonschema.validate(entry, SCHEMAS[name])
    command = entry["command"] if name == "opencode" else [entry["command"], *entry["args"]]
    assert Path(command[0]).is_absolute() and Path(command[0]).name == "excerpt"
    assert command[1:] == ["mcp", "--repo", str(shop.resolve()), "--client", name]
    # the user's own server kept (opencode's file had none, and gets its mcp object)
    assert "docs" in servers if name != "opencode" else loads(written)["model"]
    assert tree_snapshot(shop) == before  # nothing inside the repository

    again, _ = register_file(client, shop)
    assert not again.changed and path.read_text(encoding="utf-8") == written
    assert main(["setup", name, "--repo", str(shop), "--remove", "--json"]) == 0
    assert path.read_text(encoding="utf-8") == OTHERS[name]  # back byte for byte


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_a_missing_file_is_made_with_the_entry_alone_and_print_writes_nothing(
    name: str, home: Path, shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = CLIENTS[name]
    path = client.path("user", shop)
    assert main(["setup", name, "--repo", str(shop), "--print"]) == 0
    out = capsys.readouterr().out
    assert f"would: write {'.'.join(client.key)}.excerpt in {path}" in out
    assert not path.exists() and not any(home.rglob("*.json"))
    register_file(client, shop)
    doc = loads(path.read_text(encoding="utf-8"))
    assert list(doc) == list(client.key[:1])
    assert not (path.parent / f"{path.name}.bak").exists()


@pytest.mark.parametrize(("name", "inside"), [
    ("cursor", ".cursor/mcp.json"), ("vscode", ".vscode/mcp.json"),
    ("gemini", ".gemini/settings.json"), ("zed", ".zed/settings.json"),
    ("opencode", "opencode.json"),
])  # fmt: skip
def test_the_project_scope_writes_inside_the_repository_only_when_asked_for(
    name: str, inside: str, home: Path, shop: Path
) -> None:
    done, _ = register_file(CLIENTS[name], shop, scope="project", dry_run=True)
    assert done.where == str(shop / inside) and not (shop / inside).exists()
    register_file(CLIENTS[name], shop, scope="project")
    assert (shop / inside).is_file()


def test_a_client_without_a_scope_and_a_file_that_is_not_json_are_clear_errors(
    home: Path, shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["setup", "windsurf", "--repo", str(shop), "--scope", "project"]) == 2
    assert "Windsurf has no project-scope MCP configuration file" in capsys.readouterr().err
    assert main(["setup", "zed", "--repo", str(shop), "--scope", "local"]) == 2
    path = CLIENTS["cursor"].path("user", shop)
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {"docs": }', encoding="utf-8")
    assert main(["setup", "cursor", "--repo", str(shop)]) == 3
    err = capsys.readouterr().err
    assert f"cannot read {path}" in err and "line 1, column 25" in err and "Traceback" not in err
    assert path.read_text(encoding="utf-8") == '{"mcpServers": {"docs": }'  # left as it was
    path.write_text('{"mcpServers": ["docs"]}', encoding="utf-8")
    assert main(["setup", "cursor", "--repo", str(shop)]) == 3
    assert "mcpServers is not an object" in capsys.readouterr().err


def test_setup_registers_checks_the_server_and_says_what_next(
    home: Path, shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["setup", "opencode", "--repo", str(shop), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["changed"] is True and doc["check"]["ok"] is True
    assert {t for t in doc["check"]["tools"]} >= {"context_pack", "context_plan"}
    assert main(["setup", "opencode", "--repo", str(shop)]) == 0
    out = capsys.readouterr().out
    assert "already registered" in out and "opencode mcp list" in out


def test_detect_lists_each_client_installed_and_what_setup_would_change(
    tmp_path: Path, home: Path, shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bin").mkdir()
    gemini = tmp_path / "bin" / "gemini"
    gemini.write_text("#!/bin/sh\nexit 0\n")
    gemini.chmod(0o755)
    (home / ".config" / "zed").mkdir(parents=True)
    register_file(CLIENTS["zed"], shop)
    assert main(["setup", "--detect", "--repo", str(shop), "--json"]) == 0
    rows = {r["client"]: r for r in json.loads(capsys.readouterr().out)["clients"]}
    assert set(rows) == set(CLIENTS)
    assert rows["gemini"]["installed"] and rows["gemini"]["programs"] == ["gemini"]
    assert rows["gemini"]["state"] == "not registered"
    assert rows["gemini"]["setup_would"].startswith("write mcpServers.excerpt in ")
    assert rows["zed"]["installed"] and rows["zed"]["state"] == "registered"
    assert rows["zed"]["setup_would"] == "change nothing"
    assert not rows["cursor"]["installed"]
    assert not any(home.rglob("*.bak")) and not (home / ".gemini").exists()  # wrote nothing
    assert main(["setup", "gemini", "--detect"]) == 2


def test_gemini_gets_its_hooks_in_the_same_settings_file_and_remove_takes_both_out(
    home: Path, shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = CLIENTS["gemini"].path("user", shop)
    path.parent.mkdir(parents=True)
    path.write_text(OTHERS["gemini"], encoding="utf-8")
    assert main(["setup", "gemini", "--repo", str(shop), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["check"]["hooks"]["answered"] == ["BeforeAgent", "SessionStart"]
    written = path.read_text(encoding="utf-8")
    assert "// mine" in written and loads(written)["theme"] == "GitHub"
    hooks = loads(written)["hooks"]
    (seed,) = hooks["BeforeAgent"][0]["hooks"]
    # Gemini CLI's schema: a name, milliseconds, no statusMessage; excerpt's own event name
    assert set(seed) == {"type", "command", "name", "timeout"} and seed["timeout"] == 15_000
    assert " hook UserPromptSubmit --client gemini --repo " in seed["command"]
    assert hooks["SessionStart"][0]["matcher"] == "resume"
    assert main(["setup", "gemini", "--repo", str(shop)]) == 0  # again: nothing changes
    assert path.read_text(encoding="utf-8") == written
    assert main(["setup", "gemini", "--repo", str(shop), "--remove"]) == 0
    assert path.read_text(encoding="utf-8") == OTHERS["gemini"]  # back byte for byte


def test_gemini_without_hooks_gets_the_server_alone(home: Path, shop: Path) -> None:
    assert main(["setup", "gemini", "--repo", str(shop), "--no-hooks", "--json"]) == 0
    assert "hooks" not in loads(CLIENTS["gemini"].path("user", shop).read_text("utf-8"))
