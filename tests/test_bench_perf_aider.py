"""``excerpt bench perf --aider-python``: the peer runner's errors, and its driver's protocol.

Aider is not installed here. The protocol tests run the shipped driver in a real virtualenv
whose ``aider`` package is a stand-in written by the test (``aider/repomap.py`` with a
``RepoMap`` that checks what it is given and answers a JSON summary as its map): they check
the request, the result, stdout kept clean, the network refused, the tags cache deleted
between cold runs, and the figures and ratios in the report; not Aider's own repo map.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import tree_snapshot
from excerpt.cli import main
from excerpt.errors import EnvironmentFault

FAKE_VERSION = "0.0.0-stand-in"
FAKE_REPOMAP = r"""
import json, os, socket, time

USING_TSL_PACK = False


class RepoMap:
    TAGS_CACHE_DIR = ".aider.tags.cache.v3"

    def __init__(self, map_tokens=1024, root=None, main_model=None, io=None, **_):
        cache = os.path.join(root, self.TAGS_CACHE_DIR)
        if os.path.exists(cache):
            raise RuntimeError("a cold run found the tags cache of the run before")
        os.mkdir(cache)
        self.root, self.model, self.io = root, main_model, io
        print("chatter on stdout, as Aider's prints are")
        os.write(1, b"and on file descriptor 1, as a library's C code may write\n")
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=1)
        except OSError as exc:
            if "network is disabled" not in str(exc):
                raise RuntimeError("the network was not refused") from None
        else:
            raise RuntimeError("the network was not refused")
        if self.model.token_count("abcd" * 10) != 10:
            raise RuntimeError("no offline token count")

    def get_repo_map(self, chat_files, other_files, mentioned_fnames=None,
                     mentioned_idents=None, force_refresh=False):
        idents = mentioned_idents or set()
        if "explode" in idents:
            raise RuntimeError("the stand-in repo map exploded")
        if "linger" in idents:
            time.sleep(120)
        if chat_files or not other_files:
            raise RuntimeError("chat files given, or no other file")
        rel = sorted(os.path.relpath(f, self.root) for f in other_files)
        if any(r.startswith("..") or ".aider" in r or not os.path.isfile(f)
               for r, f in zip(rel, sorted(other_files))):
            raise RuntimeError("an other file outside the tree, missing, or Aider's cache")
        if not mentioned_fnames and not idents:
            return "unhinted"
        if not mentioned_fnames:
            return None  # the driver then asks for the unhinted map, as Aider's coder does
        return json.dumps({"fnames": sorted(mentioned_fnames), "files": len(rel)})
"""

FILES = {
    f"pkg/mod{n}.py": "".join(
        f"def settle_invoice_{n}_{k}(invoice):\n    return invoice.total - {k}\n\n\n"
        for k in range(4)
    )
    for n in range(4)
}


def _venv(root: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    return root / "bin" / "python"


@pytest.fixture(scope="module")
def fake_aider_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    python = _venv(tmp_path_factory.mktemp("venv-aider"))
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    (site / "aider").mkdir()
    (site / "aider" / "__init__.py").write_text(f"__version__ = {FAKE_VERSION!r}\n")
    (site / "aider" / "repomap.py").write_text(FAKE_REPOMAP, encoding="utf-8")
    return python


def _tasks(tmp_path: Path, *texts: str) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps({"task": t}) + "\n" for t in texts), encoding="utf-8")
    return path


def test_the_driver_protocol_carries_aider_figures_into_the_json_and_the_table_with_ratios(
    repo: Path,
    fake_aider_python: Path,
    tmp_path: Path,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = tree_snapshot(repo)
    tasks = _tasks(tmp_path, "settle_invoice_1_2 in pkg/mod1.py is wrong", "totals drift")
    args = ["bench", "perf", "--repo", str(repo), "--runs", "2", "--tasks", str(tasks),
            "--aider-python", str(fake_aider_python), "--aider-map-tokens", "512"]  # fmt: skip
    assert main([*args, "--json"]) == 0
    base = json.loads(capsys.readouterr().out)["baseline"]
    assert tree_snapshot(repo) == before  # Aider's tags cache went into the copy
    assert base["aider_cold_s"] > 0 and 0 < base["aider_warm_s"] <= base["aider_warm_p95_s"]
    assert base["aider_version"] == FAKE_VERSION and base["aider_map_tokens"] == 512
    assert base["aider_peak_rss_mb"] > 0
    assert main(args) == 0
    table = capsys.readouterr().out
    assert f"Aider {FAKE_VERSION} repo map" in table and "map_tokens 512" in table
    assert "| cold index / cold repo map |" in table and "(target ≤ 0.3: " in table
    assert "| warm pack / warm repo map |" in table and "(target ≤ 0.05: " in table


def test_the_driver_derives_aider_mentions_and_falls_back_to_the_unhinted_map(
    repo: Path, fake_aider_python: Path
) -> None:
    from excerpt_bench.aider_peer import run_repo_map

    tasks = ["fix `pkg/mod2.py`, and mod3.py", "the total goes negative", "check mod0 please"]
    figures = run_repo_map(fake_aider_python, repo, tasks, runs=2)
    assert figures.version == FAKE_VERSION and figures.map_tokens == 1024
    first = json.dumps({"fnames": ["pkg/mod2.py", "pkg/mod3.py"], "files": len(FILES)})
    # a path, a unique basename, nothing; a stem under 5 characters is not a file mention
    assert figures.map_chars == (len(first), len("unhinted"), len("unhinted"))
    assert (repo / ".aider.tags.cache.v3").is_dir()  # in the root it is given (perf: a copy)


def test_a_crash_of_the_peer_mid_run_is_a_clear_error_without_a_traceback(
    repo: Path,
    fake_aider_python: Path,
    tmp_path: Path,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tasks = _tasks(tmp_path, "settle the invoice", "explode here")
    args = ["bench", "perf", "--repo", str(repo), "--runs", "1", "--tasks", str(tasks),
            "--aider-python", str(fake_aider_python)]  # fmt: skip
    assert main(args) == 3
    err = capsys.readouterr().err
    assert "Aider's repo map failed (exit 1; last step: warm map 1/2 took " in err
    assert err.rstrip().endswith("RuntimeError: the stand-in repo map exploded")
    assert "Traceback" not in err


def test_a_peer_past_its_timeout_is_killed_and_reported(
    repo: Path, fake_aider_python: Path
) -> None:
    from excerpt_bench.aider_peer import run_repo_map

    with pytest.raises(EnvironmentFault, match=r"within 1 s \(last step: cold map 1/1 started;"):
        run_repo_map(fake_aider_python, repo, ["linger a while"], runs=1, timeout=1)


@pytest.mark.parametrize("kind", ["missing", "not executable", "directory", "not python"])
def test_an_aider_python_that_is_not_an_interpreter_is_refused_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = tmp_path / "python"
    if kind == "not executable":
        path.write_text("#!/bin/sh\n", encoding="utf-8")
    elif kind == "directory":
        path.mkdir()
    elif kind == "not python":
        path.write_text("#!/bin/sh\necho not python >&2\nexit 0\n", encoding="utf-8")
        path.chmod(0o755)
    args = ["bench", "perf", "--synthetic", "20", "--aider-python", str(path), "--json"]
    assert main(args) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["code"] == "usage_error"
    expected = "did not run as a Python" if kind == "not python" else "must be an executable"
    assert expected in doc["error"]


def test_an_interpreter_without_aider_is_refused_before_the_long_run_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import excerpt_bench.synthetic

    def no_tree(*_args: object) -> None:
        raise AssertionError("the run started before the interpreter was checked")

    monkeypatch.setattr(excerpt_bench.synthetic, "write_tree", no_tree)
    python = _venv(tmp_path / "venv-plain")
    assert main(["bench", "perf", "--synthetic", "20", "--aider-python", str(python)]) == 2
    err = capsys.readouterr().err
    assert "has no aider: install aider-chat into that environment" in err
