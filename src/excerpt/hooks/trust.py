"""Whether Codex will run excerpt's hooks: Codex runs a command hook only once the user has
trusted it (reviewed in its ``/hooks`` screen; trust is keyed to the hook's content, kept in
``config.toml`` as ``[hooks.state."<hooks.json>:<event>:<group>:<hook>"] trusted_hash``).
excerpt never trusts on the user's behalf; it asks Codex itself, through ``codex
app-server``'s ``hooks/list`` (each hook's ``trustStatus``: ``trusted``, ``untrusted``,
``modified``, ``managed``), which answers offline and writes nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["codex_trust"]

_TIMEOUT_S = 30


def codex_trust(found: Mapping[str, str], path: Path) -> bool | None:
    """True when Codex trusts every one of ``found`` (excerpt's hook commands by event), False
    when it does not trust one, None when Codex cannot be asked (not installed, no answer)."""
    if not found:
        return None
    hooks = _codex_hooks(path.parent)
    if hooks is None:
        return None
    ours = [h for h in hooks if h.get("command") in set(found.values())]
    if len(ours) < len(found):
        return False
    return all(h.get("trustStatus") in ("trusted", "managed") for h in ours)


def _codex_hooks(cwd: Path) -> list[dict[str, Any]] | None:
    """The hooks Codex lists for ``cwd`` (``codex app-server``, ``hooks/list``), or None."""
    binary = shutil.which("codex")
    if binary is None:
        return None
    requests = [
        {"id": 1, "method": "initialize", "params": {
            "clientInfo": {"name": "excerpt", "version": "1"},
            "capabilities": {"experimentalApi": True}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]  # fmt: skip
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    try:
        proc = subprocess.Popen(
            [binary, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, env={**os.environ, "RUST_LOG": "error"},
        )  # fmt: skip
    except OSError:
        return None
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(stdin)
        proc.stdin.flush()
        for line in _lines(proc, _TIMEOUT_S):
            try:
                answer = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(answer, dict) and answer.get("id") == 2:
                data = (answer.get("result") or {}).get("data") or []
                return [h for entry in data for h in entry.get("hooks", [])]
        return None
    finally:
        proc.kill()
        proc.wait()


def _lines(proc: subprocess.Popen[str], timeout: float) -> list[str]:
    """The lines ``proc`` writes until the answer or ``timeout`` seconds (read in a thread:
    a pipe read has no timeout of its own)."""
    import threading

    lines: list[str] = []
    done = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if '"id":2' in line.replace(" ", ""):
                break
        done.set()

    threading.Thread(target=read, daemon=True).start()
    done.wait(timeout)
    return list(lines)
