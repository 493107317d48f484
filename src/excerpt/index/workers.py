"""Worker processes that read an index run's files, and survive one of them dying.

A worker reads chunks of paths and answers one result per path, in order, so the parent always
knows which file a worker was reading. A worker that dies (SIGKILL, the OOM killer, a parser
crashing) is replaced: the file it was reading is tried once more, alone, in a fresh worker;
if that one dies too the file is omitted as ``worker_crashed``, and the next run tries it again.
The rest of its chunk is read as if nothing had happened.

Workers are spawned, never forked: a forked worker would inherit the writer lock and database
descriptors and, orphaned by a killed parent, keep the lock held.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from excerpt.core.settings import Limits
from excerpt.discover.reader import Omission
from excerpt.index.process import process_paths
from excerpt.index.records import FileRecord

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import SpawnContext, SpawnProcess

__all__ = ["CRASHED", "WorkerPool"]

CRASHED = "worker_crashed"  # the omission reason of a file two workers died reading
_TRIES = 2
_READY = "ready"
_STOP_WAIT_S = 5.0


class _Unusable(Exception):
    """Workers cannot be started any more."""


@dataclass(frozen=True, slots=True)
class _Failure:
    """An exception raised in a worker, to be raised again in the parent (a bug, not a file
    that kills: the run fails as it would in one process)."""

    error: BaseException


def _serve(conn: Connection, root: str, limits: Limits, parent: int) -> None:
    """A worker's life: announce itself, then answer each path of each chunk it is sent."""
    _watch_parent(parent)
    with contextlib.suppress(EOFError, OSError):  # the parent stopped listening: nothing to do
        conn.send(_READY)
        while (chunk := conn.recv()) is not None:
            for path in chunk:
                try:
                    result = process_paths(root, [path], limits)[0]
                # the top level of a worker: a bug in reading one file is raised in the parent
                except Exception as exc:  # noqa: BLE001
                    _send_failure(conn, exc)
                    return
                conn.send(result)


def _send_failure(conn: Connection, exc: Exception) -> None:
    try:
        conn.send(_Failure(exc))
    except (pickle.PicklingError, TypeError, AttributeError):  # it does not pickle: its text does
        conn.send(_Failure(RuntimeError(f"{type(exc).__name__}: {exc}")))


def _watch_parent(parent: int) -> None:
    """In a worker: exit as soon as the parent is gone, so no orphan outlives a killed run.

    Also points the worker's stdout at stderr: under ``excerpt mcp`` stdout is the protocol
    stream, and nothing a worker might print may reach it.
    """
    os.dup2(2, 1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="excerpt-parent-watch").start()


@dataclass(eq=False)
class _Worker:
    process: SpawnProcess
    conn: Connection
    ready: bool = False
    pending: deque[int] = field(default_factory=deque)  # indexes sent, not yet answered


class WorkerPool:
    """Up to ``size`` worker processes reading files under ``root``."""

    def __init__(self, root: str, limits: Limits, size: int, chunk: int) -> None:
        import multiprocessing  # only when there is work for workers

        self._context: SpawnContext = multiprocessing.get_context("spawn")
        self._root = root
        self._limits = limits
        self._size = size
        self._chunk = chunk
        self._workers: list[_Worker] = []
        self._failed_starts = 0

    def start(self) -> bool:
        """Start the workers; False when the platform cannot make processes (nothing left
        running then: the caller reads the files itself)."""
        try:
            for _ in range(self._size):
                self._workers.append(self._spawn())
        except OSError:
            self.close()
            return False
        return True

    def _spawn(self) -> _Worker:
        mine, theirs = self._context.Pipe()
        process = self._context.Process(
            target=_serve,
            args=(theirs, self._root, self._limits, os.getpid()),
            daemon=True,
            name="excerpt-index-worker",
        )
        try:
            process.start()
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()  # the worker holds its end: its death is an end of file here
        return _Worker(process, mine)

    def read(self, paths: Sequence[str]) -> Iterator[FileRecord | Omission]:
        """A result for each of ``paths``, in their order. Should workers stop starting
        (a process limit reached mid-run), the rest is read here, except a file that
        already killed a worker."""
        todo: deque[list[int]] = deque(
            list(range(i, min(i + self._chunk, len(paths))))
            for i in range(0, len(paths), self._chunk)
        )
        done: dict[int, FileRecord | Omission] = {}
        tries: dict[int, int] = {}
        following = 0
        try:
            while following < len(paths):
                self._hand_out(todo, paths)
                self._collect(todo, done, tries, paths)
                while following in done:
                    yield done.pop(following)
                    following += 1
        except _Unusable:
            self.close()
            for i in range(following, len(paths)):
                if i in done:
                    yield done.pop(i)
                elif i in tries:
                    yield Omission(path=paths[i], reason=CRASHED)
                else:
                    yield from process_paths(self._root, [paths[i]], self._limits)

    def _hand_out(self, todo: deque[list[int]], paths: Sequence[str]) -> None:
        # a chunk to each idle worker only: one sent while a worker writes a large result
        # could fill both directions of its pipe and wait forever
        for worker in self._workers:
            if worker.ready and not worker.pending and todo:
                try:
                    worker.conn.send([paths[i] for i in todo[0]])
                except OSError:
                    continue  # it just died: its sentinel says so next
                worker.pending.extend(todo.popleft())

    def _collect(
        self,
        todo: deque[list[int]],
        done: dict[int, FileRecord | Omission],
        tries: dict[int, int],
        paths: Sequence[str],
    ) -> None:
        from multiprocessing.connection import wait

        if not self._workers:
            raise _Unusable
        waiting: dict[Connection | int, _Worker] = {}
        for worker in self._workers:
            waiting[worker.conn] = worker
            waiting[worker.process.sentinel] = worker
        for handle in wait(list(waiting)):
            worker = waiting[handle]  # type: ignore[index]  # a Connection or a sentinel
            if worker in self._workers and not self._receive(worker, done):
                self._replace(worker, todo, done, tries, paths)

    def _receive(self, worker: _Worker, done: dict[int, FileRecord | Omission]) -> bool:
        """Take in what ``worker`` sent; False when it is gone."""
        try:
            while worker.conn.poll():
                message = worker.conn.recv()
                if isinstance(message, _Failure):
                    raise message.error
                if message == _READY:
                    worker.ready = True
                else:
                    done[worker.pending.popleft()] = message
        except (EOFError, OSError):
            return False
        return worker.process.is_alive()

    def _replace(
        self,
        worker: _Worker,
        todo: deque[list[int]],
        done: dict[int, FileRecord | Omission],
        tries: dict[int, int],
        paths: Sequence[str],
    ) -> None:
        """A worker died: retry or omit the file it was reading, requeue the rest, and start
        another worker in its place."""
        self._workers.remove(worker)
        self._stop(worker)
        if not worker.ready:  # it died starting, before any file was sent: none is to blame
            self._failed_starts += 1
            if self._failed_starts > self._size + 2:
                raise _Unusable
        elif worker.pending:
            reading = worker.pending.popleft()
            tries[reading] = tries.get(reading, 0) + 1
            if worker.pending:
                todo.appendleft(list(worker.pending))
            if tries[reading] >= _TRIES:
                done[reading] = Omission(path=paths[reading], reason=CRASHED)
            else:
                todo.appendleft([reading])
        if todo:  # else the workers left finish what is sent
            try:
                self._workers.append(self._spawn())
            except OSError:
                raise _Unusable from None

    def _stop(self, worker: _Worker) -> None:
        worker.conn.close()
        worker.process.join(_STOP_WAIT_S)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.process.close()

    def close(self) -> None:
        """Stop every worker (asked first, then killed)."""
        for worker in self._workers:
            with contextlib.suppress(OSError):  # already gone
                worker.conn.send(None)
        for worker in self._workers:
            self._stop(worker)
        self._workers = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
