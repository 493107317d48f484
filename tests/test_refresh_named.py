"""Refreshing the paths a watcher names: files written in place are read alone and the index
equals a whole refresh's; any change that can alter what discovery lists is refused (None),
so the caller walks the tree."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import excerpt.index.build as build_module
from excerpt.index.build import index_repository, refresh_paths
from excerpt.index.store import IndexStore

FILES = {
    "app/__init__.py": "",
    "app/refunds.py": "def refund(total):\n    return total\n",
    "app/shipping.py": "from app.refunds import refund\n\n\ndef ship(order):\n    return order\n",
    ".gitignore": "*.log\n",
}


def _rows(cache: Path) -> dict[str, Any]:
    store = IndexStore.open(cache)
    try:
        return store.snapshot()
    finally:
        store.close()


@pytest.fixture
def indexed(make_repo: Callable[..., Path], cache_dir: Path) -> tuple[Path, Path]:
    repo = make_repo(FILES)
    report = index_repository(repo, cache_dir=cache_dir, history=None)
    assert report.cache_dir is not None
    return repo, report.cache_dir


def test_a_file_written_in_place_is_read_alone_and_the_index_equals_a_whole_refresh(
    indexed: tuple[Path, Path], cache_dir: Path, tmp_path: Path
) -> None:
    repo, cache = indexed
    (repo / "app/refunds.py").write_text("def refund(total, amount):\n    return total - amount\n")
    report = refresh_paths(repo, ["app/refunds.py"], cache_dir=cache_dir)
    assert report is not None and report.files_read == 1 and report.files_removed == 0
    whole = index_repository(repo, cache_dir=tmp_path / "fresh", history=None)
    assert whole.cache_dir is not None
    assert _rows(cache) == _rows(whole.cache_dir)
    assert report.files_indexed == whole.files_indexed and report.symbols == whole.symbols
    # named again with nothing changed: nothing read, nothing written
    again = refresh_paths(repo, ["app/refunds.py"], cache_dir=cache_dir)
    assert again is not None and again.files_read == 0


@pytest.mark.parametrize(
    ("name", "change"),
    [
        pytest.param("app/new.py", lambda r: (r / "app/new.py").write_text("x = 1\n"), id="added"),
        pytest.param("app/refunds.py", lambda r: (r / "app/refunds.py").unlink(), id="removed"),
        pytest.param(".gitignore", lambda r: (r / ".gitignore").write_text("app/\n"), id="ignore"),
        pytest.param(
            "app/.gitignore", lambda r: (r / "app/.gitignore").write_text("*.py\n"), id="nested"
        ),
        pytest.param(
            "excerpt.toml",
            lambda r: (r / "excerpt.toml").write_text('exclude = ["app"]\n'),
            id="settings",
        ),
        pytest.param(
            ".excerptignore", lambda r: (r / ".excerptignore").write_text("app/\n"), id="excerpt"
        ),
        pytest.param(".env", lambda r: (r / ".env").write_text("TOKEN=1\n"), id="sensitive"),
        pytest.param("app", lambda r: os.rename(r / "app", r / "lib"), id="directory-moved"),
        pytest.param(
            "app/refunds.py",
            lambda r: (r / "app/refunds.py").write_bytes(b"x" * 3_000_000),
            id="now-too-large",
        ),
    ],
)
def test_a_change_to_what_discovery_lists_is_refused(
    indexed: tuple[Path, Path], cache_dir: Path, name: str, change: Callable[[Path], object]
) -> None:
    repo, _ = indexed
    change(repo)
    assert refresh_paths(repo, [name], cache_dir=cache_dir) is None


def test_a_file_replaced_by_a_second_name_of_a_sensitive_file_is_refused(
    indexed: tuple[Path, Path], cache_dir: Path
) -> None:
    repo, _ = indexed
    (repo / ".env").write_text("PAYMENT_API_KEY=sk_live_0123456789abcdef\n")
    index_repository(repo, cache_dir=cache_dir, history=None)
    (repo / "app/shipping.py").unlink()
    os.link(repo / ".env", repo / "app/shipping.py")
    # discovery refuses a hard link to a sensitive file: only a whole refresh can tell
    assert refresh_paths(repo, ["app/shipping.py"], cache_dir=cache_dir) is None
    whole = index_repository(repo, cache_dir=cache_dir, history=None)
    assert ("app/shipping.py", "sensitive") in whole.omitted_paths


def test_paths_discovery_never_lists_and_files_that_came_and_went_are_no_change(
    indexed: tuple[Path, Path], cache_dir: Path
) -> None:
    repo, cache = indexed
    before = _rows(cache)
    (repo / "app/__pycache__").mkdir()
    (repo / "app/__pycache__/refunds.cpython-311.pyc").write_bytes(b"\x00")
    report = refresh_paths(
        repo,
        ["app/__pycache__/refunds.cpython-311.pyc", "app/.refunds.py.swp"],  # gone again
        cache_dir=cache_dir,
    )
    assert report is not None and report.files_read == 0
    assert _rows(cache) == before


def test_a_link_follows_its_target_when_only_the_target_is_named(
    make_repo: Callable[..., Path], cache_dir: Path, tmp_path: Path
) -> None:
    repo = make_repo(FILES)
    assert refresh_paths(repo, ["app/refunds.py"], cache_dir=cache_dir) is None  # no index
    (repo / "app/alias.py").symlink_to("refunds.py")
    report = index_repository(repo, cache_dir=cache_dir, history=None)
    assert report.cache_dir is not None
    (repo / "app/refunds.py").write_text(
        "def refund(total):\n    return 0\n\n\ndef x():\n    pass\n"
    )
    named = refresh_paths(repo, ["app/refunds.py"], cache_dir=cache_dir)
    assert named is not None and named.files_read == 2  # the target, and the link to it
    whole = index_repository(repo, cache_dir=tmp_path / "fresh", history=None)
    assert whole.cache_dir is not None
    assert _rows(report.cache_dir) == _rows(whole.cache_dir)


def test_a_tree_of_more_links_than_are_looked_at_is_refreshed_whole(
    make_repo: Callable[..., Path], cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build_module, "_LINKS_MAX", 0)
    repo = make_repo(FILES)
    (repo / "app/alias.py").symlink_to("refunds.py")
    index_repository(repo, cache_dir=cache_dir, history=None)
    (repo / "app/refunds.py").write_text("def refund(total):\n    return 0\n")
    assert refresh_paths(repo, ["app/refunds.py"], cache_dir=cache_dir) is None


@pytest.mark.parametrize("bad", ["", "/etc/passwd", "../x.py", "app/../x.py", "app//x.py"])
def test_a_path_that_is_not_a_plain_relative_path_is_refused(
    indexed: tuple[Path, Path], cache_dir: Path, bad: str
) -> None:
    repo, _ = indexed
    assert refresh_paths(repo, [bad], cache_dir=cache_dir) is None
