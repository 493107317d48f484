"""Installing excerpt's hooks in a client's settings: merged with every other key and every
other tool's hooks, idempotent, removable, ``dry_run`` writing nothing, a backup kept."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from excerpt.errors import EnvironmentFault
from excerpt.hooks.install import hook_commands, install_hooks, installed_hooks

# a user's own settings: other keys, another tool's hook on an event excerpt also uses
SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier -w"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def write(path: Path, doc: object) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


def test_hooks_are_merged_beside_every_other_key_and_hook(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    before = write(path, SETTINGS)
    repo = tmp_path / "repo"
    done = install_hooks("claude", repo, path)
    assert done.changed
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["model"] == "opus" and doc["permissions"] == SETTINGS["permissions"]
    assert doc["hooks"]["Stop"] == SETTINGS["hooks"]["Stop"]
    assert doc["hooks"]["PostToolUse"][0] == SETTINGS["hooks"]["PostToolUse"][0]
    assert set(installed_hooks("claude", repo, path)) == {
        "UserPromptSubmit", "SessionStart", "PostToolUse"
    }  # fmt: skip
    assert (tmp_path / "settings.json.bak").read_text(encoding="utf-8") == before
    for command in installed_hooks("claude", repo, path).values():
        words = shlex.split(command)
        assert Path(words[0]).is_absolute() and words[words.index("--repo") + 1] == str(repo)


def test_installing_again_changes_nothing_and_removing_restores_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write(path, SETTINGS)
    repo = tmp_path / "repo"
    install_hooks("claude", repo, path)
    installed = path.read_bytes()
    assert not install_hooks("claude", repo, path).changed
    assert path.read_bytes() == installed
    assert install_hooks("claude", repo, path, remove=True).changed
    assert json.loads(path.read_text(encoding="utf-8")) == SETTINGS
    assert not install_hooks("claude", repo, path, remove=True).changed


def test_another_repositorys_hooks_and_options_are_kept_apart(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    one, two = tmp_path / "one", tmp_path / "two"
    install_hooks("claude", one, path)
    install_hooks("claude", two, path)
    assert installed_hooks("claude", one, path) and installed_hooks("claude", two, path)
    # new options replace this repository's entries, never add a second set
    install_hooks("claude", one, path, options=["--seed-tokens", "800"])
    groups = json.loads(path.read_text(encoding="utf-8"))["hooks"]["UserPromptSubmit"]
    assert len(groups) == 2
    assert "--seed-tokens 800" in installed_hooks("claude", one, path)["UserPromptSubmit"]
    install_hooks("claude", one, path, remove=True)
    assert not installed_hooks("claude", one, path) and installed_hooks("claude", two, path)


def test_dry_run_writes_nothing_and_says_what_would_be_written(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    done = install_hooks("codex", tmp_path, path, dry_run=True)
    assert done.changed and not path.exists()
    assert "UserPromptSubmit" in json.loads(done.after)["hooks"]
    assert "PostToolUse" not in json.loads(done.after)["hooks"]  # Codex cannot replace output


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"hooks": []}'],
                         ids=["broken", "array", "hooks-not-a-table"])  # fmt: skip
def test_a_settings_file_that_is_not_json_settings_is_refused_untouched(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EnvironmentFault, match="cannot read"):
        install_hooks("claude", tmp_path, path)
    assert path.read_text(encoding="utf-8") == text


def test_the_cache_directory_in_use_is_passed_to_the_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "cache"))
    for command in hook_commands("codex", tmp_path).values():
        words = shlex.split(command)
        assert words[words.index("--cache-dir") + 1] == str(tmp_path / "cache")


def test_mcp_check_reports_the_hooks_installed_for_the_repository_and_their_probes(
    make_repo: object, tmp_path: Path, cache_dir: Path
) -> None:
    import os
    import subprocess
    import sys

    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app/a.py").write_text("def a():\n    return 1\n", encoding="utf-8")
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
           "CODEX_HOME": str(home / ".codex"), "PATH": os.path.dirname(sys.executable)}  # fmt: skip

    def check() -> dict[str, object]:
        proc = subprocess.run([sys.executable, "-m", "excerpt", "mcp", "--check", "--json",
                               "--repo", str(repo)], env=env, capture_output=True, text=True,
                              timeout=120, check=False)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        report: dict[str, object] = json.loads(proc.stdout)["hooks"]
        return report

    assert check() == {}
    install_hooks("claude", repo.resolve(), home / ".claude/settings.json")
    install_hooks("codex", repo.resolve(), home / ".codex/hooks.json")
    found = check()
    claude, codex = found["claude"], found["codex"]
    assert isinstance(claude, dict) and isinstance(codex, dict)
    assert claude["ok"] and claude["answered"] == [
        "PostToolUse",
        "SessionStart",
        "UserPromptSubmit",
    ]
    assert codex["answered"] == ["SessionStart", "UserPromptSubmit"]
    assert codex["trusted"] is None  # no codex on PATH to ask
