"""``--include/--exclude``, the include/exclude settings and ``.excerptignore`` in discovery."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from excerpt.cli import main
from excerpt.core.settings import Limits, repo_cache_dir
from excerpt.discover.filters import FilterOverrides, PathFilter, overriding_filters
from excerpt.discover.filters import repository_filter as filter_of
from excerpt.discover.walk import discover
from excerpt.index.build import index_repository
from excerpt.index.store import IndexStore

TREE = {
    "app/refund.py": "def refund(order):\n    return order\n",
    "app/util.py": "def helper():\n    return 1\n",
    "vendor/lib/refund_vendor.py": "def refund_vendor():\n    pass\n",
    "docs/guide.md": "# Refunds\n",
    "gen/gen.py": "GENERATED = 1\n",
    "gen/keep.py": "KEEP = 1\n",
    "deep/a/b/c.log": "log\n",
}


def indexed(repo: Path, cache: Path) -> list[str]:
    store = IndexStore.open(repo_cache_dir(repo.resolve(), cache))
    try:
        return sorted(p for (p,) in store.conn.execute("SELECT path FROM files"))
    finally:
        store.close()


def index_stats(capsys: pytest.CaptureFixture[str], repo: Path, *flags: str) -> dict[str, Any]:
    assert main(["index", "--repo", str(repo), "--json", "--stats", *flags]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def excluded(doc: dict[str, Any]) -> set[str]:
    return {o["path"] for o in doc["omitted_paths"] if o["reason"] == "excluded"}


def kept_by(repo: Path, rules: PathFilter) -> set[str]:
    return {c.path for c in discover(repo.resolve(), Limits(), rules).candidates}


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_exclude_flags_omit_matching_files_as_excluded(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str], use_git: bool
) -> None:
    repo = make_repo(TREE, use_git=use_git)
    doc = index_stats(capsys, repo, "--exclude", "vendor/", "--exclude", "*.md")
    assert excluded(doc) == {"vendor/lib/refund_vendor.py", "docs/guide.md"}
    assert doc["omitted"]["excluded"] == 2
    assert "vendor/lib/refund_vendor.py" not in indexed(repo, cache_dir)


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_include_keeps_only_matching_paths(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str], use_git: bool
) -> None:
    repo = make_repo(TREE, use_git=use_git)
    index_stats(capsys, repo, "--include", "app/", "--include", "*.log")
    assert indexed(repo, cache_dir) == ["app/refund.py", "app/util.py", "deep/a/b/c.log"]


# gitignore semantics, each case (patterns, paths of TREE that remain)
EXCERPTIGNORE = [
    pytest.param("gen/\n", {"gen/gen.py", "gen/keep.py"}, id="directory"),
    pytest.param("gen/*\n!gen/keep.py\n", {"gen/gen.py"}, id="negation"),
    pytest.param("/refund.py\n", set(), id="anchored-matches-only-at-root"),
    pytest.param("refund.py\n", {"app/refund.py"}, id="unanchored-matches-at-any-depth"),
    pytest.param("deep/**/*.log\n", {"deep/a/b/c.log"}, id="double-star"),
    pytest.param("# a comment\n\n*.md\n", {"docs/guide.md"}, id="comments-and-blanks"),
    pytest.param("app/*.py\n", {"app/refund.py", "app/util.py"}, id="single-level-star"),
]


@pytest.mark.parametrize(("patterns", "dropped"), EXCERPTIGNORE)
@pytest.mark.parametrize("use_git", [True, False], ids=["git", "no-git"])
def test_excerptignore_follows_gitignore_syntax(
    make_repo: Any, patterns: str, dropped: set[str], use_git: bool
) -> None:
    repo = make_repo({**TREE, ".excerptignore": patterns}, use_git=use_git)
    found = discover(repo.resolve(), Limits())
    assert {o.path for o in found.omitted if o.reason == "excluded"} == dropped
    assert {c.path for c in found.candidates} == set(TREE) - dropped | {".excerptignore"}


def test_an_exclude_setting_can_reinclude_what_excerptignore_drops(make_repo: Any) -> None:
    repo = make_repo(
        {**TREE, ".excerptignore": "gen/*\n", "excerpt.toml": "exclude = ['!gen/keep.py']\n"}
    )
    assert "gen/keep.py" in kept_by(repo, filter_of(repo.resolve()))
    assert "gen/gen.py" not in kept_by(repo, filter_of(repo.resolve()))


def test_excerptignore_still_applies_when_a_flag_replaces_the_exclude_setting(
    make_repo: Any,
) -> None:
    repo = make_repo({**TREE, ".excerptignore": "docs/\n", "excerpt.toml": "exclude = ['app/']\n"})
    rules = filter_of(repo.resolve(), overrides=FilterOverrides(exclude=("vendor/",)))
    kept = kept_by(repo, rules)
    assert "app/refund.py" in kept  # the setting was replaced by the flag
    assert "docs/guide.md" not in kept and "vendor/lib/refund_vendor.py" not in kept


def test_a_file_excluded_now_leaves_the_index_and_comes_back_when_the_glob_goes(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(TREE)
    index_stats(capsys, repo)
    assert "app/util.py" in indexed(repo, cache_dir)
    doc = index_stats(capsys, repo, "--exclude", "app/util.py")
    assert doc["files_removed"] == 1
    assert "app/util.py" not in indexed(repo, cache_dir)
    assert excluded(doc) == {"app/util.py"}
    doc = index_stats(capsys, repo)
    assert "app/util.py" in indexed(repo, cache_dir)
    assert excluded(doc) == set()
    assert doc["files_read"] == 1  # only the file that came back


def test_an_edited_excerptignore_takes_effect_on_the_next_refresh(
    make_repo: Any, cache_dir: Path
) -> None:
    repo = make_repo(TREE)
    index_repository(repo, cache_dir=cache_dir)
    (repo / ".excerptignore").write_text("vendor/\n", encoding="utf-8")
    index_repository(repo, cache_dir=cache_dir)
    assert not any(p.startswith("vendor/") for p in indexed(repo, cache_dir))


def test_a_pack_lists_a_named_excluded_path_as_excluded_and_never_serves_it(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(TREE)
    task = "fix refund_vendor in vendor/lib/refund_vendor.py"
    argv = ["pack", "--repo", str(repo), task, "--format", "json", "--exclude", "vendor/"]
    assert main(argv) == 0
    pack = json.loads(capsys.readouterr().out)
    assert all(not i["path"].startswith("vendor/") for i in pack["items"])
    assert {"path": "vendor/lib/refund_vendor.py", "reason": "excluded"} in pack["omitted"]


def test_the_pack_and_plan_commands_take_the_filter_flags(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(TREE)
    argv = ["plan", "--repo", str(repo), "refund", "--json", "--include", "vendor/"]
    assert main(argv) == 0
    plan = json.loads(capsys.readouterr().out)
    assert {c["path"] for c in plan["candidates"]} == {"vendor/lib/refund_vendor.py"}


@pytest.mark.parametrize(
    ("flag", "glob", "message"),
    [
        ("--exclude", "", "--exclude: a glob must not be empty"),
        ("--include", "#x", "--include: '#x' is a comment"),
        ("--exclude", "a\\", "--exclude: 'a\\\\' is not a valid gitignore-style glob"),
    ],
    ids=["empty", "comment", "trailing-backslash"],
)
@pytest.mark.parametrize("command", ["index", "pack", "config"])
def test_a_malformed_glob_flag_is_a_usage_error_naming_the_flag(
    make_repo: Any,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    flag: str,
    glob: str,
    message: str,
    command: str,
) -> None:
    repo = make_repo(TREE)
    task = ["refund"] if command == "pack" else []
    assert main([command, "--repo", str(repo), *task, flag, glob]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.reliability("B1.1")
def test_an_excerptignore_symlinked_out_of_the_repository_is_refused(
    make_repo: Any, cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "ignore"
    outside.write_text("app/\n", encoding="utf-8")
    repo = make_repo(TREE)
    (repo / ".excerptignore").symlink_to(outside)
    assert main(["index", "--repo", str(repo)]) == 2
    assert ".excerptignore is not read (symlink_outside_root)" in capsys.readouterr().err


def test_an_excerptignore_line_that_is_no_pattern_is_a_usage_error_with_its_line(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({**TREE, ".excerptignore": "gen/\nbad\\\n"})
    assert main(["index", "--repo", str(repo)]) == 2
    assert ".excerptignore:2: not a valid gitignore pattern" in capsys.readouterr().err


def test_excluded_files_spend_no_discovery_limit(make_repo: Any) -> None:
    repo = make_repo(TREE)
    found = discover(repo.resolve(), Limits(max_files=2), PathFilter(include=("app/",)))
    assert {c.path for c in found.candidates} == {"app/refund.py", "app/util.py"}
    assert not found.truncated
    assert {o.reason for o in found.omitted} == {"excluded"}


def test_flags_apply_only_inside_their_block(make_repo: Any) -> None:
    repo = make_repo(TREE).resolve()
    with overriding_filters(exclude=["app/"]):
        assert "app/util.py" not in kept_by(repo, filter_of(repo))
    assert "app/util.py" in kept_by(repo, filter_of(repo))


PARTITION = [
    pytest.param((), (), ["a.py", "b/c.py"], [], id="no-globs-keep-all"),
    pytest.param(("b/",), (), ["b/c.py"], ["a.py"], id="include"),
    pytest.param((), ("*.py", "!a.py"), ["a.py"], ["b/c.py"], id="exclude-with-negation"),
    pytest.param(("*.py",), ("b/",), ["a.py"], ["b/c.py"], id="include-then-exclude"),
]


@pytest.mark.parametrize(("include", "exclude", "kept", "dropped"), PARTITION)
def test_a_filter_splits_a_listing_into_kept_and_excluded_paths(
    include: tuple[str, ...], exclude: tuple[str, ...], kept: list[str], dropped: list[str]
) -> None:
    rules = PathFilter(include=include, exclude=exclude)
    listing = [("a.py", True), ("b/c.py", False), ("a.py", True)]
    got_kept, got_dropped = rules.partition(listing)
    assert sorted({p for p, _ in got_kept}) == kept
    assert got_dropped == dropped  # each path once


@pytest.mark.parametrize(("patterns", "dropped"), EXCERPTIGNORE)
@pytest.mark.reliability("T4")
def test_excerptignore_drops_what_git_would_ignore_with_the_same_lines(
    make_repo: Any, patterns: str, dropped: set[str]
) -> None:
    repo = make_repo({**TREE, ".gitignore": patterns}, use_git=False)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, capture_output=True)
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    by_git = set(TREE) - set(listed)
    rules = PathFilter(exclude=tuple(patterns.splitlines()))
    assert {p for p in TREE if rules.excludes(p)} == by_git == dropped
