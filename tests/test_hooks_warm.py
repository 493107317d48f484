"""Seeds from a running ``excerpt mcp``: the server answers the hooks of its repository on a
socket of the user's own, from its warm index; the same seed a hook builds itself, and a
hook that finds no server (or a stale socket) builds it itself."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from excerpt.hooks.seed import SeedAsk, build_seed
from excerpt.hooks.warm import request_seed, socket_path
from hook_runs import FILES, TASK, context_of, hook, prompt

ASK = SeedAsk()


@pytest.fixture
def shop(make_repo: Callable[..., Path], cache_dir: Path) -> Path:
    repo = make_repo(FILES)
    subprocess.run([sys.executable, "-m", "excerpt", "index", "--repo", str(repo)], check=True,
                   capture_output=True)  # fmt: skip
    return repo.resolve()


def _server(repo: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "excerpt", "mcp", "--repo", str(repo)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def _listening(path: Path, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
                return True
            except OSError:
                time.sleep(0.1)
    return False


@pytest.fixture
def server(shop: Path) -> Iterator[subprocess.Popen[bytes]]:
    proc = _server(shop)
    path = socket_path(shop)
    assert path is not None and _listening(path), "the server never took its socket"
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()  # the client goes: the server ends and removes its socket
    proc.wait(timeout=60)


def test_a_running_server_answers_the_seed_a_hook_would_build(
    shop: Path, server: subprocess.Popen[bytes]
) -> None:
    warm = request_seed(shop, TASK, ASK, timeout=30)
    assert warm is not None and "from the running server" in warm.why
    here = build_seed(shop, TASK)
    assert (warm.text, warm.handles, warm.tokens) == (here.text, here.handles, here.tokens)
    # and the hook process takes it from there: the same seed
    text = context_of(hook("UserPromptSubmit", prompt(shop, TASK, "w1")), "UserPromptSubmit")
    assert "def retry_delivery" in text and warm.text in text


def test_the_socket_is_the_users_own_and_goes_with_its_server(
    shop: Path, server: subprocess.Popen[bytes]
) -> None:
    path = socket_path(shop)
    assert path is not None
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    second = _server(shop)  # a second session's server leaves the socket to the first
    try:
        time.sleep(3)
        assert second.poll() is None and _listening(path)
    finally:
        assert second.stdin is not None
        second.stdin.close()
        second.wait(timeout=60)
    assert _listening(path, 1.0)  # still the first one's
    assert server.stdin is not None
    server.stdin.close()
    server.wait(timeout=60)
    assert not path.exists()


def test_a_stale_socket_is_passed_over_by_the_hook_and_taken_by_the_next_server(
    shop: Path,
) -> None:
    path = socket_path(shop)
    assert path is not None
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # a socket file nobody listens on: a server killed with SIGKILL leaves one
    assert request_seed(shop, TASK, ASK, timeout=5) is None
    text = context_of(hook("UserPromptSubmit", prompt(shop, TASK, "w2")), "UserPromptSubmit")
    assert "def retry_delivery" in text  # built by the hook itself
    proc = _server(shop)
    try:
        assert _listening(path)
        assert request_seed(shop, TASK, ASK, timeout=30) is not None
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)


@pytest.mark.parametrize("raw", [b"", b"not json\n", b'{"prompt": 1}\n', b"\xff" * 5000],
                         ids=["empty", "not-json", "bad-fields", "binary"])  # fmt: skip
def test_a_bad_request_on_the_socket_gets_an_error_and_the_server_goes_on(
    shop: Path, server: subprocess.Popen[bytes], raw: bytes
) -> None:
    path = socket_path(shop)
    assert path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(str(path))
        conn.sendall(raw)
        conn.shutdown(socket.SHUT_WR)
        answer = conn.recv(1 << 16)
    assert "error" in json.loads(answer)
    assert request_seed(shop, TASK, ASK, timeout=30) is not None


def test_a_cache_too_deep_for_a_socket_path_puts_it_in_the_users_own_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(deep))
    path = socket_path(tmp_path)
    assert path is not None and len(os.fsencode(path)) <= 100
    assert path.parent == Path(f"/tmp/excerpt-{os.getuid()}")
    assert stat.S_IMODE(os.lstat(path.parent).st_mode) == 0o700
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "c"))
    assert socket_path(tmp_path) != path  # another cache, another server
