"""Whether anything changed under a tree since a refresh, from file-system notifications.

A long-lived server (``excerpt mcp``) refreshes its index before every pack; with a watcher it
skips the refresh when no change was noticed since the last one began, reads only the files
named when those were written in place (``excerpt.index.build.refresh_paths``, which refuses
any other kind of change), and otherwise runs the ordinary stat refresh (which finds every
change, whichever paths were named). ``watchfiles``
(Rust ``notify`` underneath: inotify, FSEvents, ReadDirectoryChangesW) delivers the events on
its own thread; nothing here writes anywhere.

Why a quiet watcher can be trusted:

- Only changes are watched (creation, deletion, moves, writes, attributes), never reads, so a
  burst that overflows the kernel's queue delivers its first events before any are dropped:
  the tree is marked changed and the next pack refreshes from the disk.
- A pack waits for two of the watcher's polls (20 ms each, at most) that began after it
  was asked for, so an edit that finished before the call is seen by it.
- The paths named since a mark are those of every batch after it; past ``_LOG_PATHS`` paths
  the oldest batches are forgotten, and a mark before them gets no names (the tree is walked).
- A refresh is trusted only if it began after the watcher was watching, and the watcher goes
  off for good (every pack refreshes, ``state`` says why) when it fails, stops or loses its
  root (a deleted or replaced directory is no longer watched).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

__all__ = ["TreeWatcher", "identity"]

_POLL_MS = 20  # the longest a quiet watcher goes without a poll
_WAIT_S = 1.0  # a pack waits this long at most for the watcher's polls, then refreshes
_LOG_PATHS = 4096  # the changed paths remembered; older batches are forgotten past this


class TreeWatcher:
    """Notices changes under ``paths`` (a tree and, when it lies outside, its git directory)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self._paths = tuple(paths)
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._polls = 0
        self._changes = 0  # batches of events seen
        # the paths of the latest batches, by batch number; those up to ``_forgotten`` are not
        self._log: list[tuple[int, frozenset[str]]] = []
        self._logged = 0
        self._forgotten = 0
        self._state = "starting"
        self._thread: threading.Thread | None = None
        self._root_id = identity(self._paths[0]) if self._paths else None

    @property
    def state(self) -> str:
        """``starting``, ``watching``, or ``off: <why>``."""
        with self._cond:
            return self._state

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="excerpt-watch", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * _POLL_MS / 1000 + 1)

    def begin_refresh(self) -> int | None:
        """Called as a refresh begins: a mark for ``unchanged_since``, or None when the
        watcher is not watching (that refresh cannot be trusted to stay current). A watcher
        still starting is waited for a moment, so the first refresh is trusted too."""
        with self._cond:
            self._cond.wait_for(lambda: self._state != "starting", timeout=_WAIT_S)
            return self._changes if self._state == "watching" else None

    def unchanged_since(self, mark: int | None) -> bool:
        """Whether nothing changed since the refresh that got ``mark`` began, once every
        event from before this call has been delivered; False whenever it cannot say."""
        if mark is None:
            return False
        with self._cond:
            if self._changes != mark or self._state != "watching":
                return False  # a change already seen: no need to wait for more
            wanted = self._polls + 2  # a whole poll that began after this call
            settled = self._cond.wait_for(
                lambda: self._polls >= wanted or self._state != "watching", timeout=_WAIT_S
            )
            return settled and self._state == "watching" and self._changes == mark

    def changes_since(self, mark: int | None) -> tuple[int, frozenset[str]] | None:
        """Every path changed since the refresh that got ``mark`` began, once every event
        from before this call has been delivered, and the mark of this moment (for the
        refresh of those paths); None whenever it cannot say (not watching, or the paths of
        that time forgotten)."""
        if mark is None:
            return None
        with self._cond:
            if self._state != "watching":
                return None
            wanted = self._polls + 2  # a whole poll that began after this call
            settled = self._cond.wait_for(
                lambda: self._polls >= wanted or self._state != "watching", timeout=_WAIT_S
            )
            if not settled or self._state != "watching" or mark < self._forgotten:
                return None
            paths = frozenset().union(*(batch for n, batch in self._log if n > mark))
            return self._changes, paths

    def _remember(self, paths: frozenset[str]) -> None:
        """Log the batch just counted (under the lock)."""
        self._log.append((self._changes, paths))
        self._logged += len(paths)
        while self._logged > _LOG_PATHS and self._log:
            n, batch = self._log.pop(0)
            self._logged -= len(batch)
            self._forgotten = n

    def _run(self) -> None:
        try:
            import watchfiles
        except ImportError:
            self._off("watchfiles is not installed")
            return
        roots = {str(p) for p in self._paths}
        try:
            for changes in watchfiles.watch(
                *self._paths,
                watch_filter=None,  # what matters is the index's to decide, on refresh
                debounce=10,
                step=5,
                rust_timeout=_POLL_MS,
                yield_on_timeout=True,
                stop_event=self._stop,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                if changes and (
                    any(path in roots for _, path in changes)
                    or identity(self._paths[0]) != self._root_id
                ):  # a watched directory itself removed, moved or replaced
                    self._off("the watched directory was removed or replaced")
                    return
                with self._cond:
                    if changes:
                        self._changes += 1
                        self._remember(frozenset(path for _, path in changes))
                    self._polls += 1
                    if self._state == "starting":
                        self._state = "watching"
                    self._cond.notify_all()
        except Exception as exc:  # noqa: BLE001 - the watcher's own failure: fall back, say why
            self._off(f"{type(exc).__name__}: {exc}".strip().rstrip(":"))
            return
        self._off("stopped")

    def _off(self, why: str) -> None:
        with self._cond:
            self._state = f"off: {why}"
            self._cond.notify_all()


def identity(path: Path) -> tuple[int, int] | None:
    """Which file or directory ``path`` is (device and inode), or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
