"""``bench perf --surface mcp``: the same packs through a real ``excerpt mcp`` process (and
the other processes ``bench perf`` starts: the whole-process ``excerpt pack``, and the
``excerpt hook`` processes of ``--surface hook`` (excerpt_bench.perf_hook) as a client runs
them; all excerpt's own on the copy, or the interpreter's start as their floor).

The server is started as a client starts it (``python -m excerpt mcp --tools core --repo
COPY`` over stdin/stdout, the cache in ``EXCERPT_CACHE_DIR``), initialized over JSON-RPC, and
each ``context_pack`` is timed from the request line written to its answer read: warm (after
a first pack and the watcher's start), after a one-file edit, and after a switch of many
files at once (as a branch checkout rewrites them). The keys are the CLI surface's.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from excerpt.errors import EnvironmentFault

__all__ = [
    "HookProcesses",
    "McpProcess",
    "Outcome",
    "cli_pack_s",
    "hook_command",
    "mcp_figures",
    "timed_process",
]

_ANSWER_S = 600.0  # a pack over a cold index of a large tree, at most
_WAIT_S = 3600.0  # a hook's background index of the largest tree, at most
_WATCH_S = 0.05
_MARKER = "background-index.pid"  # where excerpt.hooks.processes keeps the index's pid
_SEEDED = "excerpt prepared this"  # the head of every seed (excerpt.hooks.seed)

Outcome = Literal["seed", "note", "nothing"]
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


def timed_process(
    argv: Sequence[str], stdin: bytes, env: dict[str, str], cwd: Path | None = None
) -> tuple[float, bytes]:
    """Seconds of one process from spawn to exit, fed ``stdin``, and what it wrote on stdout.

    Raises:
        EnvironmentFault: the process failed or ran over ten minutes.
    """
    started = time.perf_counter()
    try:
        done = subprocess.run(
            list(argv), input=stdin, capture_output=True, env=env, cwd=cwd, timeout=_ANSWER_S,
            check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise EnvironmentFault(f"{argv[0]} ran over {_ANSWER_S:.0f} s") from None
    took = time.perf_counter() - started
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        raise EnvironmentFault(f"{' '.join(argv[:3])} exited {done.returncode}: {tail}")
    return took, done.stdout


def hook_command() -> list[str]:
    """What ``excerpt setup`` installs: the script beside this interpreter, else ``-m``."""
    script = Path(sys.executable).parent / "excerpt"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "excerpt"]


class HookProcesses:
    """Hook processes on one copy, with one cache root."""

    def __init__(self, repo: Path, cache: Path) -> None:
        self.repo = repo
        self.cache = cache
        self.env = {**os.environ, "EXCERPT_CACHE_DIR": str(cache)}

    def run(
        self, event: str, payload: dict[str, Any], *options: str
    ) -> tuple[float, dict[str, Any]]:
        """One hook process: seconds from spawn to exit, and its ``hookSpecificOutput``."""
        argv = [*hook_command(), "hook", event, "--client", "claude", "--repo", str(self.repo)]
        argv += options
        data = json.dumps(payload).encode("utf-8")
        took, out = timed_process(argv, data, self.env, cwd=self.repo)
        try:
            answer = json.loads(out) if out.strip() else {}
        except json.JSONDecodeError:
            raise EnvironmentFault(f"excerpt hook {event} wrote no JSON: {out[:200]!r}") from None
        return took, answer.get("hookSpecificOutput", {}) if isinstance(answer, dict) else {}

    def prompt(self, session: str, text: str, *options: str) -> tuple[float, Outcome, str]:
        """UserPromptSubmit: seconds, a seed, a note or nothing, and the text added."""
        payload = {
            "session_id": session, "transcript_path": str(self.cache / f"{session}.jsonl"),
            "cwd": str(self.repo), "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit", "prompt": text,
        }  # fmt: skip
        took, answer = self.run("UserPromptSubmit", payload, *options)
        context = str(answer.get("additionalContext", ""))
        outcome: Outcome = (
            "nothing" if not context else "seed" if context.startswith(_SEEDED) else "note"
        )
        return took, outcome, context

    def tool(self, command: str, stdout: str, n: int) -> tuple[float, dict[str, Any]]:
        """PostToolUse of a Bash call, the result shaped as Claude Code reports it."""
        payload = {
            "session_id": f"tool-{n}", "transcript_path": str(self.cache / "tool.jsonl"),
            "cwd": str(self.repo), "permission_mode": "default",
            "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": command, "description": "run it"},
            "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False,
                              "isImage": False, "noOutputExpected": False},
            "tool_use_id": f"toolu_{n:024d}",
        }  # fmt: skip
        return self.run("PostToolUse", payload)

    def background_running(self) -> bool:
        """Whether the index a hook started in the background (its pid kept in the repository's
        cache) is still running."""
        for marker in (self.cache / "repos").glob(f"*/{_MARKER}"):
            try:
                pid = int(marker.read_text(encoding="utf-8"))
                if pid > 0:  # never 0: that would ask about this process group
                    os.kill(pid, 0)
                return pid > 0
            except (OSError, ValueError) as exc:  # gone, or no pid yet
                return isinstance(exc, PermissionError)
        return False

    def wait_background(self) -> None:
        """Until the background index (if any) has ended."""
        deadline = time.monotonic() + _WAIT_S
        while self.background_running():
            if time.monotonic() > deadline:
                raise EnvironmentFault(f"the hook's background index ran over {_WAIT_S} s")
            time.sleep(_WATCH_S)


class McpProcess:
    """An ``excerpt mcp`` process over stdin/stdout, as a client runs it."""

    def __init__(self, repo: Path, cache: Path, log: Path | None = None) -> None:
        env = {**os.environ, "EXCERPT_CACHE_DIR": str(cache)}
        err = subprocess.DEVNULL if log is None else log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "excerpt", "mcp", "--tools", "core", "--repo", str(repo)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env,
        )  # fmt: skip
        if log is not None:
            err.close()  # type: ignore[union-attr]  # the child holds its own copy
        self._next = 0
        self._lines: queue.Queue[bytes] = queue.Queue()  # stdout, a line at a time; b"" at exit
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC answer to one request, whatever it says (a result or an error).

        Raises:
            EnvironmentFault: the process exited or did not answer in time.
        """
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
                return dict(message)
        raise EnvironmentFault(f"excerpt mcp did not answer {method} in {_ANSWER_S:.0f} s")

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = self.call(method, params)
        if "error" in message or message.get("result", {}).get("isError"):
            raise EnvironmentFault(f"excerpt mcp refused {method}: {message}")
        return dict(message["result"])

    def send_only(self, method: str, params: dict[str, Any]) -> None:
        """A request written without waiting for its answer (one a kill will interrupt)."""
        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})

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


@contextlib.contextmanager
def running_server(repo: Path, cache: Path) -> Iterator[None]:
    """An ``excerpt mcp`` process on ``repo``, initialized, for the block (a client's
    session: its hooks then ask it for their seeds over its socket).

    Raises:
        EnvironmentFault: the server failed to start.
    """
    server = McpProcess(repo, cache)
    try:
        server.start()
        yield
    finally:
        server.close()


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
    server = McpProcess(repo, cache)
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
