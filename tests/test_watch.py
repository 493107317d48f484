"""The MCP server's watcher: a pack after no change skips the refresh, an edit is always in
the next pack, and a watcher that cannot watch (no watchfiles, a failing or lost watch) falls
back to the stat refresh and says so."""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

import excerpt.mcp.session as session_module
from excerpt.index.build import index_repository, refresh_paths
from excerpt.index.watch import TreeWatcher
from excerpt.mcp import build_server
from trees import SHOP, TASK


@contextlib.contextmanager
def _watched(root: Path) -> Iterator[TreeWatcher]:
    """A watcher on ``root``, watching, stopped at the end."""
    watcher = TreeWatcher([root])
    watcher.start()
    try:
        deadline = time.monotonic() + 10
        while watcher.state == "starting" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert watcher.state == "watching"
        yield watcher
    finally:
        watcher.stop()


def _off(watcher: TreeWatcher) -> str:
    deadline = time.monotonic() + 10
    while not watcher.state.startswith("off") and time.monotonic() < deadline:
        time.sleep(0.01)
    return watcher.state


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The refreshes the server runs, by root."""
    calls: list[Path] = []

    def refresh(root: Path, **kwargs: Any) -> Any:
        calls.append(root)
        return index_repository(root, **kwargs)

    monkeypatch.setattr(session_module, "index_repository", refresh)
    return calls


@pytest.fixture
def named(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The paths of each refresh of named paths the server runs (``None`` ones too)."""
    calls: list[list[str]] = []

    def refresh(root: Path, paths: Any, **kwargs: Any) -> Any:
        calls.append(list(paths))
        return refresh_paths(root, paths, **kwargs)

    monkeypatch.setattr(session_module, "refresh_paths", refresh)
    return calls


def _session(repo: Path, cache: Path, body: Callable[[Client], Any]) -> Any:
    async def go() -> Any:
        with anyio.fail_after(60):
            async with Client(build_server(repo, cache, tools="all")) as client:
                return await body(client)

    return anyio.run(go)


def _text(result: Any) -> str:
    assert result.is_error is not True, result
    return "".join(c.text for c in result.content if c.type == "text")


def test_a_pack_after_no_change_skips_the_refresh_and_an_edit_is_in_the_next(
    make_repo: Callable[..., Path], cache_dir: Path, counted: list[Path], named: list[list[str]]
) -> None:
    repo = make_repo(SHOP)

    async def body(client: Client) -> tuple[str, str, str, str]:
        first = _text(await client.call_tool("context_pack", {"task": TASK}))
        # a refresh that began before the watcher was watching is not trusted: the next one
        # is (a few milliseconds after start on this tree)
        for _ in range(5):
            refreshes = len(counted)
            again = _text(await client.call_tool("context_pack", {"task": TASK}))
            if len(counted) == refreshes:
                break
            await anyio.sleep(0.1)
        for _ in range(3):
            assert _text(await client.call_tool("context_pack", {"task": TASK})) == again
        assert len(counted) == refreshes <= 2
        with (repo / "app/refunds.py").open("a", encoding="utf-8") as fh:
            fh.write("\n\ndef refund_twice(total: int) -> int:\n    return total\n")
        edited = _text(await client.call_tool("context_pack", {"task": "refund_twice " + TASK}))
        # the edited file alone was looked at: no walk of the tree
        assert len(counted) == refreshes and named == [["app/refunds.py"]]
        (repo / "app/notes.py").write_text("def note() -> None:\n    pass\n", encoding="utf-8")
        added = _text(await client.call_tool("context_pack", {"task": "note " + TASK}))
        # a new file: what discovery lists may have changed, so the tree is refreshed
        assert len(counted) == refreshes + 1 and named[-1] == ["app/notes.py"]
        assert "app/notes.py" in added
        status = await client.call_tool("index_status", {})
        assert status.structured_content is not None
        return first, again, edited, str(status.structured_content["freshness"])

    first, again, edited, freshness = _session(repo, cache_dir, body)
    assert "for the first time" in first and "for the first time" not in again
    assert "def refund_twice" not in again and "def refund_twice" in edited
    assert freshness.startswith("kept current by file-system notifications")
    served = len(counted)  # one or two refreshes at start, and one after the new file

    async def refreshed(client: Client) -> str:
        return _text(await client.call_tool("context_pack", {"task": TASK}))

    (repo / "app/refunds.py").write_text(SHOP["app/refunds.py"], encoding="utf-8")
    (repo / "app/notes.py").unlink()
    # a new server refreshes for its first pack: what the skipped refresh served, byte for byte
    assert _session(repo, cache_dir, refreshed) == again
    assert len(counted) == served + 1


def test_the_watcher_names_every_path_changed_since_a_mark_and_forgets_only_past_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import excerpt.index.watch as watch_module

    (tmp_path / "a.py").write_text("a\n")
    with _watched(tmp_path) as watcher:
        mark = watcher.begin_refresh()
        assert watcher.changes_since(mark) == (mark, frozenset())
        (tmp_path / "a.py").write_text("b\n")
        (tmp_path / "b.py").write_text("b\n")
        seen = watcher.changes_since(mark)
        assert seen is not None and seen[0] != mark
        assert {str(tmp_path / "a.py"), str(tmp_path / "b.py")} <= seen[1]
        assert watcher.changes_since(seen[0]) == (seen[0], frozenset())
        # past the log's size the oldest batches are forgotten: a mark before them gets None
        monkeypatch.setattr(watch_module, "_LOG_PATHS", 3)
        for n in range(6):
            (tmp_path / f"c{n}.py").write_text("c\n")
            time.sleep(0.05)  # a batch each
        assert watcher.changes_since(mark) is None
        latest = watcher.begin_refresh()
        assert watcher.changes_since(latest) == (latest, frozenset())


@pytest.mark.parametrize("failure", ["missing", "failing"])
def test_a_server_without_a_working_watcher_refreshes_before_every_call_and_says_why(
    make_repo: Callable[..., Path],
    cache_dir: Path,
    counted: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    failure: str,
) -> None:
    if failure == "missing":  # no watchfiles (or no notification API on this system)
        monkeypatch.setitem(sys.modules, "watchfiles", None)
    else:  # the system refuses the watch (a watch limit reached, an exhausted queue)
        import watchfiles

        def refused(*args: Any, **kwargs: Any) -> Any:
            raise OSError("OS file watch limit reached")

        monkeypatch.setattr(watchfiles, "watch", refused)
    repo = make_repo(SHOP)

    async def body(client: Client) -> str:
        for _ in range(3):
            _text(await client.call_tool("context_pack", {"task": TASK}))
        status = await client.call_tool("index_status", {})
        assert status.structured_content is not None
        return str(status.structured_content["freshness"])

    freshness = _session(repo, cache_dir, body)
    assert len(counted) == 4  # three packs and the status, each refreshed
    why = "watchfiles is not installed" if failure == "missing" else "watch limit reached"
    assert freshness.startswith("refreshed before every call (watcher off: ") and why in freshness


def test_a_watcher_whose_root_is_deleted_goes_off_and_trusts_nothing(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.py").write_text("x = 1\n", encoding="utf-8")
    with _watched(root) as watcher:
        mark = watcher.begin_refresh()
        assert mark is not None and watcher.unchanged_since(mark)
        shutil.rmtree(root)
        root.mkdir()  # a new directory of the same name is not the one watched
        assert _off(watcher).startswith("off: ")
        assert not watcher.unchanged_since(mark)
        assert watcher.begin_refresh() is None


def test_an_edit_before_the_question_is_always_seen(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "x.py").write_text("x = 1\n", encoding="utf-8")
    with _watched(root) as watcher:
        for n in range(20):
            mark = watcher.begin_refresh()
            (root / "x.py").write_text(f"x = {n}\n", encoding="utf-8")
            assert not watcher.unchanged_since(mark), n  # asked right after the write
            mark = watcher.begin_refresh()
            assert watcher.unchanged_since(mark)


def test_a_burst_past_the_kernel_s_event_queue_still_marks_the_tree_changed(
    tmp_path: Path,
) -> None:
    """More changes at once than inotify queues by default (16,384): the watcher is told of
    the first ones before any are dropped, so the next pack refreshes from the disk."""
    root = tmp_path / "tree"
    (root / "many").mkdir(parents=True)
    with _watched(root) as watcher:
        mark = watcher.begin_refresh()
        for n in range(20_000):
            (root / "many" / f"f{n}").write_bytes(b"")
        assert not watcher.unchanged_since(mark)


def test_a_watcher_reads_and_writes_nothing_in_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "x.py").write_text("x = 1\n", encoding="utf-8")
    before = sorted((p.relative_to(root), p.stat().st_mtime_ns) for p in root.rglob("*"))
    with _watched(root) as watcher:
        mark = watcher.begin_refresh()
        (root / "x.py").read_text(encoding="utf-8")  # a read is not a change
        assert watcher.unchanged_since(mark)
    assert sorted((p.relative_to(root), p.stat().st_mtime_ns) for p in root.rglob("*")) == before
    assert watcher.state == "off: stopped"


def test_a_cache_removed_behind_the_server_s_back_is_refreshed_not_trusted(
    make_repo: Callable[..., Path], cache_dir: Path, counted: list[Path]
) -> None:
    """The cache lies outside the watched tree: a watcher that saw no change does not vouch
    for a database removed (or rebuilt) since the refresh it remembers."""
    repo = make_repo(SHOP)

    async def body(client: Client) -> tuple[str, str]:
        for _ in range(5):  # until a pack skips the refresh
            refreshes = len(counted)
            before = _text(await client.call_tool("context_pack", {"task": TASK}))
            if len(counted) == refreshes:
                break
        shutil.rmtree(cache_dir)
        after = _text(await client.call_tool("context_pack", {"task": TASK}))
        assert len(counted) == refreshes + 1
        return before, after

    before, after = _session(repo, cache_dir, body)
    assert "class RefundService" in before and "class RefundService" in after
