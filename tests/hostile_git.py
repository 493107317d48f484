"""Git configuration and hooks that each leave a marker file when run: armed in a repository,
they show whether anything ran what the repository names (RELIABILITY B6 #42). Shared by the
write audits of indexing (``test_repo_is_never_written``) and of the gate
(``test_gate_safety``)."""

from __future__ import annotations

import shlex
from pathlib import Path

from conftest import git

# each config key git runs as a command, and the tail of the script it names
CONFIG_SCRIPTS = {
    "core.fsmonitor": "exit 0",
    "core.pager": "exec cat",
    "diff.external": "exit 0",
    "diff.x.textconv": 'exec cat "$1"',
    "filter.x.clean": "exec cat",
    "filter.x.smudge": "exec cat",
}
HOOKS = (
    "post-checkout",
    "pre-commit",
    "post-index-change",
    "fsmonitor-watchman",
    "reference-transaction",
)
ALL_MARKERS = {*CONFIG_SCRIPTS, *(f"hook.{h}" for h in HOOKS)}


def _script(path: Path, marker: Path, tail: str) -> None:
    path.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marker))}\n{tail}\n", encoding="utf-8")
    path.chmod(0o755)


def arm(repo: Path, tmp: Path, *, hooks_path: bool = False) -> Path:
    """Point ``repo``'s config and hooks (in ``.git/hooks``, or with ``hooks_path`` in a
    directory ``core.hooksPath`` names) at scripts under ``tmp`` that each touch a marker;
    the markers' directory (``tmp/markers``, empty). Arm after the fixture's own git calls,
    so that setting up runs none of them; attributes naming ``diff=x filter=x`` are the
    caller's to write."""
    markers, scripts = tmp / "markers", tmp / "scripts"
    markers.mkdir()
    scripts.mkdir()
    for key, tail in CONFIG_SCRIPTS.items():
        _script(scripts / key, markers / key, tail)
        git(repo, "config", key, str(scripts / key))
    hooks = tmp / "hooks" if hooks_path else repo / ".git/hooks"
    hooks.mkdir(exist_ok=True)
    for hook in HOOKS:
        _script(hooks / hook, markers / f"hook.{hook}", "exit 0")
    if hooks_path:
        git(repo, "config", "core.hooksPath", str(hooks))
    assert not any(markers.iterdir())
    return markers
