"""Rows of the cache changed after they were written (a byte of a symbol, shifted spans, an
import, indexed terms) are found by their file's digest when they are read, never served, and
the file is read again: the next pack is the pack an intact cache gives."""

from __future__ import annotations

import shutil
import sqlite3
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import git_commit_all, write_tree
from excerpt.core.settings import INDEX_DB, repo_cache_dir
from excerpt.deliver import build_pack
from excerpt.index.build import index_repository
from excerpt.index.store import IndexStore
from excerpt.pack.prepare import PackRequest

_OTHERS = "".join(
    f'\n\ndef scale_{i}(value, rate):\n    """Scale by rate {i}."""\n'
    f"    return value * rate + {i}\n"
    for i in range(60)
)
FILES = {
    "billing/refunds.py": (
        "from billing.ledger import post\n\n\n"
        "def refund_order(order, amount):\n"
        '    """Refund part of an order."""\n'
        "    if amount > order.total:\n"
        "        raise ValueError(amount)\n"
        "    return post(order, -amount)\n"
        f"{_OTHERS}\n\n"
        "def cancel_order(order):\n"
        "    return refund_order(order, order.total)\n"
    ),
    "billing/ledger.py": "def post(order, amount):\n    return (order, amount)\n",
    "billing/invoices.py": (
        "from billing.ledger import post\n\n\ndef invoice(o):\n    return post(o, 1)\n"
    ),
    "tests/test_refunds.py": (
        "from billing.refunds import refund_order\n\n\n"
        "def test_refund():\n    assert refund_order\n"
    ),
    "README.md": "# Billing\n\nRefunds, invoices and a ledger.\n",
}
TASK = "refund_order refunds more than the order total when called twice"
REFUNDS = "billing/refunds.py"


def _db(repo: Path, cache: Path) -> Path:
    return repo_cache_dir(repo.resolve(), cache) / INDEX_DB


def _sql(db: Path, statements: str, *args: object) -> None:
    conn = sqlite3.connect(db)
    try:
        for statement in statements.split(";"):
            conn.execute(statement, args)
        conn.commit()
    finally:
        conn.close()


def _pack(repo: Path, cache: Path) -> dict[str, Any]:
    return dict(
        build_pack(PackRequest(repo=repo, task=TASK, budget=6000, cache_dir=cache)).pack.to_dict()
    )


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """A repository, its cache, and the pack an intact cache gives for ``TASK``."""
    base = tmp_path_factory.mktemp("integrity")
    repo = write_tree(base / "repo", FILES)
    git_commit_all(repo)
    cache = base / "cache"
    pack = _pack(repo, cache)
    assert any(i["path"] == REFUNDS and i["kind"] == "symbol" for i in pack["items"])
    return repo, cache, pack


@pytest.fixture
def copy(pristine: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> Iterator[Path]:
    """A copy of the pristine cache, to damage."""
    _, cache, _ = pristine
    target = tmp_path / "cache"
    shutil.copytree(cache, target)
    yield target


_SYMBOL = f"file_id = (SELECT id FROM files WHERE path = '{REFUNDS}') AND name = 'refund_order'"
TAMPERS = {
    "spans-shifted": f"UPDATE symbols SET start_line = start_line + 2, end_line = end_line + 3"
    f" WHERE {_SYMBOL}",
    "a-byte-of-the-name": f"UPDATE symbols SET name = 'refund_ordes' WHERE {_SYMBOL}",
    "a-byte-of-the-qualname": f"UPDATE symbols SET qualname = 'refund_ordes' WHERE {_SYMBOL}",
    "kind-changed": f"UPDATE symbols SET kind = 'class' WHERE {_SYMBOL}",
    "row-deleted": f"DELETE FROM symbols WHERE {_SYMBOL}",
    "row-added": "INSERT INTO symbols(file_id, kind, name, qualname, start_line, end_line)"
    f" SELECT id, 'function', 'refund_order', 'refund_order', 1, 11 FROM files"
    f" WHERE path = '{REFUNDS}'",
    # and one of no file at all, which once failed every pack naming it (KeyError)
    "row-of-no-file": "INSERT INTO symbols(file_id, kind, name, qualname, start_line, end_line)"
    " VALUES(99999, 'function', 'refund_order', 'refund_order', 1, 2);"
    f" UPDATE symbols SET end_line = end_line + 1 WHERE {_SYMBOL}",
}


# and the file rows themselves, checked where they are served
FILE_TAMPERS = {
    "digest-of-the-bytes": f"UPDATE files SET sha256 = '{'0' * 64}' WHERE path = '{REFUNDS}'",
    "line-count": f"UPDATE files SET lines = lines + 1 WHERE path = '{REFUNDS}'",
    "test-flag": f"UPDATE files SET is_test = 1 WHERE path = '{REFUNDS}'",
}


@pytest.mark.reliability("T6", cases=1)
@pytest.mark.parametrize("tamper", sorted({**TAMPERS, **FILE_TAMPERS}))
def test_a_changed_row_is_never_served_and_the_file_is_read_again(
    pristine: tuple[Path, Path, dict[str, Any]], copy: Path, tamper: str
) -> None:
    repo, _, intact = pristine
    _sql(_db(repo, copy), {**TAMPERS, **FILE_TAMPERS}[tamper])
    with IndexStore.open(_db(repo, copy).parent) as store:
        view = store.view()
        # a damaged file row leaves the file out; damaged symbols, its definitions only
        assert (REFUNDS in view.files()) == (tamper in TAMPERS)
        assert [s for s in view.symbols_in([REFUNDS])] == []
        assert [s for s in view.symbols_named(["refund_order"]) if s.path == REFUNDS] == []
        assert view.damaged == {REFUNDS}
    report = index_repository(repo, cache_dir=copy)
    assert (report.rows_rebuilt, report.files_read, report.rebuilt) == (1, 1, None)
    assert _pack(repo, copy) == intact


@pytest.mark.reliability("T6", cases=1)
def test_the_pack_that_finds_damaged_spans_reads_the_file_again_and_is_intact(
    pristine: tuple[Path, Path, dict[str, Any]], copy: Path
) -> None:
    # the file's definitions are never served from shifted spans, nor is the file served
    # without them: the pack that finds the damage has the file read again and ranks anew
    repo, _, intact = pristine
    _sql(_db(repo, copy), TAMPERS["spans-shifted"])
    assert _pack(repo, copy) == intact
    assert _pack(repo, copy) == intact


@pytest.mark.reliability("T6", cases=1)
def test_a_changed_import_row_is_found_when_the_graph_is_built_and_the_file_read_again(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo(FILES)
    fresh, cache = tmp_path / "fresh", tmp_path / "cache"
    index_repository(repo, cache_dir=cache)
    _sql(
        _db(repo, cache),
        "UPDATE imports SET module = 'billing.invoices' WHERE file_id ="
        " (SELECT id FROM files WHERE path = 'billing/refunds.py')",
    )
    # a run that builds the graph: a file is added (an edit that leaves every file's imports
    # alone keeps the graph, and reads no import row)
    (repo / "billing/audit.py").write_text("from billing.ledger import post\n", encoding="utf-8")
    report = index_repository(repo, cache_dir=cache)
    assert (report.rows_rebuilt, report.rebuilt) == (1, None)
    index_repository(repo, cache_dir=fresh)
    assert _snapshot(repo, cache) == _snapshot(repo, fresh)


@pytest.mark.reliability("T6", cases=1)
def test_changed_indexed_terms_are_found_before_they_are_deleted_and_the_cache_rebuilt(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """A contentless full-text row is deleted by repeating what was indexed: deleting other
    terms would leave the old ones matching the file for good."""
    repo = make_repo(FILES)
    cache, fresh = tmp_path / "cache", tmp_path / "fresh"
    index_repository(repo, cache_dir=cache)
    other = zlib.compress(b"billing ledger\0post\0post order amount", 1)
    _sql(
        _db(repo, cache),
        "UPDATE lexicon_docs SET data = ? WHERE file_id ="
        " (SELECT id FROM files WHERE path = 'billing/refunds.py')",
        other,
    )
    (repo / REFUNDS).write_text("def settle(order):\n    return order\n", encoding="utf-8")
    report = index_repository(repo, cache_dir=cache)
    assert report.rebuilt is not None
    with IndexStore.open(_db(repo, cache).parent) as store:
        # the old terms are gone: the file no longer matches what it no longer says
        assert REFUNDS not in dict(store.view().lexical(["cancel", "scale"], 10))
    index_repository(repo, cache_dir=fresh)
    assert _snapshot(repo, cache) == _snapshot(repo, fresh)


@pytest.mark.reliability("T6", cases=1)
def test_an_index_from_before_row_digests_gets_them_in_place_and_is_checked_from_then_on(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo(FILES)
    cache = tmp_path / "cache"
    index_repository(repo, cache_dir=cache)
    db = _db(repo, cache)
    conn = sqlite3.connect(db)  # back to schema 3: no digests, no repairs
    for column in ("symbols_check", "imports_check", "terms_check"):
        conn.execute(f"ALTER TABLE files DROP COLUMN {column}")
    conn.execute("DROP TABLE repairs")
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    report = index_repository(repo, cache_dir=cache)
    assert (report.files_read, report.rows_rebuilt, report.rebuilt) == (0, 0, None)
    (repo / "README.md").write_text("# Billing\n\nChanged.\n", encoding="utf-8")
    report = index_repository(repo, cache_dir=cache)  # the graph is built: imports checked
    assert (report.files_read, report.rows_rebuilt, report.rebuilt) == (1, 0, None)
    with IndexStore.open(db.parent) as store:
        view = store.view()
        assert view.symbols_in([REFUNDS]) != []
        assert view.damaged == set()
    _sql(db, TAMPERS["spans-shifted"])
    with IndexStore.open(db.parent) as store:
        view = store.view()
        assert view.symbols_in([REFUNDS]) == []
        assert view.damaged == {REFUNDS}


def _snapshot(repo: Path, cache: Path) -> dict[str, Any]:
    with IndexStore.open(_db(repo, cache).parent) as store:
        return store.snapshot()


# -- file rows: unchecked for finding what changed, checked where they are served -------------


@pytest.mark.reliability("T6", cases=1)
def test_a_file_row_renamed_to_a_sensitive_path_never_has_that_file_read(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """Finding what changed takes the stored rows unchecked: a row renamed in the cache to a
    sensitive file's path must not carry that file past the deny list."""
    repo = make_repo({**FILES, ".env": "TOKEN=ZqxCanaryRenamedRow\n"})
    cache, fresh = tmp_path / "cache", tmp_path / "fresh"
    index_repository(repo, cache_dir=cache)
    _sql(_db(repo, cache), f"UPDATE files SET path = '.env' WHERE path = '{REFUNDS}'")
    index_repository(repo, cache_dir=cache)
    with IndexStore.open(_db(repo, cache).parent) as store:
        files = store.view().files()
        assert ".env" not in files and REFUNDS in files
        assert (".env", "sensitive") in store.view().omitted()
    assert b"ZqxCanaryRenamedRow" not in _db(repo, cache).read_bytes()
    index_repository(repo, cache_dir=fresh)
    assert _snapshot(repo, cache) == _snapshot(repo, fresh)


# Rows changed in place by someone who also wrote their digest again (a digest has no key):
# what the pack would serve of them is checked against the file's bytes where it is read
LIES = {
    "name-of-another-line": f"UPDATE symbols SET name = 'scale_7' WHERE {_SYMBOL}",
    "span-moved-away": f"UPDATE symbols SET start_line = start_line + 40, end_line = end_line + 40"
    f" WHERE {_SYMBOL}",
    "span-past-the-end": f"UPDATE symbols SET end_line = 100000 WHERE {_SYMBOL}",
}


@pytest.mark.reliability("T6", cases=1)
@pytest.mark.parametrize("lie", sorted(LIES))
def test_definitions_that_lie_with_a_fresh_digest_are_checked_against_the_file(
    pristine: tuple[Path, Path, dict[str, Any]], copy: Path, lie: str
) -> None:
    from excerpt.index.checks import symbols_check

    repo, _, intact = pristine
    db = _db(repo, copy)
    _sql(db, LIES[lie])
    conn = sqlite3.connect(db)
    (file_id,) = conn.execute("SELECT id FROM files WHERE path = ?", (REFUNDS,)).fetchone()
    rows = conn.execute(
        "SELECT kind, name, qualname, start_line, end_line FROM symbols WHERE file_id = ?",
        (file_id,),
    ).fetchall()
    conn.execute("UPDATE files SET symbols_check = ? WHERE id = ?", (symbols_check(rows), file_id))
    conn.commit()
    conn.close()
    with IndexStore.open(db.parent) as store:
        assert store.view().symbols_in([REFUNDS])  # the digest vouches for the lie
    assert _pack(repo, copy) == intact
