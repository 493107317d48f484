"""``excerpt setup claude|codex`` against the real clients: registered through the client's
own mechanism, connected (Claude) or listed (Codex), idempotent, ``--print`` writes nothing,
the repository is never written, and Codex's other configuration keys stay byte for byte.

The clients are the pinned npm releases (``real_clients``), each run offline in a network
namespace with a fresh HOME; locally the tests skip without them, under ``CI`` they fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from client_runs import require
from conftest import tree_snapshot, write_tree
from real_clients import client_binary, netns_prefix
from trees import SHOP

pytestmark = pytest.mark.timeout(300)

# a Codex configuration of the user's own: comments, spacing and tables that must survive
CODEX_CONFIG = (
    'model = "gpt-5"   # the one I use\n'
    "approval_policy = 'on-request'\n"
    "\n"
    "[profiles.fast]\n"
    'model = "o4-mini"\n'
    "\n"
    "[mcp_servers.docs]\n"
    'command = "/usr/bin/docs-server"\n'
    'args = ["--stdio"]\n'
)


def _env(tmp: Path, client: str) -> dict[str, str]:
    binary = client_binary(client)
    assert binary is not None
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {
        **os.environ,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
        "PATH": f"{binary.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "EXCERPT_CACHE_DIR": str(tmp / "cache"),
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*netns_prefix(), *argv], env=env, cwd=cwd, capture_output=True, text=True,
        timeout=240, check=False,
    )  # fmt: skip


def _setup(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "excerpt", "setup", *args], env, cwd)


def _home(env: dict[str, str]) -> dict[str, Any]:
    # the clients' own caches and logs aside: what a registration writes is configuration
    return {
        k: v
        for k, v in tree_snapshot(Path(env["HOME"])).items()
        if not k.startswith((".cache", ".claude/statsig", ".claude/debug", ".codex/log"))
    }


def test_setup_claude_registers_a_connected_server_once(tmp_path: Path) -> None:
    require("claude")
    repo = write_tree(tmp_path / "repo", SHOP)
    env = _env(tmp_path, "claude")
    tree = tree_snapshot(repo)
    home = _home(env)

    printed = _setup("claude", "--repo", str(repo), "--print", env=env, cwd=repo)
    assert printed.returncode == 0, printed.stderr
    assert "would: claude mcp add -s local excerpt -e EXCERPT_CACHE_DIR=" in printed.stdout
    assert f"mcp --repo {repo}" in printed.stdout
    assert _home(env) == home  # --print wrote nothing

    first = _setup("claude", "--repo", str(repo), "--json", env=env, cwd=repo)
    assert first.returncode == 0, first.stderr
    done = json.loads(first.stdout)
    assert done["changed"] and done["check"]["ok"] and done["command"][-1] == str(repo)
    listed = _run(["claude", "mcp", "list"], env, repo)
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("excerpt:"))
    assert str(repo) in line and "Connected" in line and "✔" in line
    configured = _home(env)

    again = _setup("claude", "--repo", str(repo), "--json", env=env, cwd=repo)
    assert again.returncode == 0, again.stderr
    assert not json.loads(again.stdout)["changed"]
    assert {k: v[2] for k, v in _home(env).items() if k.endswith(".json")} == {
        k: v[2] for k, v in configured.items() if k.endswith(".json")
    }  # the registration is where it was, unchanged
    assert tree_snapshot(repo) == tree  # nothing written in the repository
    settings = Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    hooks = json.loads(settings.read_text(encoding="utf-8"))["hooks"]
    assert set(hooks) == {"UserPromptSubmit", "SessionStart", "PostToolUse"}
    assert done["check"]["hooks"]["answered"] == sorted(hooks)

    removed = _setup("claude", "--repo", str(repo), "--remove", env=env, cwd=repo)
    assert removed.returncode == 0, removed.stderr
    assert "hooks" not in json.loads(settings.read_text(encoding="utf-8"))
    listed = _run(["claude", "mcp", "list"], env, repo)
    assert not any(x.startswith("excerpt:") for x in listed.stdout.splitlines())
    assert tree_snapshot(repo) == tree


def test_setup_codex_merges_its_table_and_keeps_every_other_key(tmp_path: Path) -> None:
    require("codex")
    repo = write_tree(tmp_path / "repo", SHOP)
    env = _env(tmp_path, "codex")
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CODEX_CONFIG, encoding="utf-8")
    tree = tree_snapshot(repo)

    printed = _setup("codex", "--repo", str(repo), "--print", env=env, cwd=repo)
    assert printed.returncode == 0, printed.stderr
    assert config.read_text(encoding="utf-8") == CODEX_CONFIG
    assert not config.with_name("config.toml.bak").exists()

    first = _setup("codex", "--repo", str(repo), "--json", env=env, cwd=repo)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["changed"]
    text = config.read_text(encoding="utf-8")
    assert text.startswith(CODEX_CONFIG)  # every other key, comment and blank line, as it was
    assert "[mcp_servers.excerpt]" in text and "required = true" in text
    assert config.with_name("config.toml.bak").read_text(encoding="utf-8") == CODEX_CONFIG
    listed = _run(["codex", "mcp", "list", "--json"], env, repo)
    assert listed.returncode == 0, listed.stderr
    servers = {s["name"]: s for s in json.loads(listed.stdout)}
    assert set(servers) == {"docs", "excerpt"}
    assert servers["excerpt"]["transport"]["args"] == ["mcp", "--repo", str(repo)]

    again = _setup("codex", "--repo", str(repo), env=env, cwd=repo)
    assert again.returncode == 0, again.stderr
    assert "nothing changed" in again.stdout
    assert config.read_text(encoding="utf-8") == text
    assert tree_snapshot(repo) == tree
    hooks_json = Path(env["CODEX_HOME"]) / "hooks.json"
    hooks = json.loads(hooks_json.read_text(encoding="utf-8"))["hooks"]
    assert set(hooks) == {"UserPromptSubmit", "SessionStart"}  # no output replacement
    assert f"--repo {repo}" in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    # Codex itself says the new hooks are not trusted yet, and setup tells how to trust them
    assert "Trust all and continue" in again.stdout
    checked = _run([sys.executable, "-m", "excerpt", "mcp", "--check", "--json", "--repo",
                    str(repo)], env, repo)  # fmt: skip
    assert json.loads(checked.stdout)["hooks"]["codex"]["trusted"] is False

    removed = _setup("codex", "--repo", str(repo), "--remove", env=env, cwd=repo)
    assert removed.returncode == 0, removed.stderr
    assert config.read_text(encoding="utf-8") == CODEX_CONFIG
    assert "hooks" not in json.loads(hooks_json.read_text(encoding="utf-8"))


def test_setup_refuses_clearly_when_the_client_is_not_installed(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", SHOP)
    env = {**os.environ, "HOME": str(tmp_path), "PATH": os.path.dirname(sys.executable)}
    for client, name in (("claude", "Claude Code"), ("codex", "Codex")):
        proc = subprocess.run(
            [sys.executable, "-m", "excerpt", "setup", client, "--repo", str(repo)],
            env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert proc.returncode == 3
        assert f"{name} is not installed" in proc.stderr and "--print" in proc.stderr
        assert "Traceback" not in proc.stderr
        printed = subprocess.run(
            [sys.executable, "-m", "excerpt", "setup", client, "--repo", str(repo), "--print"],
            env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert printed.returncode == 0 and f"mcp --repo {repo}" in printed.stdout
    assert list(tmp_path.iterdir()) == [repo]  # nothing written


def test_setup_codex_has_no_project_scope(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", SHOP)
    proc = subprocess.run(
        [sys.executable, "-m", "excerpt", "setup", "codex", "--repo", str(repo), "--scope",
         "project", "--print"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "--scope user" in proc.stderr
