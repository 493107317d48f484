"""What runs during a soak besides the writer: the record of every call, the MCP sessions, the
hook processes and the sampler of memory, descriptors and cache size."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from excerpt.errors import EnvironmentFault
from excerpt_bench.soak.writer import Writer, stale_items, stale_retrievals

__all__ = ["Hooks", "Record", "Sampler", "Session"]

SAMPLE_EVERY_S = 2.0
HOOK_PAYLOAD_BYTES = 40_000  # a PostToolUse output large enough to be compacted
RETRIEVE_PER_PACK = 2


@dataclass(slots=True)
class Record:
    """Every call's outcome, thread-safe."""

    started: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: list[tuple[float, str, float]] = field(default_factory=list)  # (at, kind, seconds)
    errors: list[dict[str, Any]] = field(default_factory=list)
    stale: list[dict[str, Any]] = field(default_factory=list)
    served: int = 0
    stale_answers: int = 0  # handles correctly refused as stale

    def call(self, kind: str, began: float, took: float) -> None:
        with self.lock:
            self.calls.append((began - self.started, kind, took))

    def error(self, kind: str, reason: str) -> None:
        with self.lock:
            self.errors.append({"at_s": round(time.monotonic() - self.started, 1), "call": kind,
                                "reason": reason[:500]})  # fmt: skip

    def stale_serve(self, kind: str, handles: Sequence[str]) -> None:
        with self.lock:
            self.stale.append({"at_s": round(time.monotonic() - self.started, 1), "call": kind,
                               "handles": list(handles)})  # fmt: skip


# ---------------------------------------------------------------------------- sessions


class Session(threading.Thread):
    """One client's ``excerpt mcp`` process calling plan, pack and retrieve in a loop."""

    def __init__(
        self, n: int, repo: Path, cache: Path, logs: Path, tasks: Sequence[str], budget: int,
        writer: Writer, record: Record, stop: threading.Event,
    ) -> None:  # fmt: skip
        super().__init__(name=f"soak-session-{n}", daemon=True)
        self.n = n
        self.repo, self.cache, self.logs = repo, cache, logs
        self.tasks = list(tasks)
        self.budget = budget
        self.writer, self.record, self.stop = writer, record, stop
        self.rng = random.Random(1000 + n)
        self.kill_now = threading.Event()
        self.killed = False
        self.lock = threading.Lock()
        self.busy = threading.Lock()  # held through each round of calls
        self.server: Any = None
        self.old_handles: list[str] = []

    def start_server(self) -> None:
        from excerpt_bench.perf_mcp import McpProcess

        server = McpProcess(self.repo, self.cache, self.logs / f"session-{self.n}.log")
        server.start()
        with self.lock:
            self.server = server

    def pid(self) -> int | None:
        with self.lock:
            return None if self.server is None else int(self.server.proc.pid)

    def run(self) -> None:
        try:
            self.start_server()
        except (EnvironmentFault, OSError) as exc:
            self.record.error("start", str(exc))
            return
        while not self.stop.is_set():
            with self.busy:
                self._round()
            time.sleep(0)  # let a waiting comparison take the server between rounds
        with self.lock:
            if self.server is not None:
                self.server.close()

    def _round(self) -> None:
        if self.kill_now.is_set():
            self.kill_mid_call()
            return
        task = self.rng.choice(self.tasks)
        self._call("context_plan", {"task": task, "budget": self.budget, "format": "json"})
        items = self._pack(task)
        handles = [str(i["handle"]) for i in items if i.get("handle")]
        picked = self.rng.sample(handles, min(RETRIEVE_PER_PACK, len(handles)))
        if self.old_handles:  # a handle from an earlier pack: its file may have changed
            picked.append(self.rng.choice(self.old_handles))
        if picked:
            self._retrieve(picked)
        self.old_handles = (self.old_handles + handles)[-50:]

    def _call(
        self, name: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, float, float]:
        began = time.monotonic()
        try:
            message = self.server.call("tools/call", {"name": name, "arguments": arguments})
        except EnvironmentFault as exc:
            self.record.error(name, str(exc))
            if not self.stop.is_set():
                self._restart()
            return None, began, time.monotonic()
        ended = time.monotonic()
        self.record.call(name, began, ended - began)
        result = message.get("result")
        if "error" in message or not isinstance(result, dict) or result.get("isError"):
            self.record.error(name, json.dumps(message.get("error") or result)[:500])
            return None, began, ended
        return result, began, ended

    def _pack(self, task: str) -> list[dict[str, Any]]:
        result, began, ended = self._call(
            "context_pack", {"task": task, "budget": self.budget, "format": "json"}
        )
        if result is None:
            return []
        try:
            doc = json.loads(result["content"][0]["text"])
        except (KeyError, IndexError, TypeError, ValueError):
            self.record.error("context_pack", "the answer is not a JSON pack")
            return []
        items = [i for i in doc.get("items", []) if isinstance(i, dict)]
        bad = stale_items(items, self.writer, began, ended)
        with self.record.lock:
            self.record.served += len(items)
        if bad:
            self.record.stale_serve("context_pack", bad)
        return items

    def _retrieve(self, handles: list[str]) -> None:
        result, began, ended = self._call("context_retrieve", {"handles": handles})
        if result is None:
            return
        text = "\n".join(
            str(c.get("text", "")) for c in result.get("content", []) if isinstance(c, dict)
        )
        served, bad = stale_retrievals(text, self.writer, began, ended)
        with self.record.lock:
            self.record.served += served
            self.record.stale_answers += text.count("(stale")
        if bad:
            self.record.stale_serve("context_retrieve", bad)

    def kill_mid_call(self) -> None:
        """A pack asked for, the server killed before it answers, and started again."""
        self.kill_now.clear()
        with self.lock:
            server = self.server
        server.send_only("tools/call", {"name": "context_pack", "arguments": {
            "task": self.tasks[0], "budget": self.budget, "format": "json"}})  # fmt: skip
        time.sleep(0.05)
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait()
        server.close()
        self.killed = True
        self._restart()

    def _restart(self) -> None:
        try:
            self.start_server()
        except (EnvironmentFault, OSError) as exc:
            self.record.error("restart", str(exc))
            self.stop.wait(1.0)


class Hooks(threading.Thread):
    """Hook processes as Claude Code runs them: a task prompt's seed, then a large tool
    output's compaction, in turn."""

    def __init__(self, repo: Path, cache: Path, tasks: Sequence[str], record: Record,
                 stop: threading.Event, pause_s: float = 0.0) -> None:  # fmt: skip
        super().__init__(name="soak-hooks", daemon=True)
        self.pause_s = pause_s  # between two pairs of hooks (0: one after the other)
        from excerpt_bench.perf_hook import large_log
        from excerpt_bench.perf_mcp import HookProcesses

        self.hooks = HookProcesses(repo, cache)
        self.tasks = list(tasks)
        self.record, self.stop = record, stop
        self.log = large_log(0, HOOK_PAYLOAD_BYTES)

    def run(self) -> None:
        n = 0
        while not self.stop.wait(self.pause_s if n else 0.0):
            n += 1
            for kind in ("UserPromptSubmit", "PostToolUse"):
                began = time.monotonic()
                try:
                    if kind == "UserPromptSubmit":
                        self.hooks.prompt(f"soak-{n}", self.tasks[n % len(self.tasks)])
                    else:
                        self.hooks.tool("make test", self.log, n)
                except EnvironmentFault as exc:
                    self.record.error(f"hook {kind}", str(exc))
                    continue
                self.record.call(f"hook {kind}", began, time.monotonic() - began)


# ------------------------------------------------------------------------------ sampling


def _rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def _fds(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def _bytes_under(root: Path) -> int:
    total = 0
    for base, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(base, name)).st_size
    return total


class Sampler(threading.Thread):
    """Every few seconds: each server's memory and descriptors, the cache's bytes."""

    def __init__(self, sessions: Sequence[Session], cache: Path, started: float,
                 stop: threading.Event) -> None:  # fmt: skip
        super().__init__(name="soak-sampler", daemon=True)
        self.sessions, self.cache, self.started, self.stop = sessions, cache, started, stop
        self.samples: list[dict[str, Any]] = []

    def run(self) -> None:
        while not self.stop.wait(SAMPLE_EVERY_S):
            self.samples.append(self.sample())

    def sample(self) -> dict[str, Any]:
        rss: dict[str, float] = {}
        fds: dict[str, int] = {}
        for s in self.sessions:
            pid = s.pid()
            if pid is None:
                continue
            mb, fd = _rss_mb(pid), _fds(pid)
            if mb is not None and fd is not None:
                rss[f"server {s.n}"], fds[f"server {s.n}"] = mb, fd
        mine = _rss_mb(os.getpid())
        if mine is not None:
            rss["bench"] = mine
        store = self.cache / "compact"
        return {
            "at_s": time.monotonic() - self.started,
            "rss_mb": rss,
            "open_fds": fds,
            "cache_bytes": _bytes_under(self.cache) - _bytes_under(store),
            "compact_store_bytes": _bytes_under(store),
        }
