"""The processes a hook starts: a background index (detached from the client's pipes, so
the hook's answer is not held up), and the probe ``excerpt setup`` runs an installed hook
command with."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from excerpt.core.settings import cache_root, repo_cache_dir
from excerpt.hooks.options import log

__all__ = ["PROBE", "alive", "index_in_background", "indexing_now", "probe"]

PROBE = b'{"excerpt_probe": true}\n'
PROBE_TIMEOUT_S = 30


def _marker(root: Path) -> Path:
    return repo_cache_dir(root, cache_root()) / "background-index.pid"


def indexing_now(root: Path) -> bool:
    """Whether a background index a hook started for ``root`` is still running."""
    try:
        pid = int(_marker(root).read_text(encoding="utf-8") or 0)
    except (OSError, ValueError):
        return False
    if not alive(pid):
        return False
    try:  # a pid used again by another program is not our index (where /proc tells)
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True
    return b"excerpt" in command and b"index" in command


def index_in_background(root: Path) -> bool:
    """Start ``excerpt index`` for ``root`` on its own, detached from the client's pipes;
    one at a time per repository. True when one is running now (started or found)."""
    marker = _marker(root)
    try:
        if indexing_now(root):
            return True
        marker.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-m", "excerpt", "index", "--repo", str(root)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
        marker.write_text(str(proc.pid), encoding="utf-8")
    except (OSError, ValueError) as exc:
        log(f"background index of {root.name} not started: {exc}")
        return False
    return True


def alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def probe(command: str) -> str:
    """ "ok", or what went wrong running ``command`` with the probe."""
    try:
        proc = subprocess.run(
            shlex.split(command), input=PROBE, capture_output=True, timeout=PROBE_TIMEOUT_S,
            check=False,
        )  # fmt: skip
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return f"cannot run: {exc}"
    try:
        answer = json.loads(proc.stdout or b"null")
    except json.JSONDecodeError:
        answer = None
    if proc.returncode != 0 or not isinstance(answer, dict) or answer.get("excerpt_probe") != "ok":
        said = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()[-300:]
        return f"no answer to the probe (exit {proc.returncode}){': ' + said if said else ''}"
    return "ok"
