"""Pre-filling a handoff from Claude Code and Codex session transcripts (JSON Lines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import tree_snapshot
from excerpt.cli import main
from excerpt.handoff import CLOCK_ENV, read_session

DATA = Path(__file__).parent / "data" / "handoff"
RECORDED_ROOT = Path("/home/dev/shop")  # the cwd the fixture sessions ran in


def test_a_claude_code_session_gives_its_edits_and_bash_commands_with_exit_codes() -> None:
    facts = read_session(DATA / "claude_session.jsonl", RECORDED_ROOT)
    assert facts.files_touched == ["app/refunds.py", "tests/test_rounding.py"]  # Read is no edit
    assert [(c["command"], c["exit_code"]) for c in facts.commands] == [
        ("pytest -q tests/test_refunds.py", 1),  # is_error, "Exit code 1"
        ("pytest -q", 0),  # no is_error
        ("git diff --stat", None),  # interrupted: no exit code in the transcript
    ]
    assert facts.commands[0]["result"].endswith("1 failed, 2 passed in 0.12s")
    assert (facts.outside, facts.skipped) == (1, 1)  # ~/notes/todo.md; the cut-off last line


def test_a_codex_rollout_gives_its_patches_and_shell_calls_with_exit_codes() -> None:
    facts = read_session(DATA / "codex_rollout.jsonl", RECORDED_ROOT)
    assert facts.files_touched == ["app/webhooks.py", "tests/test_webhooks.py", "app/old_retry.py"]
    assert [(c["command"], c["exit_code"]) for c in facts.commands] == [
        ("rg -n retry app", 0),  # shell ["bash", "-lc", …], metadata.exit_code
        ("pytest -q tests/test_webhooks.py", 1),  # exec_command_end, then the output
        ("pytest -q", 0),  # exec_command: "Process exited with code 0"
    ]
    assert facts.commands[2]["result"] == ".....\n5 passed in 0.31s"
    assert (facts.outside, facts.skipped) == (0, 0)


def _rewritten(tmp_path: Path, name: str, root: Path) -> Path:
    text = (DATA / name).read_text(encoding="utf-8").replace(str(RECORDED_ROOT), str(root))
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "sender", "files"),
    [
        pytest.param("claude_session.jsonl", "claude", ["app/refunds.py", "tests/test_rounding.py"],
                     id="claude"),
        pytest.param("codex_rollout.jsonl", "codex",
                     ["app/webhooks.py", "tests/test_webhooks.py", "app/old_retry.py"], id="codex"),
    ],
)  # fmt: skip
def test_create_from_session_fills_files_and_commands_and_flags_add_to_them(
    tmp_path: Path,
    make_repo: Any,
    cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    sender: str,
    files: list[str],
) -> None:
    monkeypatch.setenv(CLOCK_ENV, "2026-01-02T03:04:05Z")
    root = make_repo({"app/refunds.py": "x = 1\n"})
    before = tree_snapshot(root)
    session = _rewritten(tmp_path, name, root)
    code = main([
        "handoff", "create", "--repo", str(root), "--from", sender, "--to", "claude",
        "--from-session", str(session), "--goal", "carry on", "--file", "docs/notes.md",
        "--command", "make lint", "-", "not run yet",
    ])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["files_touched"] == [*files, "docs/notes.md"]
    assert doc["commands"][-1] == {
        "command": "make lint",
        "exit_code": None,
        "result": "not run yet",
    }
    assert len(doc["commands"]) == 4
    assert tree_snapshot(root) == before


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(b"\x00\x00\x00\x01binary", "binary", id="binary"),
        pytest.param(b"just some text\nnot json\n", "no Claude Code or Codex entry", id="text"),
        pytest.param(b'{"a": 1}\n[1, 2]\n', "no Claude Code or Codex entry", id="other-json"),
        pytest.param(b"", "no Claude Code or Codex entry", id="empty"),
    ],
)
def test_a_transcript_that_is_not_one_is_a_usage_error(
    tmp_path: Path,
    make_repo: Any,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    data: bytes,
    message: str,
) -> None:
    root = make_repo({"a.py": "x = 1\n"})
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    argv = ["handoff", "create", "--repo", str(root), "--from", "claude", "--to", "codex",
            "--goal", "g", "--from-session", str(path), "--json"]  # fmt: skip
    assert main(argv) == 2
    error = json.loads(capsys.readouterr().out)
    assert error["code"] == "usage_error" and message in error["error"]


def test_hostile_transcript_entries_are_passed_over_and_paths_never_escape(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    lines = [
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Write",
             "input": {"file_path": f"{root}/../../etc/passwd"}},
            {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": 7}},
            {"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "ls\0-la"}},
            {"type": "tool_use", "id": "t4", "name": "Edit",
             "input": {"file_path": f"{root}/ok/../src/a.py"}},
            "not a block",
        ]}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                              "arguments": "{not json", "call_id": "c1"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "zz",
                                              "output": "Process exited with code 1"}},
    ]  # fmt: skip
    path = tmp_path / "s.jsonl"
    nested = "[" * 50_000  # deeper than the JSON parser recurses
    path.write_text("\n".join([*(json.dumps(x) for x in lines), nested]) + "\n", encoding="utf-8")
    facts = read_session(path, root)
    assert facts.files_touched == ["src/a.py"]
    assert facts.outside == 1
    assert [c["command"] for c in facts.commands] == ["ls\\x00-la"]
    assert facts.skipped == 1  # the deeply nested line
