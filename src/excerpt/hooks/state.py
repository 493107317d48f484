"""What a client session has been seeded with: the task's terms and the handles served.

One small JSON file per session under the cache (``hooks/sessions/``), keyed by a digest of
the client and its session id (never the id itself in a path), replaced atomically under an
advisory lock, so hooks of one session running at once do not lose each other's seeds. A
session file not touched for a week is removed by the next write.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from excerpt.core.durable import write_atomic

__all__ = ["SeedRecord", "SessionState", "session_state"]

MAX_SEEDS = 64  # seeds remembered per session (the oldest go first)
_STALE_S = 7 * 24 * 3600


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedRecord:
    """One seed sent in the session: the repository, the task's terms, the handles, and
    whether it served their source (``pack``) or only pointed at them (``map``)."""

    root: str
    terms: tuple[str, ...]
    handles: tuple[str, ...]
    shape: str = "pack"

    def to_dict(self) -> dict[str, object]:
        return {"root": self.root, "terms": list(self.terms), "handles": list(self.handles),
                "shape": self.shape}  # fmt: skip


class SessionState:
    """The seeds of one session, read and written under the session's lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seeds: list[SeedRecord] = []

    def handles(self, root: str, *, shapes: tuple[str, ...] = ("pack", "map")) -> tuple[str, ...]:
        """Every handle sent for ``root`` in this session (in seeds of ``shapes``: ``pack``
        for the regions whose source the model holds), first sent first."""
        seen = (h for s in self.seeds if s.root == root and s.shape in shapes for h in s.handles)
        return tuple(dict.fromkeys(seen))

    def last(self, root: str) -> SeedRecord | None:
        mine = [s for s in self.seeds if s.root == root]
        return mine[-1] if mine else None

    def add(self, seed: SeedRecord) -> None:
        self.seeds = [*self.seeds, seed][-MAX_SEEDS:]

    def _load(self) -> None:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
            self.seeds = [
                SeedRecord(
                    root=str(s["root"]),
                    terms=tuple(str(t) for t in s["terms"]),
                    handles=tuple(str(h) for h in s["handles"]),
                    shape=str(s.get("shape", "pack")),
                )
                for s in doc["seeds"]
            ]
        except (OSError, ValueError, KeyError, TypeError):
            self.seeds = []  # none yet, or damaged: a session starts over, nothing is lost

    def _save(self) -> None:
        doc = {"seeds": [s.to_dict() for s in self.seeds]}
        write_atomic(self.path, json.dumps(doc, sort_keys=True).encode("utf-8"))


def _key(client: str, session_id: str) -> str:
    return hashlib.sha256(f"{client}\0{session_id}".encode()).hexdigest()[:32]


@contextlib.contextmanager
def session_state(cache_root: Path, client: str, session_id: str) -> Iterator[SessionState]:
    """The session's state, locked for the block and written back after it.

    Raises:
        OSError: the cache cannot be written (the hook then injects nothing).
    """
    folder = cache_root / "hooks" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    key = _key(client, session_id)
    state = SessionState(folder / f"{key}.json")
    with open(folder / f"{key}.lock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        state._load()
        before = [s.to_dict() for s in state.seeds]
        yield state
        if [s.to_dict() for s in state.seeds] != before:
            state._save()
            _prune(folder, keep=key)


def _prune(folder: Path, *, keep: str) -> None:
    """Remove the files of sessions untouched for a week."""
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.name.startswith(keep):
                continue
            with contextlib.suppress(OSError):
                if now - entry.stat().st_mtime > _STALE_S:
                    os.unlink(entry.path)
