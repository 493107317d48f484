"""The index seam: a recorded view gives exactly the answers the index gave, from memory,
and refuses a question it was never asked; ranking runs the same over either."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.core.settings import repo_cache_dir
from excerpt.index.build import index_repository
from excerpt.index.store import IndexStore
from excerpt.index.view import (
    FileInfo,
    MemoryView,
    RecordingView,
    ReplayMiss,
    SymbolSpan,
    view_from_dict,
    view_to_dict,
)
from excerpt.index.view import sqlite as sqlite_view
from excerpt.rank.score import rank_files
from excerpt.rank.task import analyze_task

FILES = {
    "shop/refund.py": "from shop.ledger import post\n\n\ndef refund(o):\n    return post(o)\n",
    "shop/ledger.py": "def post(entry):\n    return entry\n",
    "tests/test_refund.py": "from shop.refund import refund\n\n\ndef test_it():\n    refund(1)\n",
    "README.md": "# Shop\n\nRefunds and a ledger.\n",
}
TASK = "refund() posts twice to the ledger when the order is retried"


def _recorded(
    make_repo: Callable[..., Path], cache_dir: Path
) -> tuple[RecordingView, list[str], list[SymbolSpan]]:
    root = make_repo(FILES)
    index_repository(root, cache_dir=cache_dir)
    with IndexStore.open(repo_cache_dir(root.resolve(), cache_dir)) as store:
        view = RecordingView(store.view())
        ranked = [c.path for c in rank_files(analyze_task(TASK), view)]
        symbols = view.symbols_in(["shop/refund.py"])
        # the recording outlives the connection: its file table and graph are read now
        return _Frozen(view), ranked, symbols


class _Frozen(RecordingView):
    """A RecordingView whose inner view's tables are read once, while the store is open."""

    def __init__(self, live: RecordingView) -> None:
        frozen = MemoryView(
            file_infos=live.inner.files(),
            edge_list=tuple(live.inner.edges()),
            omitted_paths=tuple(live.inner.omitted()),
        )
        super().__init__(
            inner=frozen,
            lexical_answers=live.lexical_answers,
            frequencies=live.frequencies,
            symbols=live.symbols,
            named=live.named,
            covered=live.covered,
            history_answers=live.history_answers,
        )


def test_a_replayed_view_ranks_exactly_as_the_index_did(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    recording, ranked, symbols = _recorded(make_repo, cache_dir)
    replay = recording.replay()
    assert ranked and ranked[0] == "shop/refund.py"
    assert [c.path for c in rank_files(analyze_task(TASK), replay)] == ranked
    assert symbols and replay.symbols_in(["shop/refund.py"]) == symbols


def test_a_replayed_view_survives_its_json_form_unchanged(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    replay = _recorded(make_repo, cache_dir)[0].replay()
    again = view_from_dict(json.loads(json.dumps(view_to_dict(replay))))
    assert again == replay
    assert [c.path for c in rank_files(analyze_task(TASK), again)] == [
        c.path for c in rank_files(analyze_task(TASK), replay)
    ]


def test_a_strict_view_refuses_what_was_never_recorded(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    replay = _recorded(make_repo, cache_dir)[0].replay()
    with pytest.raises(ReplayMiss):
        replay.lexical(["nowhere"], 10)
    with pytest.raises(ReplayMiss):
        replay.document_frequencies(["neverasked"])
    with pytest.raises(ReplayMiss):
        replay.symbols_named(["NeverAsked"])
    with pytest.raises(ReplayMiss):
        replay.symbols_in(["shop/ledger.py"])


def test_a_malformed_view_document_is_a_usage_error() -> None:
    from excerpt.errors import UsageError

    with pytest.raises(UsageError, match="not a recorded index view"):
        view_from_dict({"files": [["a.py"]]})


def test_a_memory_view_ranks_without_any_database() -> None:
    info = {
        p: FileInfo(path=p, size=10, sha256="0" * 64, language="python", encoding="utf-8",
                    lines=5, status=None, is_test=p.startswith("tests/"), git_blob=None)
        for p in ("shop/refund.py", "shop/ledger.py", "tests/test_refund.py")
    }  # fmt: skip
    task = analyze_task("refund twice")
    terms = tuple(t for t in task.terms if t == "refund")
    view = MemoryView(
        file_infos=info,
        frequencies={"refund": 2, "twice": 0},
        lexical_answers={
            (terms, 120, (4.0, 3.0, 1.0)): [("shop/refund.py", 2.0), ("tests/test_refund.py", 1.0)]
        },
        edge_list=(("tests/test_refund.py", "shop/refund.py", "tests"),),
    )
    ranked = rank_files(task, view)
    assert [c.path for c in ranked][:1] == ["shop/refund.py"]
    assert "shop/ledger.py" not in [c.path for c in ranked]


def _table(root: Path, cache_dir: Path) -> dict[str, FileInfo]:
    with IndexStore.open(repo_cache_dir(root.resolve(), cache_dir)) as store:
        return store.view().files()


def test_an_unchanged_index_answers_the_file_table_read_before(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    # a long-lived process (the MCP server) reads the table once per version of it
    root = make_repo(FILES)
    index_repository(root, cache_dir=cache_dir)
    first = _table(root, cache_dir)
    index_repository(root, cache_dir=cache_dir)  # no change: nothing written
    hits = sqlite_view._tables.stats().hits
    assert _table(root, cache_dir) is first
    assert sqlite_view._tables.stats().hits == hits + 1  # counted where the MCP server shows it


@pytest.mark.parametrize("change", ["edit", "add", "remove", "rename"])
def test_a_changed_index_answers_its_new_file_table_as_a_whole_read_gives_it(
    make_repo: Callable[..., Path], cache_dir: Path, change: str
) -> None:
    # the kept table is brought up to date by the rows that changed: the same files in the
    # same order (by path) as a process that never read it gives
    root = make_repo(FILES)
    index_repository(root, cache_dir=cache_dir)
    first = _table(root, cache_dir)
    if change == "edit":
        (root / "shop/ledger.py").write_text("def post(entry):\n    return [entry]\n")
    elif change == "add":
        (root / "shop/a_tax.py").write_text("def tax(o):\n    return 0\n")
    elif change == "remove":
        (root / "README.md").unlink()
    else:
        (root / "shop/ledger.py").rename(root / "shop/zz_ledger.py")
    index_repository(root, cache_dir=cache_dir)
    second = _table(root, cache_dir)
    assert second is not first
    sqlite_view._tables.clear()  # a process that never read the table
    whole = _table(root, cache_dir)
    assert second is not whole
    assert list(second.items()) == list(whole.items())


def test_a_file_row_changed_in_place_is_read_again_not_answered_from_the_kept_table(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    # a row rewritten with a checksum of its own changes the table's digest: the view reads
    # the table again, and the row that fails its check is left out, as on a first read
    root = make_repo(FILES)
    index_repository(root, cache_dir=cache_dir)
    first = _table(root, cache_dir)
    with (
        IndexStore.open(repo_cache_dir(root.resolve(), cache_dir)) as store,
        store.transaction() as c,
    ):
        c.execute("UPDATE files SET size = size + 1, checksum = checksum + 1 WHERE path = ?",
                  ("shop/ledger.py",))  # fmt: skip
    second = _table(root, cache_dir)
    assert second is not first
    assert "shop/ledger.py" not in second and "shop/refund.py" in second
