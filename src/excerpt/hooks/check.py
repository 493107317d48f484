"""Whether excerpt's hooks are installed for a client and answer: each installed command is
run once with a probe (``{"excerpt_probe": true}``), which the hook answers at once with its
version, touching nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from excerpt.hooks.install import Client, hooks_file, installed_hooks
from excerpt.hooks.processes import probe
from excerpt.hooks.trust import codex_trust

__all__ = ["check_hooks", "hooks_serving"]


def check_hooks(client: Client, repo: Path | None, scope: str, root: Path) -> dict[str, Any]:
    """The hooks found for ``repo`` in ``client``'s settings, each probe's answer, and (for
    Codex) whether the user has trusted them yet."""
    path = hooks_file(client, scope, root)
    found = installed_hooks(client, repo, path)
    probes: dict[str, str] = {}
    for event, command in found.items():
        probes[event] = probe(command)
    report: dict[str, Any] = {
        "file": str(path),
        "installed": sorted(found),
        "answered": sorted(e for e, p in probes.items() if p == "ok"),
        "problems": {e: p for e, p in probes.items() if p != "ok"},
    }
    if client == "codex":
        report["trusted"] = codex_trust(found, path)
    report["ok"] = bool(found) and not report["problems"]
    return report


def hooks_serving(root: Path) -> dict[str, dict[str, Any]]:
    """For each client with excerpt's hooks serving ``root`` (named by ``--repo``, or at
    user or project scope), what ``check_hooks`` reports (``excerpt mcp --check``)."""
    out: dict[str, dict[str, Any]] = {}
    places: tuple[tuple[Client, str], ...] = (
        ("claude", "user"), ("claude", "project"), ("codex", "user"), ("gemini", "user"),
        ("gemini", "project"),
    )  # fmt: skip
    for client, scope in places:
        path = hooks_file(client, scope, root)
        for repo in (root, None):
            if client in out or not installed_hooks(client, repo, path):
                continue
            out[client] = {"scope": scope, **check_hooks(client, repo, scope, root)}
    return out
