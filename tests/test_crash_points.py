"""A crash at each labelled crash point (``EXCERPT_TEST_CRASH_AT``) leaves the old state or
the new one, never a mix; the next run completes and gives what a run without the crash
gives. The labels are every one the code places (``excerpt.core.durable.LABELS``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cache_contents import stored_index
from conftest import git, git_commit_all, write_tree
from excerpt.core.durable import ENV, LABELS, WRITE_POINTS

pytestmark = pytest.mark.timeout(120)

FILES = {
    "billing/refund.py": "def refund(order):\n    return order.total\n",
    "tests/test_refund.py": "def test_refund():\n    pass\n",
}
TASK = "refund returns the wrong total"


def _env(cache: Path, crash: str | None = None) -> dict[str, str]:
    """This environment with the cache given, crashing at ``crash`` (else nowhere)."""
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env["EXCERPT_CACHE_DIR"] = str(cache)
    if crash is not None:
        env[ENV] = crash
    return env


def _excerpt(*argv: str, cache: Path, crash: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "excerpt", *argv],
        env=_env(cache, crash), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def _output_case(tmp_path: Path, label: str) -> None:
    """``pack -o FILE`` over an earlier pack: FILE is the old pack or the new one, whole."""
    root = write_tree(tmp_path / "repo", FILES)
    cache = tmp_path / "cache"
    out = tmp_path / "out" / "pack.md"
    out.parent.mkdir()
    out.write_text("an earlier pack\n", encoding="utf-8")
    argv = ("pack", TASK, "--repo", str(root), "-o", str(out))
    crashed = _excerpt(*argv, cache=cache, crash=label)
    assert crashed.returncode == 137, crashed.stderr
    left = out.read_text(encoding="utf-8")
    again = _excerpt(*argv, cache=cache)
    assert again.returncode == 0, again.stderr
    new = out.read_text(encoding="utf-8")
    assert "billing/refund.py" in new
    assert left in ("an earlier pack\n", new)


def _salt_case(tmp_path: Path, label: str) -> None:
    """The gate's fingerprint salt, made on first use: a crash leaves none or all of it, and
    the next gate run has fingerprints."""
    root = write_tree(tmp_path / "repo", FILES)
    git_commit_all(root)
    write_tree(
        root, {"billing/keys.py": 'TOKEN = "ghp_' + "Q7zX9mK2pL4vN8rT1wY6bC3dF5gH0jS2aE4u" + '"\n'}
    )
    git(root, "add", "billing/keys.py")
    cache = tmp_path / "cache"
    crashed = _excerpt("gate", "--staged", "--json", "--repo", str(root), cache=cache, crash=label)
    assert crashed.returncode == 137, crashed.stderr
    salt = cache / "gate-salt"
    assert not salt.exists() or len(salt.read_bytes()) == 32
    again = _excerpt("gate", "--staged", "--json", "--repo", str(root), cache=cache)
    assert again.returncode == 1, again.stderr  # FAIL: the staged token
    assert '"fingerprint": "' in again.stdout and '"fingerprint": ""' not in again.stdout
    assert len(salt.read_bytes()) == 32


def _index_case(tmp_path: Path, label: str) -> None:
    """A cold index cut off after a committed batch, before the graph, or before the run is
    marked clean: the next run completes, and its index equals one built without a crash."""
    files = {f"pkg/m{i:04d}.py": f"import pkg.m{(i + 1) % 600:04d}\n\ndef f{i}():\n    return {i}\n"
             for i in range(600)}  # fmt: skip
    root = write_tree(tmp_path / "repo", files)
    cache = tmp_path / "cache"
    crashed = _excerpt("index", "--repo", str(root), cache=cache, crash=label)
    assert crashed.returncode == 137, crashed.stderr
    again = _excerpt("index", "--repo", str(root), "--json", cache=cache)
    assert again.returncode == 0, again.stderr
    fresh = _excerpt("index", "--repo", str(root), cache=tmp_path / "fresh")
    assert fresh.returncode == 0, fresh.stderr
    assert stored_index(root, cache) == stored_index(root, tmp_path / "fresh")


def _compact_case(tmp_path: Path, label: str) -> None:
    """An original cut off before or after its rename into the store: no id was handed out,
    and the next ``compact`` of the same payload gives an id that expands to it byte for
    byte (a temporary file left behind is never an original)."""
    payload = json.dumps(
        [{"id": i, "status": "ok", "latency_ms": 12 + i % 7} for i in range(400)]
    ).encode()
    cache = tmp_path / "cache"
    argv = ("compact", "--kind", "json", "--json")
    crashed = _excerpt_input(*argv, cache=cache, data=payload, crash=label)
    assert crashed.returncode == 137 and crashed.stdout == b""
    again = _excerpt_input(*argv, cache=cache, data=payload)
    assert again.returncode == 0, again.stderr
    ident = json.loads(again.stdout)["id"]
    expanded = _excerpt_input("expand", ident, cache=cache, data=b"")
    assert expanded.returncode == 0 and expanded.stdout == payload


def _excerpt_input(
    *argv: str, cache: Path, data: bytes, crash: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "excerpt", *argv],
        env=_env(cache, crash), input=data, capture_output=True, timeout=60, check=False,
    )  # fmt: skip


CASES = {
    "output": _output_case,
    "salt": _salt_case,
    "index": _index_case,
    "compact": _compact_case,
}


@pytest.mark.reliability("B7.50", cases=1)
@pytest.mark.parametrize("label", LABELS)
def test_a_crash_at_each_labelled_point_leaves_old_or_new_state_and_the_next_run_completes(
    tmp_path: Path, label: str
) -> None:
    CASES[label.split(".", 1)[0]](tmp_path, label)


def test_every_crash_point_in_the_code_is_a_listed_label() -> None:
    """A label placed in the code (by ``crash_point`` or passed by an atomic replacement)
    but missing from ``LABELS`` would never be crashed at."""
    import re

    src = Path(__file__).resolve().parents[1] / "src/excerpt"
    placed = {
        m.group(1)
        for path in src.rglob("*.py")
        for m in re.finditer(r'crash_point\("([^"]+)"\)', path.read_text(encoding="utf-8"))
    }
    placed |= {label for labels in WRITE_POINTS.values() for label in labels if label}
    assert placed == set(LABELS)


@pytest.mark.reliability("B7.53", cases=20)
def test_a_compact_killed_once_it_has_given_its_id_leaves_the_original_to_expand(
    tmp_path: Path,
) -> None:
    # the id is handed out only once the original is durable: a process killed the moment
    # its answer is read (20 payloads, each killed as it prints) loses nothing
    cache = tmp_path / "cache"
    env = _env(cache)
    for n in range(20):
        payload = json.dumps(
            [{"id": i, "n": n, "status": "ok" if i % 9 else "error"} for i in range(300 + n)]
        ).encode()
        proc = subprocess.Popen(
            [sys.executable, "-m", "excerpt", "compact", "--kind", "json", "--json"],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(payload)
        proc.stdin.close()
        first = proc.stdout.readline()  # the answer starts: the id is out
        proc.kill()
        proc.wait(timeout=30)
        answer = first + proc.stdout.read()  # (written in one piece before the kill)
        proc.stdout.close()
        ident = json.loads(answer)["id"]
        expanded = _excerpt_input("expand", ident, cache=cache, data=b"")
        assert expanded.returncode == 0 and expanded.stdout == payload, n
