"""``scripts/bench_compaction_session.py``: payloads from a directory through the real hook.

The real payloads are made with ``--generate`` (pytest, npm, pip, git); these tests give the
script a synthetic one and check what it computes, never how fast.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _load(name: str) -> ModuleType:
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module(name)


bench = _load("bench_compaction_session")


def _log(lines: int) -> str:
    rows = [
        f"2025-03-01T10:00:{k % 60:02d} INFO [worker-{k % 4}] built step {k}" for k in range(lines)
    ]
    rows.insert(lines // 2, "ERROR step 'link' failed: undefined symbol settle_invoice")
    return "\n".join(rows) + "\n"


@pytest.fixture
def payloads(tmp_path: Path) -> Path:
    folder = tmp_path / "payloads"
    folder.mkdir()
    (folder / "build.stdout").write_text(_log(800), encoding="utf-8")
    (folder / "build.stderr").write_text("warning: 3 steps were cached\n", encoding="utf-8")
    (folder / "build.command").write_text("make -j4 build\n", encoding="utf-8")
    (folder / "status.stdout").write_text(" M src/app.py\n", encoding="utf-8")
    return folder


def test_a_large_log_is_compacted_its_rereads_shrink_and_expand_returns_it_byte_for_byte(
    payloads: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main([str(payloads), "--turns", "10,30", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["turns"] == [10, 30]
    build, status = doc["rows"]  # by name
    assert build["payload"] == "build" and build["command"] == "make -j4 build"
    assert build["compacted"] and build["expand_exact"] is True
    assert build["after_bytes"] < build["before_bytes"] * 0.9
    assert build["after_tokens"] < build["before_tokens"]
    for n in (10, 30):
        reread = build["reread_tokens"][str(n)]
        assert reread == {
            "without_hook": build["before_tokens"] * n,
            "with_hook": build["after_tokens"] * n,
        }
    # a small output is left as it is: nothing to expand, nothing saved
    assert status["command"] == "status" and not status["compacted"]
    assert status["expand_exact"] is None and status["after_bytes"] == status["before_bytes"]
    assert status["before_bytes"] == len(" M src/app.py")  # the last newline dropped
    total = doc["total"]
    assert total["before_tokens"] == build["before_tokens"] + status["before_tokens"]
    assert doc["total_compacted"]["after_bytes"] == build["after_bytes"]
    assert not list(cache_dir.glob("**/compact"))  # the originals went to a temporary cache


def test_the_table_names_each_command_and_the_turns(
    payloads: Path, capsys: pytest.CaptureFixture[str], cache_dir: Path
) -> None:
    assert bench.main([str(payloads), "--turns", "5"]) == 0
    out = capsys.readouterr().out
    assert "re-read over 5 turns (without → with hook)" in out
    assert "| `make -j4 build` | " in out and "| **all** | " in out
    assert "| **the compacted ones** | " in out
    assert "(unchanged)" in out  # the small output


def test_a_folder_without_payloads_or_inside_the_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as empty:
        bench.main([str(tmp_path)])
    assert empty.value.code == 2
    with pytest.raises(SystemExit, match="outside the repository"):
        bench.generate(bench.ROOT / "payloads", tmp_path / "no-git")
    assert not (bench.ROOT / "payloads").exists()
