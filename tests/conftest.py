"""Shared fixtures: repositories built at test time, an isolated cache, a write audit; and
the reliability report (``--reliability-report=PATH``, read by scripts/reliability_report.py).

The fixture repositories' contents live in helper modules (``trees``: the small shop;
``pack_repos``: the three realistic repositories of the pack tests); the fixtures here write
and commit them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
import subprocess
from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

import reliability_rows
from pack_repos import FIXTURES, PY_SHOP
from trees import SHOP

settings.register_profile("ci", max_examples=200, derandomize=True, deadline=None)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("nightly", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Create ``files`` (relative POSIX path → text or bytes) under ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
    )


def git_commit_all(root: Path) -> None:
    """``git init`` (if needed), add everything, commit with fixed dates."""
    if not (root / ".git").exists():
        git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fixture")


def tree_snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """``{path: (size, mtime_ns, sha256)}`` of every regular file under ``root``, ``.git`` too."""
    out: dict[str, tuple[int, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if not path.is_symlink() and path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns, digest)
    return out


Snapshot = tuple[dict[str, tuple[int, int, str]], dict[str, tuple[Any, ...]]]


def full_snapshot(root: Path) -> Snapshot:
    """File bytes and mtimes (``tree_snapshot``), plus every entry's type, mode, mtime, ctime.

    ``ctime`` cannot be set from user space, so even a write whose mtime was put back shows.
    Directories are included, so a file created and removed again still shows (dir mtime).
    """
    entries: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in [".", *dirnames, *filenames]:
            path = Path(dirpath) / name
            st = path.lstat()
            link = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
            key = str(path.relative_to(root))
            entries[key] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, link)
    return tree_snapshot(root), entries


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache directory, also exported as ``EXCERPT_CACHE_DIR``."""
    path = tmp_path / "cache"
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(path))
    return path


HANDOFF_CLOCK = "2026-01-02T03:04:05Z"


@pytest.fixture
def handoff_clock(monkeypatch: pytest.MonkeyPatch) -> str:
    """The time every handoff the test creates is stamped with (``CLOCK_ENV``)."""
    from excerpt.handoff import CLOCK_ENV  # here: this module imports no product code

    monkeypatch.setenv(CLOCK_ENV, HANDOFF_CLOCK)
    return HANDOFF_CLOCK


@pytest.fixture
def make_repo(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Factory: ``make_repo(files, git=True, name="repo")`` → a fixture repository path."""

    def make(files: Mapping[str, str | bytes], *, use_git: bool = True, name: str = "repo") -> Path:
        root = write_tree(tmp_path / name, files)
        if use_git:
            git_commit_all(root)
        return root

    yield make


@pytest.fixture
def repo(request: pytest.FixtureRequest, make_repo: Callable[..., Path]) -> Path:
    """The calling module's ``FILES``, written and committed (a fresh copy per test)."""
    files: Mapping[str, str | bytes] = request.module.FILES
    return make_repo(files)


@pytest.fixture(scope="module")
def committed_shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``trees.SHOP`` committed once for the module, and a cache directory of its own beside
    it (outside the repository): ``(repo, cache)``. Read-only for the tests that share it."""
    base = tmp_path_factory.mktemp("shop")
    root = write_tree(base / "shop", SHOP)
    git_commit_all(root)
    return root, base / "cache"


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three repositories of ``pack_repos``, committed once for the module, by name;
    read-only for the tests that share them."""
    base = tmp_path_factory.mktemp("fixtures")
    out = {}
    for name, files in FIXTURES.items():
        root = write_tree(base / name, files)
        git_commit_all(root)
        out[name] = root
    return out


@pytest.fixture
def py_shop(make_repo: Callable[..., Path]) -> Path:
    """A private copy of ``pack_repos.PY_SHOP``, committed, for tests that edit or stage files."""
    return make_repo(PY_SHOP, name="shop")


# -- the reliability report -----------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reliability-report",
        metavar="PATH",
        default=None,
        help="write the input classes the run covered, with their outcomes, as JSON to PATH",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--reliability-report")
    if path is not None:
        config.pluginmanager.register(ReliabilityRecorder(Path(path)), "reliability-recorder")


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """A reliability marker naming no row (or an id no instance has) fails its module's
    collection, whether or not a report is asked for."""
    report = yield
    if report.passed:
        items = [node for node in report.result if isinstance(node, pytest.Item)]
        problems = reliability_rows.marker_problems(items)
        if problems:
            report.outcome = "failed"
            report.longrepr = "\n".join(problems)
            report.result = []
    return report


class ReliabilityRecorder:
    """Which tagged items ran, and how each ended; written as JSON when the session ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, list[tuple[str, int]]] = {}
        self.outcomes: dict[str, tuple[str, str]] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:  # after deselection: what this run will try
            entries = reliability_rows.entries_for(item)
            if entries:
                self.entries[item.nodeid] = entries

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.nodeid not in self.entries:
            return
        known = self.outcomes.get(report.nodeid, ("not run", ""))[0]
        if report.failed:  # in any phase, teardown included
            self.outcomes[report.nodeid] = ("failed", "")
        elif known in ("failed", "skipped"):
            return
        elif report.skipped:
            self.outcomes[report.nodeid] = ("skipped", _skip_reason(report))
        elif report.when == "call":
            self.outcomes[report.nodeid] = ("passed", "")

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        tests = [
            {"nodeid": nodeid, "row": row, "cases": cases, "outcome": outcome, "reason": reason}
            for nodeid, entries in self.entries.items()
            for row, cases in entries
            for outcome, reason in [self.outcomes.get(nodeid, ("not run", ""))]
        ]
        doc: dict[str, Any] = {
            "format": "excerpt.reliability/v1",
            "groups": [{"id": k, "title": v} for k, v in reliability_rows.GROUPS.items()],
            "rows": [{**dataclasses.asdict(r), "group": r.group} for r in reliability_rows.ROWS],
            "tests": sorted(tests, key=lambda t: (t["row"], t["nodeid"])),
        }
        self.path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _skip_reason(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return f"expected to fail: {report.wasxfail}".rstrip(": ")
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")
