"""What every hook shares: its options, the log, and who decides a late seed's fate.

Standard library only: ``excerpt.hooks.main`` imports it before it knows there is work.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import threading
import time
from pathlib import Path

__all__ = ["EVENTS", "Decision", "HookOptions", "add_options", "log", "parser"]

EVENTS = ("UserPromptSubmit", "SessionStart", "PostToolUse", "PreCompact")
DEFAULT_TIMEOUT_S = 1.5
DEFAULT_MIN_BYTES = 8000
_LOG_MAX = 1024 * 1024


class HookOptions(argparse.Namespace):
    event: str
    client: str
    repo: str | None
    seed_tokens: int
    seed_shape: str
    timeout: float
    min_bytes: int
    cache_dir: str | None


class Decision:
    """Who decides a seed's fate: the worker that built it (it records the seed as sent,
    then it must be sent) or the waiting thread at the deadline (a note instead, and nothing
    recorded). Whichever comes first under the lock wins."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.late = False
        self.committed = False

    def commit(self) -> bool:
        """The worker: True when it may record its seed (it will be sent)."""
        with self._lock:
            if not self.late:
                self.committed = True
            return self.committed

    def give_up(self) -> bool:
        """The waiting thread: True when the worker has not committed (it is too late)."""
        with self._lock:
            if not self.committed:
                self.late = True
            return self.late


def add_options(p: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The hook's options on ``p``, with their help (the lean entry point parses with them,
    and ``excerpt hook --help`` shows them); the actions by flag, for completion marks."""
    actions = {
        "--client": p.add_argument(
            "--client", choices=("claude", "codex", "gemini"), default="claude",
            help="whose answer format",
        ),
        "--repo": p.add_argument(
            "--repo", default=None, metavar="DIR",
            help="serve only this repository (default: the session's git work tree)",
        ),
        "--cache-dir": p.add_argument(
            "--cache-dir", default=None, metavar="DIR",
            help="the cache directory (as EXCERPT_CACHE_DIR)",
        ),
        "--seed-tokens": p.add_argument(
            "--seed-tokens", type=int, default=2000, metavar="N",
            help="a seed's cap in o200k tokens",
        ),
        "--seed-shape": p.add_argument(
            "--seed-shape", choices=("auto", "pack", "map"), default="auto",
            help="source regions (pack), a map of where to read (map), or chosen by the"
            " ranking's confidence (auto)",
        ),
        "--timeout": p.add_argument(
            "--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
            help="seconds before a note replaces the seed",
        ),
        "--min-bytes": p.add_argument(
            "--min-bytes", type=int, default=DEFAULT_MIN_BYTES, metavar="N",
            help="smallest output compacted, in bytes",
        ),
    }  # fmt: skip
    return actions


def parser() -> argparse.ArgumentParser:
    """The hook's command line, for the lean entry point (no help: a client never asks)."""
    p = argparse.ArgumentParser(prog="excerpt hook", add_help=False)
    p.add_argument("event", type=_event)
    add_options(p)
    return p


def _event(text: str) -> str:
    """An event by the client's name for it, in any case, with or without dashes."""
    folded = text.replace("-", "").replace("_", "").lower()
    for event in EVENTS:
        if event.lower() == folded:
            return event
    raise ValueError(text)


def log_path() -> Path | None:
    """``hooks.log`` under the cache root (None when there is no cache root)."""
    try:
        from excerpt.core.settings import cache_root

        return cache_root() / "hooks.log"
    except Exception:  # noqa: BLE001 (no cache: nowhere to log; the hook still answers)
        return None


def log(line: str) -> None:
    """One line in ``hooks.log`` (the previous file kept as ``hooks.log.1`` past 1 MB)."""
    path = log_path()
    if path is None:
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    text = f"{stamp} pid {os.getpid()} {line}".replace("\n", " ") + "\n"
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            if path.stat().st_size > _LOG_MAX:
                os.replace(path, path.with_name(path.name + ".1"))
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
