"""``excerpt gate`` never runs what the repository names, never writes it, never echoes a secret.

RELIABILITY B6 #42-43 for the gate: a repository whose ``.git/config``, attributes and hooks
(in ``.git/hooks`` or under ``core.hooksPath``) point at scripts that each touch a marker file
outside it, gated every way (``--staged`` as text and JSON, ``--range``, ``--explain``, the MCP
tool ``gate_check``, ``python -m excerpt``): no marker, and every byte, mode and time under the
repository, ``.git`` included, unchanged. And canary secrets in fourteen provider formats,
made at run time and staged in source files, reach no output, no log line and no byte of the
cache (raw bytes of every file, every SQLite cell, zlib-decompressed, and every full-text
term), neither after the gate nor after ``excerpt index`` and ``excerpt pack`` on the same
repository.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from conftest import GIT_ENV, full_snapshot, git, git_commit_all, write_tree
from excerpt.cli import main
from excerpt.core.settings import INDEX_DB
from excerpt.evals.gate_suite import CANARY_KINDS, canary
from excerpt.index.tokens import terms
from excerpt.mcp import build_server
from hostile_git import arm

pytestmark = pytest.mark.timeout(60)

# --------------------------------------------------------------------------- fixtures

BASE = {
    "src/app/__init__.py": "",
    "src/app/core.py": "def add(a, b):\n    return a + b\n",
    "src/app/util.py": "def double(x):\n    return 2 * x\n",
    "tests/test_core.py": "from app.core import add\n\n\ndef test_add():\n    assert add(1, 2)\n",
    "README.md": "# app\n",
    ".gitattributes": "* diff=x filter=x\n",
}


def _base_repo(root: Path) -> Path:
    """Two commits (the second a tested feature, for ``--range``), then a staged change with a
    secret, a migration and a test, an unstaged edit, and a tracked file whose stat data in
    ``.git/index`` is stale (a plain ``git status`` would rewrite the index)."""
    repo = write_tree(root, BASE)
    git_commit_all(repo)
    write_tree(repo, {"src/app/feature.py": "def feature():\n    return 1\n",
                      "tests/test_feature.py": "from app.feature import feature\n"})  # fmt: skip
    git_commit_all(repo)
    rng = random.Random(7)
    write_tree(
        repo,
        {
            "src/app/core.py": f'KEY = "{canary("aws-access-key", rng)}"\n\n'
            "def add(a, b):\n    return a + b\n",
            "db/migrations/0002_more.sql": "ALTER TABLE t ADD COLUMN c INTEGER;\n",
        },
    )
    git(repo, "add", "-A")
    (repo / "src/app/util.py").write_text("def double(x):\n    return x + x\n", encoding="utf-8")
    later = (repo / ".git/index").stat().st_mtime_ns + 5_000_000_000
    os.utime(repo / "README.md", ns=(later, later))
    return repo


@pytest.fixture(params=["git-dir-hooks", "core-hooksPath"])
def hostile(request: pytest.FixtureRequest, tmp_path: Path, cache_dir: Path) -> tuple[Path, Path]:
    repo = _base_repo(tmp_path / "repo")
    return repo, arm(repo, tmp_path, hooks_path=request.param == "core-hooksPath")


def mcp_call(repo: Path, cache: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each ``(tool, arguments)`` through one in-memory MCP client session."""

    async def go() -> list[Any]:
        with anyio.fail_after(60):
            async with Client(build_server(repo, cache, tools="all")) as client:
                return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(go)


def everything(result: CallToolResult) -> str:
    return json.dumps(result.model_dump(mode="json"), ensure_ascii=False)


def run_module(
    *argv: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "excerpt", *argv],
        cwd=cwd, capture_output=True, text=True, env=env, timeout=30, check=False,
    )  # fmt: skip


# --------------------------------------------------------------------------- hostile config


@pytest.mark.reliability("B6.42")
@pytest.mark.reliability("B6.43", cases=2)
def test_the_gate_runs_nothing_the_repository_names_and_writes_nothing_in_it(
    hostile: tuple[Path, Path], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, markers = hostile
    before = full_snapshot(repo)
    r = str(repo)
    runs = [
        (["gate", "--staged", "--repo", r], 1),
        (["gate", "--staged", "--repo", r, "--json"], 1),
        (["gate", "--staged", "--repo", r, "--base", "HEAD~1", "--validate", "pytest"], 1),
        (["gate", "--range", "HEAD~1..HEAD", "--repo", r], 0),
        (["gate", "--range", "HEAD~1...HEAD", "--repo", r, "--json"], 0),
        (["gate", "--explain", "--repo", r], 0),
        (["gate", "--explain", "--repo", r, "--json"], 0),
    ]
    for argv, code in runs:
        assert main(argv) == code, (argv, capsys.readouterr())
    out = capsys.readouterr().out
    assert "FAIL" in out and "Secret safety" in out  # the runs did check the change
    results = mcp_call(
        repo,
        cache_dir,
        [
            ("gate_check", {}),
            ("gate_check", {"range": "HEAD~1..HEAD", "format": "json"}),
        ],
    )
    assert results[0].content[0].text.startswith("excerpt gate: FAIL"), everything(results[0])
    assert results[1].structured_content["status"] == "PASS", everything(results[1])
    env = {**os.environ, "EXCERPT_CACHE_DIR": str(cache_dir)}
    proc = run_module("gate", "--staged", "--json", env=env, cwd=repo)  # from inside the repo
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["status"] == "FAIL"
    assert sorted(p.name for p in markers.iterdir()) == []
    assert full_snapshot(repo) == before


def test_the_hostile_setup_does_fire_under_plain_git(
    hostile: tuple[Path, Path], tmp_path: Path
) -> None:
    """Control: the armed repository runs its scripts under ordinary git, so the test above
    can fail."""
    repo, markers = hostile
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PAGER"}
    env.update(GIT_ENV)

    def run(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=False)

    run("status")  # core.fsmonitor, filter.x.clean, post-index-change
    run("diff", "--cached")  # diff.external
    run("diff", "--cached", "--no-ext-diff")  # diff.x.textconv
    run("commit", "-q", "-m", "control")  # pre-commit, reference-transaction
    fired = {p.name for p in markers.iterdir()}
    expected = {"core.fsmonitor", "filter.x.clean", "diff.external", "diff.x.textconv",
                "hook.pre-commit", "hook.reference-transaction"}  # fmt: skip
    assert expected <= fired, fired


# --------------------------------------------------------------------------- canaries

CANARY_SEED = 15


def _canaries() -> dict[str, str]:
    rng = random.Random(CANARY_SEED)
    return {kind: canary(kind, rng) for kind in CANARY_KINDS}


def _assignment(kind: str, value: str) -> str:
    name = kind.upper().replace("-", "_")
    if "\n" in value:
        return f'{name} = """\n{value}\n"""\n'
    return f'{name} = "{value}"\n'


def _fragments(value: str) -> list[str]:
    """What must not appear: the value, and its alphanumeric runs of 12+ characters."""
    return [value, *re.findall(r"[A-Za-z0-9]{12,}", value)]


@pytest.fixture
def canary_repo(tmp_path: Path) -> tuple[Path, dict[str, str], dict[str, str]]:
    """A repository whose last commit adds half the canaries (one source file each) and whose
    staged change adds the other half; returns ``(repo, canaries, files without them)``."""
    values = _canaries()
    kinds = list(values)
    committed, staged = kinds[::2], kinds[1::2]
    repo = write_tree(tmp_path / "repo", BASE)
    git_commit_all(repo)
    plain: dict[str, str] = {}
    for group in (committed, staged):
        files = {}
        for kind in group:
            path = f"src/app/{kind.replace('-', '_')}.py"
            files[path] = (
                f"import os\n\n{_assignment(kind, values[kind])}\n\ndef use():\n    return 1\n"
            )
            plain[path] = files[path].replace(values[kind], "")
        write_tree(repo, files)
        git(repo, "add", "-A")
        if group is committed:
            git(repo, "commit", "-q", "-m", "keys")
    for value in values.values():
        assert any(len(f) >= 12 for f in _fragments(value)[1:]), "a canary with no long run"
    return repo, values, plain


def _leaks(text: str, values: dict[str, str]) -> list[str]:
    low = text.lower()
    return [kind for kind, v in values.items() if any(f.lower() in low for f in _fragments(v))]


def _db_text(path: Path, scratch: Path) -> tuple[str, set[str]]:
    """Every cell of every table of a copy (made under ``scratch``) of the SQLite file at
    ``path`` (blobs as bytes and, when they are zlib streams, decompressed), and every term of
    its full-text tables' vocabulary."""
    scratch.mkdir(exist_ok=True)
    copy = scratch / f"{len(list(scratch.iterdir()))}-{path.name}"
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{path}{suffix}").exists():
            shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
    parts: list[str] = []
    vocabulary: set[str] = set()
    with sqlite3.connect(copy) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for cell in row:
                    if isinstance(cell, bytes):
                        parts.append(cell.decode("latin-1"))
                        with contextlib.suppress(zlib.error):
                            parts.append(zlib.decompress(cell).decode("utf-8", "replace"))
                    elif cell is not None:
                        parts.append(str(cell))
        fts = [t for t in tables if f"{t}_data" in tables and f"{t}_idx" in tables]
        for table in fts:
            db.execute(f"CREATE VIRTUAL TABLE temp.v_{table} USING fts5vocab(main, {table}, row)")
            vocabulary |= {r[0] for r in db.execute(f"SELECT term FROM temp.v_{table}")}
    return "\n".join(parts), vocabulary


def _cache_leaks(
    cache: Path, values: dict[str, str], allowed: set[str], scratch: Path
) -> list[str]:
    """What of ``values`` the cache holds anywhere, and full-text terms not in ``allowed``."""
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert any(p.name == "gate-salt" for p in files)
    problems = []
    for path in files:
        if kind := _leaks(path.read_bytes().decode("latin-1"), values):
            problems.append(f"{path.name}: raw bytes hold {kind}")
    terms_seen = 0
    for db in [p for p in files if p.name.endswith(".sqlite3")]:
        text, vocabulary = _db_text(db, scratch)
        if kind := _leaks(text, values):
            problems.append(f"{db.name}: cells hold {kind}")
        terms_seen += len(vocabulary)
        foreign = sorted(vocabulary - allowed)
        if foreign:
            problems.append(f"{db.name}: terms from nowhere but a secret: {foreign[:10]}")
    assert terms_seen, "no full-text term anywhere: the check would see nothing"
    return problems


def _allowed_terms(plain: dict[str, str]) -> set[str]:
    """Every term the fixture's files give once their secrets are taken out (paths too)."""
    texts = [*BASE.values(), *plain.values(), *BASE, *plain, ".gitattributes", "README.md"]
    texts += ["fixture", "keys"]  # the commit messages (the history signal's terms)
    return {t for text in texts for t in terms(text)} | {
        p for text in texts for p in re.findall(r"[a-z0-9]+", text.lower())
    }


@pytest.mark.reliability("B3.25", cases=70)
def test_canary_secrets_reach_no_output_log_or_cache_byte(
    canary_repo: tuple[Path, dict[str, str], dict[str, str]],
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    repo, values, plain = canary_repo
    caplog.set_level(logging.DEBUG)
    r = str(repo)
    seen: list[str] = []
    for argv in (
        ["gate", "--staged", "--repo", r],
        ["gate", "--staged", "--repo", r, "--json"],
        ["gate", "--staged", "--base", "HEAD~1", "--repo", r, "--json"],
        ["gate", "--range", "HEAD~1..HEAD", "--repo", r],
        ["gate", "--range", "HEAD~1..HEAD", "--repo", r, "--json"],
    ):
        assert main(argv) == 1, argv
        out, err = capsys.readouterr()
        seen += [out, err]
    both = json.loads(seen[4])
    secrets = next(c for c in both["checks"] if c["id"] == "secrets")
    found = {d["path"] for d in secrets["details"] if d.get("severity") == "fail"}
    assert len(found) == len(values), secrets  # every canary was caught, in its own file
    results = mcp_call(
        repo,
        cache_dir,
        [
            ("gate_check", {}),
            ("gate_check", {"format": "json"}),
            ("gate_check", {"range": "HEAD~1..HEAD", "format": "json"}),
        ],
    )
    assert results[0].content[0].text.startswith("excerpt gate: FAIL")
    assert all(res.structured_content["status"] == "FAIL" for res in results[1:])
    seen += [everything(res) for res in results]
    env = {**os.environ, "EXCERPT_CACHE_DIR": str(cache_dir)}
    proc = run_module("gate", "--staged", "--base", "HEAD~1", "--repo", r, env=env)
    assert proc.returncode == 1, proc.stderr
    seen += [proc.stdout, proc.stderr, caplog.text]
    assert [k for text in seen if (k := _leaks(text, values))] == []
    allowed = _allowed_terms(plain)
    assert _cache_leaks(cache_dir, values, allowed, tmp_path / "copies") == []

    # the index and the pack, on the same repository and cache, hold none either
    assert main(["index", "--repo", r, "--json"]) == 0
    task = "use the keys in " + " ".join(plain)
    assert main(["pack", task, "--repo", r, "--json"]) == 0
    assert main(["pack", task, "--repo", r, "--changed-from-git"]) == 0
    out, err = capsys.readouterr()
    assert "src/app/" in out  # the pack did serve the files, without their secret lines
    assert _leaks(out + err + caplog.text, values) == []
    assert _cache_leaks(cache_dir, values, allowed, tmp_path / "copies") == []


def test_the_leak_checks_find_a_canary_where_there_is_one(tmp_path: Path) -> None:
    """Control: the same checks see a canary in a file, in a zlib blob in SQLite, and as a
    full-text term, so an empty result above means none was there."""
    values = _canaries()
    value = values["github-token"]
    assert _leaks(f"x {value.upper()} y", values) == ["github-token"]
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "gate-salt").write_bytes(os.urandom(32))
    with sqlite3.connect(cache / INDEX_DB) as db:
        db.execute("CREATE TABLE t(b BLOB)")
        db.execute("INSERT INTO t VALUES (?)", (zlib.compress(values["npm-token"].encode()),))
        db.execute("CREATE VIRTUAL TABLE lexicon USING fts5(body, content='', tokenize='ascii')")
        db.execute("INSERT INTO lexicon(rowid, body) VALUES (1, ?)", ("plain words qzpkvwtm",))
    problems = _cache_leaks(cache, values, {"plain", "words"}, tmp_path / "copies")
    assert any("cells hold ['npm-token']" in p for p in problems), problems
    assert any("qzpkvwtm" in p for p in problems), problems


@pytest.mark.reliability("T3")
def test_a_cache_directory_inside_the_repository_is_refused_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SPEC §9: a cache directory that resolves inside the repository is refused. The gate
    writes its fingerprint salt and (for source changes) the index into the cache, so it
    must refuse before writing either."""
    repo = _base_repo(tmp_path / "repo")
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(repo / ".excerpt-cache"))
    before = full_snapshot(repo)
    code = main(["gate", "--staged", "--repo", str(repo)])
    capsys.readouterr()
    assert code in (2, 3)
    assert not (repo / ".excerpt-cache").exists()
    assert full_snapshot(repo) == before
