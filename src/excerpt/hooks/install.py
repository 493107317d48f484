"""Install and remove excerpt's hooks in a client's own settings, other keys untouched.

Claude Code reads hooks from ``settings.json``: the user's (``$CLAUDE_CONFIG_DIR`` or
``~/.claude``) for ``user`` and ``local`` scope (a ``local`` hook names its repository with
``--repo`` and does nothing elsewhere, so nothing is written inside the repository), the
repository's ``.claude/settings.json`` for ``project`` scope, asked for by name. Codex reads
``$CODEX_HOME/hooks.json`` (default ``~/.codex``), in Claude Code's shape. Gemini CLI reads
the ``hooks`` of its ``settings.json`` (``$GEMINI_CLI_HOME/.gemini``, default ``~/.gemini``;
the repository's ``.gemini/settings.json`` for ``project``), JSON with comments, in Claude
Code's shape but its own event names, a ``name`` instead of a ``statusMessage`` and timeouts
in milliseconds; that file is edited in place, its comments kept.

Each file is read as JSON, excerpt's entries added or replaced (an entry is excerpt's when
its command runs this installation's ``excerpt hook`` for the same repository), every other
key, hook and tool's entry kept in order, the previous file kept as ``.bak``, the new one
written atomically. Installing what is installed changes nothing.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from excerpt.core.durable import replace_config
from excerpt.core.installation import excerpt_command
from excerpt.core.jsonc import JsoncError, loads, set_at
from excerpt.errors import EnvironmentFault

__all__ = ["HookChange", "hook_commands", "hooks_file", "install_hooks", "installed_hooks"]

Client = Literal["claude", "codex", "gemini"]
# event -> (matcher, client timeout in seconds); None: the event takes no matcher
_CLAUDE_EVENTS: dict[str, tuple[str | None, int]] = {
    "UserPromptSubmit": (None, 15),
    "SessionStart": ("compact|resume", 15),
    "PostToolUse": ("Bash|mcp__.*", 30),
}
# what the client shows while a hook runs (both clients' ``statusMessage``)
_STATUS = {
    "UserPromptSubmit": "excerpt: context for this prompt",
    "SessionStart": "excerpt: handles still fresh",
    "PostToolUse": "excerpt: compacting a large output",
}
# Codex 0.171 cannot replace a tool's output from a hook: the seed and the handles only
_CODEX_EVENTS: dict[str, tuple[str | None, int]] = {
    "UserPromptSubmit": (None, 15),
    "SessionStart": ("compact|resume", 15),
}
# Gemini CLI 0.61 neither (its AfterTool context is added to the output, and turns its own
# truncation off): the seed before the agent's turn, the handles on a resumed session; by
# Gemini's event names (its SessionStart matcher is the source: startup, resume or clear)
_GEMINI_EVENTS: dict[str, tuple[str | None, int]] = {
    "BeforeAgent": (None, 15),
    "SessionStart": ("resume", 15),
}
_EVENTS = {"claude": _CLAUDE_EVENTS, "codex": _CODEX_EVENTS, "gemini": _GEMINI_EVENTS}
# excerpt's event for a client's own name of it
_EXCERPT_EVENT = {"BeforeAgent": "UserPromptSubmit"}


@dataclass(frozen=True, slots=True, kw_only=True)
class HookChange:
    """What installing (or removing) did to one settings file, or would do."""

    path: Path
    changed: bool
    events: tuple[str, ...]
    before: str  # the file's text before ("" when it did not exist)
    after: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "changed": self.changed, "events": list(self.events),
                "existed": bool(self.before)}  # fmt: skip


def hooks_file(client: Client, scope: str, repo: Path) -> Path:
    """The settings file the hooks of ``client`` live in for ``scope``."""
    if client == "codex":
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "hooks.json"
    if client == "gemini":
        if scope == "project":
            return repo / ".gemini" / "settings.json"
        return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini" / "settings.json"
    if scope == "project":
        return repo / ".claude" / "settings.json"
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "settings.json"


def hook_commands(client: Client, repo: Path | None, options: Sequence[str] = ()) -> dict[str, str]:
    """The command line of each of ``client``'s hooks, by event (absolute paths)."""
    events = _EVENTS[client]
    cache = os.environ.get("EXCERPT_CACHE_DIR")
    out = {}
    for event in events:
        argv = [*excerpt_command(), "hook", _EXCERPT_EVENT.get(event, event), "--client", client]
        if repo is not None:
            argv += ["--repo", str(repo)]
        if cache:  # a client passes its hooks its own environment, which may lack it
            argv += ["--cache-dir", str(Path(cache).absolute())]
        out[event] = shlex.join([*argv, *options])
    return out


def _is_ours(command: str, client: Client, repo: Path | None) -> bool:
    """Whether ``command`` is an excerpt hook of ``client`` for ``repo`` (any installation)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if "hook" not in words or not any(Path(w).name == "excerpt" or w == "excerpt" for w in words):
        return False
    at = words.index("hook")
    if words[at - 1] not in ("excerpt", "-m") and Path(words[at - 1]).name != "excerpt":
        return False
    named = words[words.index("--repo") + 1] if "--repo" in words[:-1] else None
    named_client = words[words.index("--client") + 1] if "--client" in words[:-1] else "claude"
    return named_client == client and named == (None if repo is None else str(repo))


def _load(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        doc = loads(before) if before.strip() else {}  # JSON, or JSON with comments
    except (OSError, UnicodeDecodeError, JsoncError) as exc:
        raise EnvironmentFault(f"cannot read {path}: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("hooks", {}), dict):
        raise EnvironmentFault(f"cannot read {path}: not a settings object with a hooks table")
    return before, doc


def _without_ours(groups: Any, client: Client, repo: Path | None) -> list[Any]:
    """The event's matcher groups with excerpt's hooks for ``repo`` taken out."""
    out = []
    for group in groups if isinstance(groups, list) else []:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list):
            out.append(group)
            continue
        kept = [
            h for h in hooks
            if not (isinstance(h, dict) and _is_ours(str(h.get("command", "")), client, repo))
        ]  # fmt: skip
        if kept:
            out.append({**group, "hooks": kept})
        elif len(kept) == len(hooks):
            out.append(group)
    return out


def install_hooks(
    client: Client,
    repo: Path | None,
    path: Path,
    *,
    options: Sequence[str] = (),
    remove: bool = False,
    dry_run: bool = False,
) -> HookChange:
    """Add (or with ``remove``, take out) excerpt's hooks for ``repo`` in ``path``.

    Raises:
        EnvironmentFault: the file cannot be read as JSON settings, or written.
    """
    before, doc = _load(path)
    table: dict[str, Any] = dict(doc.get("hooks") or {})
    events = _EVENTS[client]
    commands = hook_commands(client, repo, options)
    for event in sorted({*table, *events}, key=lambda e: (e not in table, e)):
        current = table.get(event, [])
        groups = _without_ours(current, client, repo)
        if not remove and event in events:
            matcher, timeout = events[event]
            hook = _hook(client, event, commands[event], timeout)
            wanted = {**({"matcher": matcher} if matcher else {}), "hooks": [hook]}
            if wanted in current and len(current) == len(groups) + 1:
                continue  # installed so already, where it stands
            groups.append(wanted)
        if groups:
            table[event] = groups
        elif event in table:
            del table[event]
    after_doc = {**doc, "hooks": table} if table or "hooks" in doc else dict(doc)
    if not table:
        after_doc.pop("hooks", None)
    if client == "gemini":  # JSON with comments: only its hooks change, in place
        after = set_at(before, ["hooks"], after_doc.get("hooks"))
    else:
        after = json.dumps(after_doc, indent=2, ensure_ascii=False) + "\n"
    changed = _normal(after_doc) != _normal(doc)
    if changed and not dry_run:
        replace_config(path, before, after)
    return HookChange(path=path, changed=changed, events=tuple(events), before=before,
                      after=after if changed else before)  # fmt: skip


def _hook(client: Client, event: str, command: str, timeout: int) -> dict[str, Any]:
    """One hook entry in ``client``'s shape."""
    status = _STATUS[_EXCERPT_EVENT.get(event, event)]
    if client == "gemini":  # its settings schema takes a name, and milliseconds
        return {"type": "command", "command": command, "name": status.split(":")[0] + "-"
                + _EXCERPT_EVENT.get(event, event), "timeout": timeout * 1000}  # fmt: skip
    return {"type": "command", "command": command, "timeout": timeout, "statusMessage": status}


def _normal(doc: Any) -> str:
    return json.dumps(doc, sort_keys=False, ensure_ascii=False)


def installed_hooks(client: Client, repo: Path | None, path: Path) -> dict[str, str]:
    """excerpt's hook commands for ``repo`` found in ``path``, by event."""
    try:
        _, doc = _load(path)
    except EnvironmentFault:
        return {}
    found: dict[str, str] = {}
    for event, groups in (doc.get("hooks") or {}).items():
        for group in groups if isinstance(groups, list) else []:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                command = str(hook.get("command", "")) if isinstance(hook, dict) else ""
                if _is_ours(command, client, repo):
                    found[event] = command
    return found
