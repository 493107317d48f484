"""The soak's writer, and the check of every excerpt served against what it wrote: an edit,
an addition and a removal every second, 50 files rewritten at once every minute (a branch
switch), each version kept with the times it was current."""

from __future__ import annotations

import hashlib
import os
import random
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Writer", "stale_items", "stale_retrievals"]

EDIT_EVERY_S = 1.0
SWITCH_EVERY_S = 60.0
SWITCH_FILES = 50
_FENCE = re.compile(r"^(`{3,}|~{3,})")
_RETRIEVED = re.compile(
    r"^## `(?P<path>.+)#L(?P<a>\d+)-L(?P<b>\d+)@(?P<sha>[0-9a-f]+)` \((?P<state>[^)]*)\)"
)


@dataclass(slots=True)
class _Version:
    since: float  # monotonic time its write began (it may be read from then on)
    data: bytes | None  # None: the file was removed
    until: float = float("inf")  # when the next version's write ended


class Writer(threading.Thread):
    """Edits, adds and removes files of the copy on a schedule, keeping every version it
    wrote with the times it was current."""

    def __init__(self, root: Path, files: Sequence[str], seed: int, stop: threading.Event,
                 switch_every_s: float = SWITCH_EVERY_S) -> None:  # fmt: skip
        super().__init__(name="soak-writer", daemon=True)
        self.switch_every_s = switch_every_s
        self.root = root
        self.files = list(files)
        self.rng = random.Random(seed)
        self.stop = stop
        self.lock = threading.Lock()
        self.history: dict[str, list[_Version]] = {}
        self.added: list[str] = []
        self.writes = 0
        self.switches = 0
        self.failure: str | None = None
        self.paused = threading.Event()

    def run(self) -> None:
        started = time.monotonic()
        next_switch = started + self.switch_every_s / 2  # a one-interval run sees one switch
        n = 0
        try:
            while not self.stop.wait(EDIT_EVERY_S):
                if self.paused.is_set():
                    continue
                n += 1
                self._edit(self.rng.choice(self.files), n)
                self._add(n)
                if len(self.added) > 5:
                    self.remove(self.added.pop(0))
                if time.monotonic() >= next_switch:
                    for path in self.rng.sample(self.files, min(SWITCH_FILES, len(self.files))):
                        self._edit(path, n)
                    self.switches += 1
                    next_switch += self.switch_every_s
        except OSError as exc:  # the copy is ours: a failure here is the bench's own
            self.failure = f"{type(exc).__name__}: {exc}"

    def _edit(self, path: str, n: int) -> None:
        old = self._current(path)
        if old is None:
            return
        lines = old.split(b"\n")
        at = self.rng.randrange(len(lines))
        lines.insert(at, f"# soak edit {n}: {self.rng.random():.6f}".encode())
        self.write(path, b"\n".join(lines))

    def _add(self, n: int) -> None:
        path = f"soak_added/module_{n}.py"
        body = "".join(f"def added_{n}_{i}(value):\n    return value + {i}\n\n" for i in range(8))
        target = self.root / path
        target.parent.mkdir(exist_ok=True)
        self.write(path, body.encode())
        self.added.append(path)

    def remove(self, path: str) -> None:
        """The file removed, recorded around it."""
        target = self.root / path
        with self.lock:
            self._close(path, time.monotonic(), None)
        target.unlink()
        with self.lock:
            self.history[path][-2].until = time.monotonic()
        self.writes += 1

    def _current(self, path: str) -> bytes | None:
        with self.lock:
            versions = self.history.get(path)
            if versions:
                return versions[-1].data
        try:
            return (self.root / path).read_bytes()
        except FileNotFoundError:
            return None

    def write(self, path: str, data: bytes) -> None:
        """A whole-file replace (as an editor or a checkout writes), recorded around it."""
        target = self.root / path
        tmp = target.with_name(f".{target.name}.soak-tmp")
        tmp.write_bytes(data)
        with self.lock:
            self._close(path, time.monotonic(), data)
        os.replace(tmp, target)
        with self.lock:
            versions = self.history[path]
            if len(versions) > 1:
                versions[-2].until = time.monotonic()
        self.writes += 1

    def _close(self, path: str, at: float, data: bytes | None) -> None:
        versions = self.history.get(path)
        if versions is None:  # its first write: what it held before is its first version
            try:
                before: bytes | None = (self.root / path).read_bytes()
            except FileNotFoundError:
                before = None
            versions = self.history[path] = [_Version(since=float("-inf"), data=before)]
        versions.append(_Version(since=at, data=data))

    def versions_during(self, path: str, start: float, end: float) -> list[bytes | None]:
        """Every content ``path`` had at some moment between ``start`` and ``end``."""
        with self.lock:  # a first write records the file's old content under this lock
            versions = list(self.history.get(path, ()))
            if not versions:
                try:
                    return [(self.root / path).read_bytes()]
                except FileNotFoundError:
                    return [None]
        return [v.data for v in versions if v.since <= end and v.until >= start]


# ----------------------------------------------------------------------------- checking


def _lines_of(data: bytes, a: int, b: int) -> str:
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    return "\n".join(lines[a - 1 : b])


def stale_items(
    items: Sequence[dict[str, Any]], writer: Writer, start: float, end: float
) -> list[str]:
    """The items of a pack whose text matches no version of their file current while the
    call was in flight."""
    out = []
    for item in items:
        path = str(item.get("path", ""))
        a, b = int(item.get("start_line", 0)), int(item.get("end_line", 0))
        text = str(item.get("text", ""))
        sha = str(item.get("source_sha256", ""))
        ok = False
        for data in writer.versions_during(path, start, end):
            if data is None:
                continue
            if sha and hashlib.sha256(data).hexdigest() != sha:
                continue
            if _same_text(text, _lines_of(data, a, b)):
                ok = True
                break
        if not ok:
            out.append(f"{path}#L{a}-L{b}@{sha[:16]}")
    return out


def _same_text(served: str, current: str) -> bool:
    """The served excerpt is the file's lines (a long line may be cut and marked)."""
    served, current = served.rstrip("\n"), current.rstrip("\n")
    return served == current or (len(served) < len(current) and "…" in served)


def stale_retrievals(
    markdown: str, writer: Writer, start: float, end: float
) -> tuple[int, list[str]]:
    """How many fresh excerpts a retrieval served, and those whose handle's version was not
    current while the call was in flight (or whose text is not that version's)."""
    lines = markdown.split("\n")
    served = 0
    bad = []
    i = 0
    while i < len(lines):
        m = _RETRIEVED.match(lines[i])
        i += 1
        if m is None or not m.group("state").startswith("fresh"):
            continue
        fence = _FENCE.match(lines[i]) if i < len(lines) else None
        if fence is None:
            continue
        j = i + 1
        while j < len(lines) and lines[j] != fence.group(1):
            j += 1
        text = "\n".join(lines[i + 1 : j])
        i = j + 1
        served += 1
        path, a, b, sha = m.group("path"), int(m.group("a")), int(m.group("b")), m.group("sha")
        ok = any(
            data is not None
            and hashlib.sha256(data).hexdigest().startswith(sha)
            and _same_text(text, _lines_of(data, a, b))
            for data in writer.versions_during(path, start, end)
        )
        if not ok:
            bad.append(f"{path}#L{a}-L{b}@{sha}")
    return served, bad
