"""The server's seed socket: hooks of the same repository ask the running server for their
seed (``excerpt.hooks.warm``), which builds it on its warm index — no refresh when its
watcher saw no change, its file table already in memory.

One listening thread, one short-lived thread per request; a request is one JSON line read
up to ``MAX_REQUEST`` bytes, its answer one JSON line. The socket is taken only when no live
server of the repository holds it, and removed when this server stops.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from pathlib import Path

from excerpt.hooks.warm import MAX_REQUEST, answer_seed_request, socket_path, take_socket
from excerpt.mcp.session import ServedRepo

__all__ = ["SeedService"]

log = logging.getLogger("excerpt.mcp")
_REQUEST_S = 30.0  # a client that sends nothing for this long is dropped


class SeedService:
    """Answers seed requests for ``served``'s repository while the server runs."""

    def __init__(self, served: ServedRepo) -> None:
        self.served = served
        self._listener: socket.socket | None = None
        self._path: Path | None = None
        self._inode: int | None = None

    def start(self) -> bool:
        """Take the repository's socket and serve it; False when another server has it."""
        try:
            root = self.served.repo
        except Exception:  # noqa: BLE001 (a repository that cannot be served has no seeds)
            return False
        listener = take_socket(root)
        if listener is None:
            return False
        self._listener, self._path = listener, socket_path(root)
        with contextlib.suppress(OSError):
            self._inode = os.stat(str(self._path)).st_ino
        threading.Thread(target=self._accept, args=(root,), name="excerpt seeds",
                         daemon=True).start()  # fmt: skip
        return True

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is None:
            return
        listener.close()
        path = self._path
        with contextlib.suppress(OSError):  # only our own socket file, never a successor's
            if path is not None and os.stat(str(path)).st_ino == self._inode:
                path.unlink()

    def _accept(self, root: Path) -> None:
        while self._listener is not None:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed by stop()
            threading.Thread(target=self._answer, args=(conn, root), daemon=True).start()

    def _answer(self, conn: socket.socket, root: Path) -> None:
        with conn:
            try:
                conn.settimeout(_REQUEST_S)
                raw = _request(conn)
                if raw is None:
                    return
                served = self.served
                answer = answer_seed_request(
                    raw, root, lambda: served.index_report(root), served.cache_dir
                )
                conn.sendall(answer)
            except OSError as exc:
                log.debug("a seed request was dropped: %s", exc)


def _request(conn: socket.socket) -> bytes | None:
    """One request line, or None when it is over ``MAX_REQUEST`` bytes or never ends."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REQUEST:
            return None
    return b"".join(chunks)
