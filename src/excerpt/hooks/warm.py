"""Seeds from a running ``excerpt mcp``: its index is warm (kept current by its watcher, its
file table in memory), so a seed it builds skips the refresh and the table load a new hook
process pays for (on large trees, most of the time).

The server listens on a Unix socket of the user's own (``<cache>/sock/<key>``, in a
directory only the user can enter), one per repository: the first server of a repository
takes it, later ones leave it. A hook connects, sends one JSON line (the prompt, the held
handles, the limits) and reads one JSON line back: the seed, or an error. Anything that goes
wrong (no server, a stale socket, a slow answer) and the hook builds the seed itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from excerpt.core.settings import cache_root
from excerpt.hooks.seed import Seed, SeedAsk, build_seed
from excerpt.index.build import IndexReport

__all__ = ["MAX_REQUEST", "answer_seed_request", "request_seed", "socket_path", "take_socket"]

MAX_REQUEST = 4 * 1024 * 1024  # bytes of one request line (a prompt is cut at 200,000 chars)
_CONNECT_S = 0.2
_UNIX_PATH_MAX = 100  # sun_path holds 104 to 108 bytes, by system


def socket_path(root: Path) -> Path | None:
    """Where the server of ``root`` (with this cache) listens: under the cache, or, when that
    path is too long for a socket, in the user's own directory of the system's temporary one
    (``/tmp/excerpt-<uid>``, as tmux does); None when neither can be used."""
    base = cache_root()
    key = hashlib.sha256(os.fsencode(root) + b"\0" + os.fsencode(base)).hexdigest()[:24]
    path = base / "sock" / key
    if len(os.fsencode(path)) <= _UNIX_PATH_MAX:
        return path
    private = _private_tmp()
    return None if private is None else private / key


def _private_tmp() -> Path | None:
    """``/tmp/excerpt-<uid>``, made 0700 if missing; None unless it is a real directory of
    this user's that no one else can enter."""
    folder = Path("/tmp") / f"excerpt-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


def request_seed(root: Path, prompt: str, ask: SeedAsk, *, timeout: float) -> Seed | None:
    """The seed built by the running server of ``root``, or None (no server, no answer in
    ``timeout`` seconds, an error)."""
    path = socket_path(root)
    if path is None or timeout <= 0 or not path.exists():
        return None
    request = {"prompt": prompt, **ask.to_dict()}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(min(_CONNECT_S, timeout))
            sock.connect(str(path))
            sock.settimeout(timeout)
            sock.sendall(json.dumps(request).encode("utf-8") + b"\n")
            sock.shutdown(socket.SHUT_WR)
            answer = _read_line(sock)
    except OSError:
        return None
    try:
        doc = json.loads(answer)
        return Seed(
            text=str(doc["text"]), shape=doc["shape"], handles=tuple(doc["handles"]),
            tokens=int(doc["tokens"]), confidence=float(doc["confidence"]),
            why=str(doc["why"]) + " (from the running server)",
        )  # fmt: skip
    except (ValueError, KeyError, TypeError):
        return None


def _read_line(sock: socket.socket) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            break
    return b"".join(chunks)


def answer_seed_request(
    raw: bytes, root: Path, report: Callable[[], IndexReport], cache_dir: Path | None
) -> bytes:
    """The server's answer to one request line: the seed as JSON, or ``{"error": …}``.
    ``report`` gives the index brought up to date (the server's watcher decides whether
    that takes a refresh)."""
    try:
        doc: Any = json.loads(raw)
        ask = SeedAsk.from_dict(doc)
        seed = build_seed(root, str(doc["prompt"]), **ask.to_kwargs(), cache_dir=cache_dir,
                          index=report())  # fmt: skip
        out: dict[str, Any] = {
            "text": seed.text, "shape": seed.shape, "handles": list(seed.handles),
            "tokens": seed.tokens, "confidence": seed.confidence, "why": seed.why,
        }  # fmt: skip
    except Exception as exc:  # noqa: BLE001 (one request's failure is its answer, not the server's)
        out = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    return json.dumps(out).encode("utf-8") + b"\n"


def take_socket(root: Path) -> socket.socket | None:
    """A listening socket for ``root``'s seeds, when no live server has one (a stale file
    left by a server that died is replaced); None when another server listens or the
    cache cannot hold one."""
    path = socket_path(root)
    if path is None:
        return None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)  # only this user may connect
    except OSError:
        return None
    if path.exists():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(_CONNECT_S)
            try:
                probe.connect(str(path))
                return None  # a live server of this repository has it
            except OSError:
                pass
        with contextlib.suppress(OSError):
            path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(path))
        listener.listen(16)
    except OSError:
        listener.close()
        return None
    return listener
