"""What a new user meets when something is wrong: one-line errors with the documented exit
code (SPEC §2), JSON errors under ``--json`` (SPEC §11), ``unreadable`` omissions (SPEC §3.1)
instead of crashes, and hints that can be acted on.

Permission cases need a process that permission bits apply to; root ignores them. When the
tests run as root, the CLI runs in a subprocess without the two capabilities that let root
ignore them (``setpriv`` dropping ``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH``): that
works wherever the checkout is, ``/root`` included. Where that cannot be done it runs as
``nobody`` (``setpriv --reuid``, or ``runuser``), which needs the interpreter, the checkout and
its virtualenv to be readable by ``nobody``; a probe checks that the restricted process really
is refused a mode-000 file and imports excerpt from the same standard library. When no way
works the test is skipped with the reason, and under CI (``CI`` set) it fails with it instead.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import excerpt.errors
from conftest import git_commit_all, write_tree
from excerpt.cli import main
from excerpt.cli.errors_out import wants_json
from excerpt.core import git as gitmod
from excerpt.core.settings import INDEX_DB
from excerpt.discover.reader import failure_reason
from excerpt.errors import GitFault, UsageError
from excerpt.index import build
from excerpt.index.build import index_repository
from excerpt.index.graph import load_graph
from excerpt_bench.bench import load_tasks

ROOT = Path(__file__).resolve().parents[1]

# -- running the CLI where permission bits apply --------------------------------------------

_DROP = "-dac_override,-dac_read_search"
_PROBE = """
import os, sys
import excerpt.cli  # the package and its dependencies load
base = sys.argv[1]
os.listdir(base)
try:
    open(os.path.join(base, "locked"), "rb").close()
except PermissionError:
    pass
else:
    sys.exit("permission bits are not enforced for this process")
print(os.__file__)
"""


@dataclass(frozen=True, slots=True)
class Restricted:
    """How to start a process that permission bits apply to."""

    prefix: tuple[str, ...]  # words before the interpreter
    uid: int | None  # the fixture trees are handed to this user (None: as created)
    how: str

    def own(self, path: Path) -> None:
        """Hand ``path`` (recursively) to the restricted user, so it owns what it reads."""
        if self.uid is None:
            return
        for dirpath, dirnames, filenames in os.walk(path):
            os.chown(dirpath, self.uid, -1, follow_symlinks=False)
            for name in dirnames + filenames:
                os.chown(os.path.join(dirpath, name), self.uid, -1, follow_symlinks=False)


def _strategies() -> list[Restricted]:
    if os.geteuid() != 0:
        return [Restricted((), None, "the test user (not root)")]
    out = []
    if shutil.which("setpriv"):
        out.append(
            Restricted(
                ("setpriv", f"--inh-caps={_DROP}", f"--bounding-set={_DROP}"),
                None,
                "root without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH (setpriv)",
            )
        )
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        return out
    if shutil.which("setpriv"):
        ids = (f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups")
        out.append(Restricted(("setpriv", *ids), nobody.pw_uid, "user nobody (setpriv)"))
    elif shutil.which("runuser"):
        out.append(Restricted(("runuser", "-u", "nobody", "--"), nobody.pw_uid, "nobody"))
    return out


def _probe(way: Restricted) -> str | None:
    """None when ``way`` gives a working, restricted interpreter; else why not."""
    base = Path(tempfile.mkdtemp(prefix="excerpt-probe-", dir=_tmp_base()))
    try:
        base.chmod(0o755)
        locked = base / "locked"
        locked.write_text("x", encoding="utf-8")
        locked.chmod(0)
        way.own(base)
        argv = [*way.prefix, sys.executable, "-c", _PROBE, str(base)]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        except OSError as exc:
            return f"{way.how}: {exc}"
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["exit " + str(proc.returncode)])[-1]
            return f"{way.how}: {last}"
        if proc.stdout.strip() != os.__file__:
            return (
                f"{way.how}: the interpreter loads another standard library"
                f" ({proc.stdout.strip()}, not {os.__file__}): its home is not readable"
            )
        return None
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _tmp_base() -> str:
    # /tmp, not $TMPDIR or pytest's 0700 tmp_path: nobody must be able to reach the fixtures
    return "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()


@functools.cache
def _restricted() -> Restricted | str:
    reasons = []
    for way in _strategies():
        problem = _probe(way)
        if problem is None:
            return way
        reasons.append(problem)
    needs = (
        "run as root with setpriv (util-linux) and CAP_SETPCAP, or make the interpreter, the"
        " checkout and its .venv readable by nobody (chmod o+rx on every directory above them)"
    )
    return (
        "no process that permission bits apply to: "
        + "; ".join(reasons or ["none"])
        + (f". To run these tests: {needs}")
    )


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"permission test cannot run under CI: {reason}")
    pytest.skip(reason)


@pytest.fixture
def restricted() -> Restricted:
    way = _restricted()
    if isinstance(way, str):
        _unavailable(way)
        raise AssertionError("unreachable")
    return way


@pytest.fixture
def perm_base() -> Iterator[Path]:
    """A directory every user can traverse, removed afterwards whatever its modes became."""
    base = Path(tempfile.mkdtemp(prefix="excerpt-perm-", dir=_tmp_base()))
    base.chmod(0o755)
    try:
        yield base
    finally:
        for dirpath, dirnames, _ in os.walk(base):
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o755)
        subprocess.run(["chmod", "-R", "u+rwX", str(base)], check=False, capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Ran:
    code: int
    out: str
    err: str


RunCli = Callable[..., Ran]


@pytest.fixture
def run_restricted(restricted: Restricted, perm_base: Path) -> RunCli:
    """Run ``excerpt ARGS…`` as the restricted process, its cache under ``perm_base``."""
    cache = perm_base / "cache"
    cache.mkdir(mode=0o755)

    def run(*args: str, cache_dir: Path | None = None) -> Ran:
        restricted.own(perm_base)
        env = {
            **os.environ,
            "HOME": str(perm_base),
            "EXCERPT_CACHE_DIR": str(cache_dir or cache),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        proc = subprocess.run(
            [*restricted.prefix, sys.executable, "-m", "excerpt", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=perm_base,
            timeout=120,
            check=False,
        )
        return Ran(proc.returncode, proc.stdout, proc.stderr)

    return run


def _one_line_error(ran: Ran, code: int) -> str:
    assert ran.code == code, ran
    assert "Traceback" not in ran.err
    assert ran.err.startswith("Error: ") and ran.err.count("\n") == 1, ran.err
    return ran.err


def _json_error(out: str, err: str) -> dict[str, Any]:
    assert out.count("\n") == 1 and out.endswith("\n"), out
    assert err == out, (out, err)
    doc: dict[str, Any] = json.loads(out)
    assert list(doc) == ["error", "code", "exit"]
    return doc


def _repo(base: Path, use_git: bool) -> Path:
    repo = write_tree(base / "r", {"a.py": "def alpha():\n    return 1\n", "b.py": "B = 2\n"})
    if use_git:
        git_commit_all(repo)
    return repo


GIT_IDS = [pytest.param(False, id="walk"), pytest.param(True, id="git")]


# -- partly unreadable input: omitted as unreadable, the rest served ------------------------


@pytest.mark.parametrize("use_git", GIT_IDS)
@pytest.mark.reliability("B1.8")
def test_an_unreadable_subdirectory_is_omitted_and_the_rest_is_indexed(
    run_restricted: RunCli, perm_base: Path, use_git: bool
) -> None:
    repo = _repo(perm_base, use_git)
    write_tree(repo, {"sub/hidden.py": "H = 1\n"})  # untracked in the git variant
    (repo / "sub").chmod(0)
    ran = run_restricted("index", "--repo", str(repo), "--json", "--stats")
    assert ran.code == 0, ran
    doc = json.loads(ran.out)
    assert doc["files_indexed"] == 2
    assert {"path": "sub/", "reason": "unreadable"} in doc["omitted_paths"]
    assert doc["omitted"] == {"unreadable": 1}


@pytest.mark.parametrize("use_git", GIT_IDS)
@pytest.mark.reliability("B1.8")
def test_an_unreadable_file_is_omitted_as_unreadable_not_as_not_regular_file(
    run_restricted: RunCli, perm_base: Path, use_git: bool
) -> None:
    repo = _repo(perm_base, use_git)
    (repo / "b.py").chmod(0)
    ran = run_restricted("index", "--repo", str(repo), "--json", "--stats")
    assert ran.code == 0, ran
    doc = json.loads(ran.out)
    assert doc["omitted_paths"] == [{"path": "b.py", "reason": "unreadable"}]
    assert doc["files_indexed"] == 1


@pytest.mark.reliability("B1.8")
def test_a_tracked_file_in_an_unreadable_directory_is_omitted_as_unreadable(
    run_restricted: RunCli, perm_base: Path
) -> None:
    repo = write_tree(perm_base / "r", {"a.py": "A = 1\n", "pkg/t.py": "T = 1\n"})
    git_commit_all(repo)
    (repo / "pkg").chmod(0)
    ran = run_restricted("index", "--repo", str(repo), "--json", "--stats")
    assert ran.code == 0, ran
    omitted = {(o["path"], o["reason"]) for o in json.loads(ran.out)["omitted_paths"]}
    assert ("pkg/t.py", "unreadable") in omitted


@pytest.mark.reliability("B1.8")
def test_a_pack_naming_an_unreadable_file_lists_it_as_unreadable(
    run_restricted: RunCli, perm_base: Path
) -> None:
    repo = _repo(perm_base, use_git=False)
    (repo / "b.py").chmod(0)
    ran = run_restricted("pack", "--repo", str(repo), "--format", "json", "fix alpha in b.py")
    assert ran.code == 0, ran
    pack = json.loads(ran.out)
    assert {"path": "b.py", "reason": "unreadable"} in pack["omitted"]
    assert [i["path"] for i in pack["items"]] == ["a.py"]


# -- wholly unusable: one line, exit 3 ------------------------------------------------------


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.reliability("T3")
def test_an_unreadable_repository_is_a_one_line_error_with_exit_3(
    run_restricted: RunCli, perm_base: Path, as_json: bool
) -> None:
    repo = _repo(perm_base, use_git=False)
    repo.chmod(0)
    ran = run_restricted("index", "--repo", str(repo), *(["--json"] if as_json else []))
    if as_json:
        doc = _json_error(ran.out, ran.err)
        assert doc["code"] == "repo_unavailable" and doc["exit"] == 3 == ran.code
        assert "not readable" in doc["error"]
    else:
        assert "repository is not readable" in _one_line_error(ran, 3)


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.reliability("T3")
def test_a_cache_dir_inside_a_read_only_directory_is_a_one_line_error_with_exit_3(
    run_restricted: RunCli, perm_base: Path, as_json: bool
) -> None:
    repo = _repo(perm_base, use_git=False)
    locked = perm_base / "ro"
    locked.mkdir()
    locked.chmod(0o555)
    args = ["index", "--repo", str(repo), *(["--json"] if as_json else [])]
    ran = run_restricted(*args, cache_dir=locked / "cache")
    if as_json:
        doc = _json_error(ran.out, ran.err)
        assert (doc["code"], doc["exit"], ran.code) == ("cache_unusable", 3, 3)
        message = doc["error"]
    else:
        message = _one_line_error(ran, 3)
    assert "cannot create cache directory" in message and "Permission denied" in message
    assert "EXCERPT_CACHE_DIR" in message


@pytest.mark.parametrize("locked", ["database", "directory"])
@pytest.mark.reliability("T3")
def test_a_cache_that_cannot_be_written_is_an_error_and_is_not_discarded(
    run_restricted: RunCli, perm_base: Path, locked: str
) -> None:
    repo = _repo(perm_base, use_git=False)
    assert run_restricted("index", "--repo", str(repo)).code == 0
    (db,) = (perm_base / "cache").glob(f"repos/*/{INDEX_DB}")
    write_tree(repo, {"c.py": "C = 3\n"})  # there is something to write
    target = db if locked == "database" else db.parent
    target.chmod(0o444 if locked == "database" else 0o555)
    ran = run_restricted("index", "--repo", str(repo))
    _one_line_error(ran, 3)
    assert db.exists()
    assert not list(db.parent.glob("corrupt-*"))  # a locked cache is not a damaged one


def test_a_client_file_that_cannot_be_written_is_an_error_and_is_left_as_it_was(
    run_restricted: RunCli, perm_base: Path
) -> None:
    repo = _repo(perm_base, use_git=False)
    settings = perm_base / ".gemini" / "settings.json"  # HOME is perm_base
    write_tree(perm_base, {".gemini/settings.json": '{\n  // mine\n  "theme": "GitHub"\n}\n'})
    settings.parent.chmod(0o555)  # neither the file's backup nor its new text can be written
    settings.chmod(0o444)
    ran = run_restricted("setup", "gemini", "--repo", str(repo))
    assert "cannot write" in _one_line_error(ran, 3)
    assert settings.read_text(encoding="utf-8") == '{\n  // mine\n  "theme": "GitHub"\n}\n'
    assert not (settings.parent / "settings.json.bak").exists()


# -- errors under --json (SPEC §11) -----------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "code", "exit_code"),
    [
        pytest.param(["index", "--repo", "{missing}", "--json"], "repo_unavailable", 3, id="index"),
        pytest.param(["index", "--bogus", "--json"], "usage_error", 2, id="argparse-rejects"),
        pytest.param(["index", "--js", "--repo", "{missing}"], "repo_unavailable", 3, id="abbrev"),
        pytest.param(
            ["pack", "--repo", "{repo}", "--format", "json", "--graph", "{missing}", "t"],
            "usage_error",
            2,
            id="pack-format-json",
        ),
        pytest.param(
            ["plan", "--repo", "{repo}", "--format=json", "--budget", "many", "t"],
            "usage_error",
            2,
            id="format-equals-json",
        ),
        pytest.param(
            ["get", "--repo", "{missing}", "--json", "a.py#L1-L1@0"],
            "repo_unavailable",
            3,
            id="get",
        ),
    ],
)
def test_an_error_under_json_is_one_json_line_on_stdout_and_the_same_on_stderr(
    make_repo: Any,
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: str,
    exit_code: int,
) -> None:
    repo = make_repo({"a.py": "A = 1\n"})
    words = [w.format(missing=tmp_path / "missing", repo=repo) for w in argv]
    assert main(words) == exit_code
    captured = capsys.readouterr()
    doc = _json_error(captured.out, captured.err)
    assert (doc["code"], doc["exit"]) == (code, exit_code)
    assert doc["error"] and "\n" not in doc["error"]


def test_without_json_an_error_is_one_plain_line_on_stderr_and_nothing_on_stdout(
    tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", "--repo", str(tmp_path / "missing")]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"Error: repository not found: {tmp_path / 'missing'}\n"


def test_a_rejected_command_line_without_json_still_shows_the_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["index", "--bogus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: excerpt")
    assert err.endswith("Error: unrecognized arguments: --bogus\n")


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["index", "--json"], True),
        (["index", "--js"], True),
        (["pack", "--format", "json", "t"], True),
        (["pack", "--format=json", "t"], True),
        (["pack", "--form", "json", "t"], True),
        (["pack", "--format", "md", "t"], False),
        (["pack", "t", "--", "--json"], False),
        (["pack", "--format"], False),
        (["risk", "--query", "json"], False),
        ([], False),
    ],
)
def test_machine_output_is_recognised_from_the_raw_words(words: list[str], expected: bool) -> None:
    assert wants_json(words) is expected


def test_an_os_error_no_library_call_handled_is_an_environment_error_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", "/srv/out/report.json")

    monkeypatch.setattr("excerpt.index.build.index_repository", denied)
    assert main(["index", "--repo", str(tmp_path), "--json"]) == 3
    doc = _json_error(*capsys.readouterr())
    assert doc == {
        "error": "/srv/out/report.json: Permission denied",
        "code": "environment_error",
        "exit": 3,
    }
    assert main(["index", "--repo", str(tmp_path)]) == 3
    assert capsys.readouterr().err == "Error: /srv/out/report.json: Permission denied\n"


def test_an_unexpected_exception_is_an_internal_error_with_exit_70_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr("excerpt.index.build.index_repository", broken)
    assert main(["index", "--repo", str(tmp_path), "--json"]) == 70
    doc = _json_error(*capsys.readouterr())
    assert doc == {
        "error": "internal error: RuntimeError: boom second line",
        "code": "internal_error",
        "exit": 70,
    }


def test_every_error_class_has_a_distinct_code_documented_in_the_exception_tree() -> None:
    classes = [
        getattr(excerpt.errors, name)
        for name in excerpt.errors.__all__
        if isinstance(getattr(excerpt.errors, name), type)
    ]
    codes = [cls.code for cls in classes]
    assert len(set(codes)) == len(codes)
    doc = excerpt.errors.__doc__ or ""
    for cls in classes:
        assert re.search(rf"{cls.__name__}\s+{cls.exit_code}\s+{cls.code}\b", doc), cls
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", cls.code)
    for cli_code in ("environment_error", "interrupted", "internal_error"):
        assert f"``{cli_code}``" in doc


# -- the graph file, git's hint, the cache location -----------------------------------------


def test_a_missing_graph_file_is_a_usage_error_naming_the_file_and_the_reason(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"a.py": "A = 1\n"})
    assert main(["pack", "--repo", str(repo), "--graph", "missing.json", "fix a"]) == 2
    err = capsys.readouterr().err
    assert err == "Error: cannot read graph file missing.json: No such file or directory\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(None, "Is a directory", id="directory"),
        pytest.param(b"{not json", "is not JSON: Expecting property name", id="not-json"),
        pytest.param(b"\xff\xfe{}", "is not JSON", id="not-utf8"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "is not JSON", id="nested-too-deeply"),
        pytest.param(b"[]", "has no sha256 digest", id="no-digest"),
        pytest.param(b'{"nodes": ["\\ud800"], "sha256": "0"}', "not Unicode", id="lone-surrogate"),
    ],
)
@pytest.mark.reliability("T3")
def test_a_graph_file_that_cannot_be_used_is_a_usage_error_naming_it(
    tmp_path: Path, content: bytes | None, expected: str
) -> None:
    path = tmp_path / "graph.json"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(UsageError) as caught:
        load_graph(path)
    assert str(path) in caught.value.message
    assert expected in caught.value.message


SAFE_DIRECTORY_REFUSAL = (
    b"fatal: detected dubious ownership in repository at '/srv/shared/repo'\n"
    b"To add an exception for this directory, call:\n"
    b"\n"
    b"\tgit config --global --add safe.directory /srv/shared/repo\n"
)


def test_git_refusing_a_repository_keeps_its_safe_directory_hint() -> None:
    message = gitmod.refusal(SAFE_DIRECTORY_REFUSAL)
    assert message == (
        "git refuses the repository: detected dubious ownership in repository at"
        " '/srv/shared/repo'; if you trust it, run:"
        " git config --global --add safe.directory /srv/shared/repo"
    )
    assert (
        gitmod.refusal(b"fatal: not a git repository (or any of the parent directories)\n") is None
    )


@pytest.mark.reliability("B6.47")
def test_a_repository_owned_by_another_user_is_refused_with_git_s_hint_and_exit_3(
    tmp_path: Path,
    cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if os.geteuid() != 0:
        _unavailable("only root can make a repository owned by another user")
    repo = write_tree(tmp_path / "shared", {"a.py": "A = 1\n"})
    git_commit_all(repo)
    Restricted((), pwd.getpwnam("nobody").pw_uid, "nobody").own(repo)
    home = tmp_path / "home"  # no global safe.directory = * from the machine's own config
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert main(["index", "--repo", str(repo), "--json"]) == 3
    doc = _json_error(*capsys.readouterr())
    assert doc["code"] == "git_failed"
    assert f"git config --global --add safe.directory {repo}" in doc["error"]


def test_git_that_cannot_start_in_a_directory_is_a_git_fault_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(GitFault, match="cannot run git in"):
        gitmod.run_git(tmp_path / "gone", "status")


@pytest.mark.reliability("T3")
def test_an_unknown_home_in_the_cache_dir_is_a_cache_error_with_exit_3(
    make_repo: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"a.py": "A = 1\n"})
    monkeypatch.setenv("EXCERPT_CACHE_DIR", "~no-such-user-excerpt/cache")
    assert main(["index", "--repo", str(repo), "--json"]) == 3
    assert _json_error(*capsys.readouterr())["code"] == "cache_unusable"


# -- hostile or unusual input that used to escape as an internal error ----------------------


@pytest.mark.reliability("T2")
def test_a_package_json_nested_past_the_parser_depth_is_indexed_without_a_crash(
    make_repo: Any, cache_dir: Path
) -> None:
    repo = make_repo({"package.json": "[" * 100_000 + "]" * 100_000, "a.js": "var a;\n"})
    report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    assert report.files_indexed == 2


@pytest.mark.reliability("T3")
def test_without_worker_processes_the_index_is_built_in_process(
    make_repo: Any, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_semaphores(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr("multiprocessing.context.SpawnProcess.start", no_semaphores)
    repo = make_repo({f"m{i}.py": f"X{i} = {i}\n" for i in range(build._PARALLEL_MIN)})
    report = index_repository(repo, cache_dir=cache_dir, jobs=2)
    assert report.files_indexed == build._PARALLEL_MIN


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (PermissionError(errno.EACCES, "Permission denied"), "unreadable"),
        (OSError(errno.EPERM, "Operation not permitted"), "unreadable"),
        (OSError(errno.EIO, "Input/output error"), "unreadable"),
        (FileNotFoundError(errno.ENOENT, "No such file or directory"), "not_regular_file"),
        (OSError(errno.ELOOP, "Too many levels of symbolic links"), "not_regular_file"),
        (ValueError("embedded null byte"), "not_regular_file"),
    ],
    ids=["eacces", "eperm", "eio", "enoent", "eloop", "nul"],
)
def test_a_failed_read_is_unreadable_only_when_the_file_is_there_but_refused(
    exc: BaseException, reason: str
) -> None:
    assert failure_reason(exc) == reason


def test_a_dataset_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_bytes(b'{"instance_id": "\xff"}\n')
    with pytest.raises(UsageError, match="not UTF-8"):
        load_tasks(path)


# -- install hints --------------------------------------------------------------------------


def test_no_install_hint_names_an_extra_the_package_does_not_define() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project.get("optional-dependencies", {}))
    texts = [ROOT / "README.md", *sorted((ROOT / "src").rglob("*.py"))]
    texts += sorted((ROOT / "scripts").glob("*.py"))
    hint = re.compile(rf"\b{re.escape(project['name'])}\[([A-Za-z0-9_,\- ]+)\]")
    for path in texts:
        for match in hint.finditer(path.read_text(encoding="utf-8")):
            named = {e.strip() for e in match.group(1).split(",")}
            assert named <= extras, f"{path.relative_to(ROOT)} names extras {named - extras}"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "not a JSON object"),
        ('["a list"]', "not a JSON object"),
        ('{"task": 5}', "no task or problem_statement"),
        ('{"task": "refund", "expected": 5}', "expected must be a list of paths"),
        ('{"task": "refund", "expected": [1]}', "expected must be a list of paths"),
    ],
)
def test_a_malformed_savings_task_line_is_a_usage_error_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, problem: str
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"task": "refund"}\n' + line + "\n", encoding="utf-8")
    (tmp_path / "repo").mkdir()
    argv = ["eval", "--savings", str(tmp_path / "repo"), "--tasks", str(tasks), "--json"]
    assert main(argv) == 2
    doc = _json_error(*capsys.readouterr())
    assert doc == {"error": f"{tasks}:2: {problem}", "code": "usage_error", "exit": 2}


# -- hooks: a failure is never the client's ------------------------------------------------


def _hook(
    restricted: Restricted, perm_base: Path, cache: Path, event: str, payload: dict[str, Any]
) -> subprocess.CompletedProcess[bytes]:
    restricted.own(perm_base)
    env = {**os.environ, "HOME": str(perm_base), "EXCERPT_CACHE_DIR": str(cache),
           "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip
    return subprocess.run(
        [*restricted.prefix, sys.executable, "-m", "excerpt", "hook", event],
        input=json.dumps(payload).encode(), capture_output=True, env=env, cwd=perm_base,
        timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("what", ["repository", "cache"])
def test_a_hook_on_an_unreadable_repository_or_cache_injects_nothing_and_exits_0(
    restricted: Restricted, perm_base: Path, what: str
) -> None:
    repo = _repo(perm_base, use_git=False)
    cache = perm_base / "cache"
    cache.mkdir(mode=0o755)
    task = {"session_id": "s", "cwd": str(repo), "prompt": "fix alpha and beta in a.py and b.py"}
    restricted.own(perm_base)
    (repo if what == "repository" else cache).chmod(0)
    proc = _hook(restricted, perm_base, cache, "UserPromptSubmit", task)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    log = "ERROR worker failed\n" + "".join(f"INFO line {i} ok\n" for i in range(2000))
    output = {"tool_name": "Bash", "tool_input": {"command": "./run"}, "cwd": str(repo),
              "tool_response": {"stdout": log, "stderr": "", "interrupted": False}}  # fmt: skip
    proc = _hook(restricted, perm_base, cache, "PostToolUse", output)
    if what == "cache":  # nowhere to store the original: the output goes on as it was
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    else:  # the output is the tool's, not the repository's: it is compacted as usual
        assert proc.returncode == 0 and b"excerpt compacted" in proc.stdout


@pytest.mark.parametrize("words", [["bench"], ["bench", "localize", "--dataset", "t.jsonl"]])
def test_bench_without_its_package_names_the_package_to_install(
    words: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    from excerpt.cli import BENCH_PACKAGE

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec",
        lambda name, *a: None if name == BENCH_PACKAGE else real(name, *a),
    )  # fmt: skip
    assert main(words) == 2
    err = capsys.readouterr().err
    assert "excerpt-bench" in err and "pip install -e bench" in err
    assert "Traceback" not in err
    assert main([*words, "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["exit"] == 2


def test_bench_with_its_package_installed_is_its_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("localize", "session", "perf", "soak"))
