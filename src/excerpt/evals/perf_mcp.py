"""``bench perf --surface mcp``: the same packs through a real ``excerpt mcp`` process (and
the whole-process ``excerpt pack`` figure: both are excerpt's own processes on the copy).

The server is started as a client starts it (``python -m excerpt mcp --tools core --repo
COPY`` over stdin/stdout, the cache in ``EXCERPT_CACHE_DIR``), initialized over JSON-RPC, and
each ``context_pack`` is timed from the request line written to its answer read: warm (after
a first pack and the watcher's start), after a one-file edit, and after a switch of many
files at once (as a branch checkout rewrites them). The keys are the CLI surface's.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from excerpt.errors import EnvironmentFault

__all__ = ["cli_pack_s", "mcp_figures"]

_ANSWER_S = 600.0  # a pack over a cold index of a large tree, at most
_SETTLE_S = 0.5  # after the first pack: the watcher is watching before warm packs are timed


def cli_pack_s(repo: Path, cache: Path, task: str, budget: int) -> float:
    """Seconds of one ``excerpt pack`` process, start to exit, as a shell runs it (the index
    in ``cache``, the output thrown away).

    Raises:
        EnvironmentFault: the process failed.
    """
    env = {**os.environ, "EXCERPT_CACHE_DIR": str(cache)}
    argv = [sys.executable, "-m", "excerpt", "pack", "--repo", str(repo)]
    started = time.perf_counter()
    done = subprocess.run(
        [*argv, "--budget", str(budget), "-"], input=task.encode("utf-8"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, timeout=600, check=False,
    )  # fmt: skip
    took = time.perf_counter() - started
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        raise EnvironmentFault(f"excerpt pack exited {done.returncode}: {tail}")
    return took


class _Server:
    def __init__(self, repo: Path, cache: Path) -> None:
        env = {**os.environ, "EXCERPT_CACHE_DIR": str(cache)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "excerpt", "mcp", "--tools", "core", "--repo", str(repo)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        self._next = 0
        self._lines: queue.Queue[bytes] = queue.Queue()  # stdout, a line at a time; b"" at exit
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.monotonic() + _ANSWER_S
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if not line:
                raise EnvironmentFault(f"excerpt mcp exited before answering {method}")
            message = json.loads(line)
            if message.get("id") == ident:
                if "error" in message or message.get("result", {}).get("isError"):
                    raise EnvironmentFault(f"excerpt mcp refused {method}: {message}")
                return dict(message["result"])
        raise EnvironmentFault(f"excerpt mcp did not answer {method} in {_ANSWER_S:.0f} s")

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def start(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "excerpt-bench-perf", "version": "0"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def pack(self, task: str, budget: int) -> float:
        started = time.perf_counter()
        self.request(
            "tools/call", {"name": "context_pack", "arguments": {"task": task, "budget": budget}}
        )
        return time.perf_counter() - started

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=30)  # it ends at the exited server's end of output
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def mcp_figures(
    repo: Path,
    cache: Path,
    tasks: Sequence[str],
    budget: int,
    edit: Callable[[int, int], None],
    percentiles: Callable[[Sequence[float]], dict[str, float]],
    switch_files: int = 50,
) -> dict[str, Any]:
    """Warm, after-edit and after-switch pack times of one ``excerpt mcp`` process on
    ``repo`` (its index in ``cache``); ``edit(n, k)`` rewrites ``k`` files for round ``n``.

    Raises:
        EnvironmentFault: the server failed to start or to answer.
    """
    server = _Server(repo, cache)
    try:
        server.start()
        server.pack(tasks[0], budget)
        time.sleep(_SETTLE_S)
        server.pack(tasks[0], budget)  # the refresh begun before the watcher was watching
        warm = [server.pack(task, budget) for task in tasks]
        edited: list[float] = []
        for n, task in enumerate(tasks):
            edit(1000 + n, 1)
            edited.append(server.pack(task, budget))
        switched: list[float] = []
        for n, task in enumerate(tasks[:3]):
            edit(2000 + n, switch_files)
            switched.append(server.pack(task, budget))
    finally:
        server.close()
    return {
        "pack_ms": percentiles(warm),
        "repack_after_edit_ms": percentiles(edited),
        "repack_after_switch_ms": percentiles(switched),
        "switch_files": switch_files,
    }
