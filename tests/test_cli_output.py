"""``-o/--output FILE``: the document a command prints, written atomically where the user says."""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import tree_snapshot, write_tree
from excerpt.cli import main
from excerpt.cli.output import write_user_file
from excerpt.errors import UsageError
from trees import SHOP

# Commands whose document is deterministic, each as it is typed after `--repo REPO`.
DOCUMENTS = [
    pytest.param(["pack", "fix the refund retry"], id="pack-md"),
    pytest.param(["pack", "fix the refund retry", "--format", "json"], id="pack-json"),
    pytest.param(["plan", "fix the refund retry", "--json"], id="plan-json"),
    pytest.param(["risk", "db/migrations/0001.sql", "--json"], id="risk"),
    pytest.param(["harness", "--json"], id="harness"),
    pytest.param(["graph", "export"], id="graph-export"),
    pytest.param(["config", "--json"], id="config"),
]


def stdout_of(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def with_repo(argv: list[str], repo: Path) -> list[str]:
    # graph export takes --repo after its action
    cut = 2 if argv[0] == "graph" else 1
    return [*argv[:cut], "--repo", str(repo), *argv[cut:]]


@pytest.mark.parametrize("argv", DOCUMENTS)
def test_output_file_holds_exactly_what_stdout_would(
    make_repo: Any,
    cache_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    repo = make_repo(SHOP)
    target = tmp_path / "out" / "doc.txt"
    target.parent.mkdir()
    code, printed, _ = stdout_of(capsys, with_repo(argv, repo))
    assert code == 0
    code, out, err = stdout_of(capsys, [*with_repo(argv, repo), "-o", str(target)])
    assert code == 0
    assert out == ""
    assert target.read_bytes() == printed.encode("utf-8")
    assert err == f"excerpt: wrote {target} ({len(printed.encode()):,} bytes)\n"


def test_index_json_and_get_write_their_documents_too(
    make_repo: Any, cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(SHOP)
    index_file, get_file = tmp_path / "index.json", tmp_path / "get.json"
    assert main(["index", "--repo", str(repo), "--json", "-o", str(index_file)]) == 0
    assert json.loads(index_file.read_text(encoding="utf-8"))["files_indexed"] == len(SHOP)
    _, out, _ = stdout_of(capsys, ["pack", "--repo", str(repo), "refund", "--format", "json"])
    handle = json.loads(out)["items"][0]["handle"]
    assert main(["get", "--repo", str(repo), "--json", handle, "-o", str(get_file)]) == 0
    assert json.loads(get_file.read_text(encoding="utf-8"))[0]["status"] == "fresh"


def test_get_keeps_its_exit_code_when_writing_a_file(
    make_repo: Any, cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(SHOP)
    stale = "app/ledger.py#L1-L2@0000000000000000"
    target = tmp_path / "get.json"
    assert main(["get", "--repo", str(repo), "--json", stale, "-o", str(target)]) == 1
    assert json.loads(target.read_text(encoding="utf-8"))[0]["status"] == "stale"


def test_output_replaces_an_existing_file_keeping_its_mode_and_leaving_no_temporary(
    tmp_path: Path,
) -> None:
    target = tmp_path / "doc.md"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    write_user_file(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.md"]


def test_a_new_output_file_gets_the_mode_the_umask_gives(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_user_file(tmp_path / "doc.md", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "doc.md").stat().st_mode) == 0o640


@pytest.mark.reliability("B7.51")
def test_a_failed_write_leaves_the_old_file_whole_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "doc.md"
    target.write_text("old\n", encoding="utf-8")

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(UsageError, match="No space left on device"):
        write_user_file(target, b"new\n")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.md"]


def test_an_output_directory_that_does_not_exist_is_a_one_line_usage_error(
    make_repo: Any, cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(SHOP)
    missing = tmp_path / "nowhere" / "doc.md"
    code, out, err = stdout_of(capsys, ["risk", "--repo", str(repo), "a.py", "-o", str(missing)])
    assert code == 2
    assert out == ""
    assert err.startswith("Error: cannot write") and err.count("\n") == 1


def test_output_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    write_user_file(link, b"new\n")
    assert link.is_symlink() and real.read_bytes() == b"new\n"


def test_output_to_something_that_is_not_a_regular_file_is_written_straight_through(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_user_file(fifo, b"through\n")
        assert os.read(reader, 100) == b"through\n"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_dash_is_stdout(
    make_repo: Any, cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(SHOP)
    code, out, err = stdout_of(capsys, ["risk", "--repo", str(repo), "a.py", "-o", "-"])
    assert code == 0 and out.startswith("a.py") and err == ""


def test_an_output_path_inside_the_repository_is_written_because_the_user_named_it(
    make_repo: Any, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(SHOP)
    before = tree_snapshot(repo)
    assert main(["pack", "--repo", str(repo), "refund", "-o", str(repo / "pack.md")]) == 0
    after = tree_snapshot(repo)
    assert set(after) - set(before) == {"pack.md"}  # that file and nothing else
    assert {k: v for k, v in after.items() if k != "pack.md"} == before


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.reliability("B2.21", cases=7)
def test_file_text_printed_to_a_terminal_cannot_act_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OSC title, an OSC 52 clipboard write, a screen clear, a bidi override and three
    invisible format characters (zero-width space, word joiner, a BOM inside a line) in a
    file reach a terminal as escapes from ``pack`` and from ``get``; a pipe still gets the
    bytes as they are."""
    hostile = "\x1b]0;owned\x07\x1b]52;c;Y3VybCB4fHNo\x07\x1b[2J\u202e"
    invisible = "ad\u200bmin\u2060 \ufeffroot"
    repo = write_tree(
        tmp_path / "repo",
        {
            "billing/refund.py": (
                f'def refund_retry():\n    """{hostile}"""\n    return "{invisible}"\n'
            )
        },
    )
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "cache"))
    handle = ""
    for stream, escaped in ((_Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stdout", stream)
        assert main(["pack", "--repo", str(repo), "refund retry"]) == 0
        out = stream.getvalue()
        handle = re.findall(r"billing/refund\.py#L\d+-L\d+@[0-9a-f]{16}", out)[0]
        monkeypatch.setattr(sys, "stdout", stream := type(stream)())
        assert main(["get", "--repo", str(repo), handle]) == 0
        got = stream.getvalue()
        for text in (out, got):
            assert "def refund_retry" in text
            if escaped:
                assert not any(c in text for c in "\x1b\x07\u202e\u200b\u2060\ufeff")
                assert "\\x1b]0;owned\\x07" in text and "\\u202e" in text
                assert "ad\\u200bmin\\u2060 \\ufeffroot" in text
            else:
                assert hostile in text and invisible in text


def test_every_format_character_of_this_python_is_escaped_for_a_terminal() -> None:
    # Unicode's format characters (Cf) are invisible or reorder text: a terminal shows none
    # of them raw, whichever Unicode version the running Python knows
    import unicodedata

    from excerpt.core.escape import for_terminal

    formats = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(formats) > 150
    shown = for_terminal("".join(formats))
    assert not any(c in shown for c in formats)
    assert shown.count("\\") == len(formats)
    assert for_terminal("plain é text\tand\n") == "plain é text\tand\n"
