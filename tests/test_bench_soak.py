"""``excerpt bench soak``: sessions, hooks and an editor at once, every excerpt served checked
against the files as they were while the call was in flight."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import write_tree
from excerpt.core.settings import repo_cache_dir
from excerpt.errors import CacheFault
from excerpt.index import store as store_module
from excerpt.index.build import KEEP_RUNS, index_repository
from excerpt.index.store import IndexStore
from excerpt_bench.soak import SoakRun, run_soak
from excerpt_bench.soak.writer import Writer, stale_items, stale_retrievals

_MODULE = "\n".join(
    f"def handler_{i}(request, retries={i}):\n    return dispatch(request, {i})\n"
    for i in range(30)
)


def _tree(root: Path, files: int = 40) -> Path:
    spec: dict[str, str] = {
        f"pkg/mod_{n}.py": _MODULE.replace("handler_", f"handler_{n}_") for n in range(files)
    }
    spec["README.md"] = "# pkg\n\nDispatches requests to handlers.\n"
    return write_tree(root, spec)


def _writer(tmp_path: Path) -> Writer:
    root = _tree(tmp_path / "repo", files=2)
    return Writer(root, ["pkg/mod_0.py"], seed=1, stop=threading.Event())


def _item(path: str, data: bytes, a: int, b: int) -> dict[str, Any]:
    lines = data.decode().split("\n")
    return {"path": path, "start_line": a, "end_line": b, "text": "\n".join(lines[a - 1 : b]),
            "source_sha256": hashlib.sha256(data).hexdigest()}  # fmt: skip


def test_an_item_of_the_version_current_during_the_call_is_not_stale(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    old = (writer.root / "pkg/mod_0.py").read_bytes()
    began = time.monotonic()
    writer.write("pkg/mod_0.py", b"# new\n" + old)  # during the call: either may be served
    ended = time.monotonic()
    assert stale_items([_item("pkg/mod_0.py", old, 1, 4)], writer, began, ended) == []
    new = (writer.root / "pkg/mod_0.py").read_bytes()
    assert stale_items([_item("pkg/mod_0.py", new, 1, 4)], writer, began, ended) == []


@pytest.mark.reliability("B8.57", cases=3)
def test_an_item_of_a_version_replaced_before_the_call_is_a_stale_serve(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    old = (writer.root / "pkg/mod_0.py").read_bytes()
    writer.write("pkg/mod_0.py", b"# new\n" + old)
    time.sleep(0.01)
    began = time.monotonic()
    ended = began + 0.5
    stale = stale_items([_item("pkg/mod_0.py", old, 1, 4)], writer, began, ended)
    assert stale == [f"pkg/mod_0.py#L1-L4@{hashlib.sha256(old).hexdigest()[:16]}"]
    # the same lines with the digest of the current file, but the old text: stale too
    new = (writer.root / "pkg/mod_0.py").read_bytes()
    forged = {**_item("pkg/mod_0.py", old, 1, 4), "source_sha256": hashlib.sha256(new).hexdigest()}
    assert len(stale_items([forged], writer, began, ended)) == 1
    # a removed file's text is stale once the removal came before the call
    writer.write("pkg/gone.py", b"def f():\n    pass\n")
    writer.remove("pkg/gone.py")
    later = time.monotonic()
    gone = _item("pkg/gone.py", b"def f():\n    pass\n", 1, 2)
    assert len(stale_items([gone], writer, later, later + 0.1)) == 1


def test_a_retrieval_called_fresh_for_a_replaced_version_is_a_stale_serve(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    old = (writer.root / "pkg/mod_0.py").read_bytes()
    sha = hashlib.sha256(old).hexdigest()[:16]
    text = "\n".join(old.decode().split("\n")[0:2])
    answer = f"## `pkg/mod_0.py#L1-L2@{sha}` (fresh)\n```python\n{text}\n```\n"
    now = time.monotonic()
    assert stale_retrievals(answer, writer, now, now) == (1, [])
    writer.write("pkg/mod_0.py", b"# new\n" + old)
    later = time.monotonic() + 0.01
    assert stale_retrievals(answer, writer, later, later) == (1, [f"pkg/mod_0.py#L1-L2@{sha}"])
    refused = f"## `pkg/mod_0.py#L1-L2@{sha}` (stale: the file changed since the handle was made)\n"
    assert stale_retrievals(refused, writer, later, later) == (0, [])


def test_a_day_of_edits_keeps_the_run_log_of_the_index_bounded(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", files=2)
    cache = tmp_path / "cache"
    target = repo / "pkg/mod_0.py"
    for n in range(KEEP_RUNS + 20):  # one refresh that writes per edit, as a server makes
        target.write_text(f"# edit {n}\n" + _MODULE, encoding="utf-8")
        index_repository(repo, cache_dir=cache)
    with IndexStore.open(repo_cache_dir(repo, cache)) as store:
        ids = [row[0] for row in store.conn.execute("SELECT id FROM runs ORDER BY id")]
    assert len(ids) <= KEEP_RUNS
    assert ids[-1] - ids[0] == len(ids) - 1  # the latest runs, none missing between them


def _short_read() -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError("disk I/O error")
    exc.sqlite_errorcode = 522  # SQLITE_IOERR_SHORT_READ
    exc.sqlite_errorname = "SQLITE_IOERR_SHORT_READ"
    return exc


def test_an_io_error_opening_the_index_is_reported_with_its_code_and_the_index_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _tree(tmp_path / "repo", files=2)
    cache = tmp_path / "cache"
    index_repository(repo, cache_dir=cache)
    monkeypatch.setattr(store_module, "connect", lambda db: (_ for _ in ()).throw(_short_read()))
    with pytest.raises(CacheFault, match="SQLITE_IOERR_SHORT_READ"):
        IndexStore.open(repo_cache_dir(repo, cache))
    monkeypatch.undo()
    with IndexStore.open(repo_cache_dir(repo, cache)) as store:
        assert store.rebuilt is None  # the same database, not moved aside
        assert store.conn.execute("SELECT COUNT(*) FROM files").fetchone()[0] == 3


def _assert_clean(doc: dict[str, Any]) -> None:
    assert doc["errors"] == [], doc["errors"][:3]
    assert doc["server_log_errors"] == [], doc["server_log_errors"][:3]
    assert doc["stale_served"] == 0, doc["stale_serves"][:3]
    assert doc["leftover"] == []
    assert doc["writer_failure"] is None
    assert doc["killed_mid_call"] is True
    assert doc["after_kill"] == {"tasks": 3, "differing_tasks": []}
    kinds = doc["calls_by_kind"]
    for kind in ("context_plan", "context_pack", "context_retrieve", "hook UserPromptSubmit",
                 "hook PostToolUse"):  # fmt: skip
        assert kinds.get(kind, 0) > 0, kinds
    assert doc["served"] > 0 and doc["writes"] > 0 and doc["switches"] >= 1


@pytest.mark.reliability("B8.55")
@pytest.mark.reliability("B8.56")
@pytest.mark.timeout(600)  # half a minute of soak, the copy indexed twice, processes stopped
def test_a_short_soak_has_no_error_no_stale_serve_and_stops_everything(
    tmp_path: Path,
) -> None:
    repo = _tree(tmp_path / "repo")
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    # half a minute, two sessions and a pair of hooks a second here, for the default run's
    # time (it shares two cores with the rest of the suite); four sessions and hooks back to
    # back for ten minutes under -m slow
    doc = run_soak(SoakRun(repo=repo, minutes=0.5, sessions=2, budget=4000, hook_pause_s=1.0))
    _assert_clean(doc)
    assert len(doc["per_minute"]) == 1 and doc["per_minute"][0]["calls"] > 0
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before  # the copy was used


def test_the_command_refuses_a_missing_tree_with_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "excerpt", "bench", "soak", "--repo", str(tmp_path / "none"),
         "--minutes", "1", "--json"], capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--repo must be a directory" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_ten_minute_soak_has_no_error_no_stale_serve_and_no_descriptor_leak(
    tmp_path: Path,
) -> None:
    repo = _tree(tmp_path / "repo", files=400)
    doc = run_soak(SoakRun(repo=repo, minutes=10, sessions=4))
    _assert_clean(doc)
    assert len(doc["per_minute"]) == 10
    assert doc["fd_growth"] is not None and doc["fd_growth"] <= 2, doc["per_minute"]
    # latency drift and memory growth are figures, not asserts: printed, as the bench reports
    print(json.dumps({k: doc[k] for k in ("latency_drift", "rss_growth_mb", "per_minute")}))
