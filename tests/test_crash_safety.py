"""The cache survives SIGKILL at any moment, corruption, foreign versions and a second writer."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cache_contents import stored_index
from conftest import git_commit_all, write_tree
from excerpt.core.settings import INDEX_DB, repo_cache_dir
from excerpt.errors import CacheBusy
from excerpt.index.build import index_repository
from excerpt.index.db import writer_lock
from excerpt.index.store import IndexStore

# Modules of the cold index a kill interrupts: enough that a kill at a random moment mostly
# lands while files are parsed and written (the process starts in about a tenth of the run).
MODULES = 240


def _module(i: int) -> str:
    dep = f"from pkg.m{(i * 7) % 397} import C{(i * 7) % 397}\n" if i else ""
    body = "".join(
        f"    def method_{k}(self, user_id: int) -> int:\n        return user_id + {k}\n\n"
        for k in range(12)
    )
    return f'{dep}\n\nclass C{i}:\n    """Order service {i}."""\n\n{body}'


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big") / "repo"
    files: dict[str, str] = {"pkg/__init__.py": ""}
    files.update({f"pkg/m{i}.py": _module(i) for i in range(MODULES)})
    files.update(
        {f"tests/test_m{i}.py": f"from pkg.m{i} import C{i}\n" for i in range(0, MODULES, 10)}
    )
    write_tree(root, files)
    git_commit_all(root)
    return root


def _run_index(repo: Path, cache: Path, *, capture: bool = True) -> subprocess.Popen[bytes]:
    env = {**os.environ, "EXCERPT_CACHE_DIR": str(cache)}
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    return subprocess.Popen(
        [sys.executable, "-m", "excerpt", "index", "--repo", str(repo), "--json"],
        env=env,
        stdout=out,
        stderr=out,
        start_new_session=True,
    )


def _integrity(repo: Path, cache: Path) -> str:
    conn = sqlite3.connect(repo_cache_dir(repo.resolve(), cache) / INDEX_DB)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture(scope="module")
def clean(big_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], float]:
    cache = tmp_path_factory.mktemp("clean-cache")
    started = time.monotonic()
    proc = _run_index(big_repo, cache)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return stored_index(big_repo, cache), time.monotonic() - started


# The kills of the default run, in three parts a worker each can take (thirty in all, as the
# matrix asks); the slow run kills sixty more.
_KILL_PARTS = [pytest.param(part, 10, id=f"part{part}") for part in range(3)] + [
    pytest.param(3, 60, id="slow60", marks=pytest.mark.slow)
]


@pytest.mark.timeout(1200)
@pytest.mark.parametrize(("part", "kills"), _KILL_PARTS)
@pytest.mark.reliability("B7.49", cases=10, ids=("part0", "part1", "part2"))
@pytest.mark.reliability("B7.49", cases=60, ids=("slow60",))
def test_sigkill_during_cold_index_leaves_a_cache_the_next_run_completes(
    big_repo: Path, clean: tuple[dict[str, Any], float], tmp_path: Path, part: int, kills: int
) -> None:
    expected, duration = clean
    rng = random.Random(20261130 + 97 * part + kills)
    interrupted = trials = 0
    # Kills that land after a run finished prove nothing: keep going until enough landed
    # mid-run (bounded), so a busy or an idle machine gives the same evidence.
    while interrupted < kills and trials < 4 * kills:
        cache = tmp_path / f"cache{trials}"
        trials += 1
        proc = _run_index(big_repo, cache, capture=False)
        time.sleep(rng.uniform(0.05, duration * 0.9))
        # landed: the run had begun writing its database (a kill while Python starts proves
        # nothing about the cache)
        db = repo_cache_dir(big_repo.resolve(), cache) / INDEX_DB
        landed = proc.poll() is None and db.exists()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        interrupted += landed
        # the next run, in this process: what the killed one left is all it starts from
        report = index_repository(big_repo, cache_dir=cache)
        assert report.files_indexed == len(expected["files"])
        assert _integrity(big_repo, cache) == "ok"
        assert stored_index(big_repo, cache) == expected, f"trial {trials}"
    assert interrupted >= kills, f"only {interrupted} of {trials} kills landed during a run"


def _corrupt_truncate(db: Path, rng: random.Random) -> None:
    size = db.stat().st_size
    with db.open("r+b") as fh:
        fh.truncate(rng.randrange(1, size))


def _corrupt_flip(db: Path, rng: random.Random) -> None:
    data = bytearray(db.read_bytes())
    for _ in range(64):
        data[rng.randrange(len(data))] ^= 0xFF
    db.write_bytes(bytes(data))


def _corrupt_version(db: Path, rng: random.Random) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 999")
    conn.close()


def _corrupt_garbage(db: Path, rng: random.Random) -> None:
    db.write_bytes(rng.randbytes(8192))


def _corrupt_symlink(db: Path, rng: random.Random) -> None:
    db.unlink()
    db.symlink_to("/dev/null")


def _corrupt_foreign(db: Path, rng: random.Random) -> None:
    db.unlink()
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE files(x)")
    conn.commit()
    conn.close()


_HOT_WRITER = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("PRAGMA wal_autocheckpoint = 0")
conn.execute("DELETE FROM files WHERE rowid % 2 = ?", (int(sys.argv[2]),))
conn.commit()
os._exit(0)  # gone with its commit in the WAL only, never checkpointed
"""


def _corrupt_hot_wal(db: Path, rng: random.Random) -> None:
    """A writer commits into the WAL and dies; the WAL (and its index) is then deleted while
    hot: the database is what it was before that commit."""
    subprocess.run([sys.executable, "-c", _HOT_WRITER, str(db), str(rng.randrange(2))], check=True)
    assert Path(f"{db}-wal").stat().st_size > 0  # the commit is really only in the WAL
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


CORRUPTIONS = {
    "hot-wal-deleted": _corrupt_hot_wal,
    "truncate": _corrupt_truncate,
    "flip-bytes": _corrupt_flip,
    "unknown-version": _corrupt_version,
    "garbage": _corrupt_garbage,
    "symlink": _corrupt_symlink,
    "foreign-db": _corrupt_foreign,
}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
@pytest.mark.reliability("B7.52")
def test_a_corrupt_cache_is_detected_and_rebuilt_never_trusted(
    make_repo: Any, tmp_path: Path, kind: str, seed: int
) -> None:
    repo = make_repo(
        {f"src/mod{i}.py": f"import os\n\ndef f{i}():\n    return {i}\n" for i in range(30)}
    )
    cache = tmp_path / "cache"
    index_repository(repo, cache_dir=cache)
    expected = stored_index(repo, cache)
    db = repo_cache_dir(repo.resolve(), cache) / INDEX_DB
    # mark the last run unclean, as a crash would, so the integrity check runs on open
    conn = sqlite3.connect(db)
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'clean'")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    CORRUPTIONS[kind](db, random.Random(seed))
    report = index_repository(repo, cache_dir=cache)
    assert report.files_indexed == 30
    assert stored_index(repo, cache) == expected
    if kind in ("unknown-version", "garbage", "symlink", "foreign-db"):
        assert report.rebuilt is not None
    assert not db.is_symlink()


@pytest.mark.reliability("B7.54")
def test_a_second_writer_waits_then_reports_busy(make_repo: Any, tmp_path: Path) -> None:
    repo = make_repo({"a.py": "x = 1\n"})
    cache = repo_cache_dir(repo.resolve(), tmp_path / "cache")
    cache.mkdir(parents=True)
    with writer_lock(cache), pytest.raises(CacheBusy), writer_lock(cache, wait_s=0.2):
        pass


@pytest.mark.reliability("B7.54")
def test_a_waiting_writer_proceeds_when_the_lock_is_released(
    make_repo: Any, tmp_path: Path
) -> None:
    repo = make_repo({"a.py": "x = 1\n"})
    base = tmp_path / "cache"
    cache = repo_cache_dir(repo.resolve(), base)
    cache.mkdir(parents=True)
    holder_ready = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with writer_lock(cache):
            holder_ready.set()
            release.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    holder_ready.wait(5)
    threading.Timer(0.3, release.set).start()
    report = index_repository(repo, cache_dir=base)
    thread.join()
    assert report.files_indexed == 1


@pytest.mark.reliability("B7.54")
def test_opening_the_index_again_in_a_process_keeps_the_locks_its_open_connections_hold(
    make_repo: Any, tmp_path: Path
) -> None:
    repo = make_repo({"a.py": "x = 1\n"})
    index_repository(repo, cache_dir=tmp_path / "cache")
    cache = repo_cache_dir(repo.resolve(), tmp_path / "cache")
    wal = cache / f"{INDEX_DB}-wal"
    with IndexStore.open(cache) as first:
        first.set_meta(probe="0")  # the WAL holds a frame: only a last connection deletes it
        IndexStore.open(cache).close()  # a second open in this process, as a server makes
        # another process writes, then closes its connection: had this process lost its
        # locks, that close would take it for the last one and delete the WAL under `first`
        code = (
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute(\"UPDATE meta SET value = '1' WHERE key = 'probe'\"); c.close()"
        )
        subprocess.run([sys.executable, "-c", code, str(cache / INDEX_DB)], check=True)
        assert wal.exists()
        assert first.meta("probe") == "1"


def test_the_cache_lives_outside_the_repository_with_private_permissions(
    make_repo: Any, tmp_path: Path
) -> None:
    repo = make_repo({"a.py": "x = 1\n"})
    report = index_repository(repo, cache_dir=tmp_path / "cache")
    assert report.cache_dir is not None
    assert not report.cache_dir.is_relative_to(repo)
    assert report.cache_dir.stat().st_mode & 0o777 == 0o700
    assert (report.cache_dir / INDEX_DB).stat().st_mode & 0o077 == 0


_FLIP_TASK = "f7 returns the wrong value for run_7"


def _pack_of(repo: Path, cache: Path) -> dict[str, Any]:
    from excerpt.deliver import build_pack
    from excerpt.pack.prepare import PackRequest

    pack: dict[str, Any] = dict(
        build_pack(PackRequest(repo=repo, task=_FLIP_TASK, cache_dir=cache)).pack.to_dict()
    )
    pack["stats"].pop("cache_rebuilt", None)
    pack.pop("pack_id")
    return pack


@pytest.fixture(scope="module")
def flip_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("flip") / "repo"
    body = "class C{i}:\n    def run_{i}(self, x):\n        return x + {i}\n\n\n"
    write_tree(
        root,
        {f"src/m{i}.py": f"import os\n\n\ndef f{i}():\n    return {i}\n\n\n" + body.format(i=i)
         for i in range(40)},
    )  # fmt: skip
    return root, _pack_of(root, tmp_path_factory.mktemp("flip-cache"))


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.reliability("B7.52")
def test_bits_flipped_in_a_cache_marked_clean_never_change_a_pack(
    flip_repo: tuple[Path, dict[str, Any]], tmp_path: Path, seed: int
) -> None:
    # eight random bits of the database flipped behind excerpt's back (no crash marked the
    # run unclean): the next pack is the pack of a clean index, rebuilt or mended as needed,
    # never an error and never a pack resting on the damaged rows
    repo, clean = flip_repo
    cache = tmp_path / "cache"
    index_repository(repo, cache_dir=cache)
    db = repo_cache_dir(repo.resolve(), cache) / INDEX_DB
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    rng = random.Random(seed)
    data = bytearray(db.read_bytes())
    for _ in range(8):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    db.write_bytes(bytes(data))
    assert _pack_of(repo, cache) == clean
