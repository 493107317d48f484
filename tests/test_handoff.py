"""Handoff documents: create, validate (schema, then freshness), show, on fixture repositories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from conftest import HANDOFF_CLOCK, git, git_commit_all, tree_snapshot
from excerpt.cli import main
from excerpt.core.hashing import sha256_hex
from excerpt.handoff import CLOCK_ENV, check_document, create_handoff, render_handoff

# every test: handoffs stamped at one time, an isolated cache (``repo`` is conftest's: FILES)
pytestmark = pytest.mark.usefixtures("handoff_clock", "cache_dir")

SCHEMA = json.loads(
    (Path(__file__).parents[1] / "src/excerpt/handoff/schema/handoff.v1.json").read_text(
        encoding="utf-8"
    )
)
FILES = {
    "app/refunds.py": "def refund(order, share):\n    return round(order.total * share)\n",
    "app/orders.py": "class Order:\n    total = 0\n\n\ndef place():\n    return Order()\n",
    "CLAUDE.md": "# Notes for Claude\n",
    "AGENTS.md": "# Notes for agents\n",
}


def handle(root: Path, path: str, start: int, end: int) -> str:
    digest = sha256_hex((root / path).read_bytes())[:16]
    return f"{path}#L{start}-L{end}@{digest}"


def content(root: Path) -> dict[str, Any]:
    return {
        "goal": "partial refunds must not lose a cent",
        "status": "fix written; the webhook test still fails",
        "constraints": ["no new dependencies", "keep `refund()`'s signature"],
        "decisions": [{"decision": "round, not truncate", "why": "int() dropped the cent"}],
        "files_touched": ["app/refunds.py"],
        "commands": [
            {"command": "pytest -q", "exit_code": 1, "result": "1 failed\nFAILED test_retry"},
            {"command": "ruff check", "exit_code": None, "result": ""},
        ],
        "open_questions": ["should 503 retry too?"],
        "next_steps": ["fix the webhook retry", "run ``pytest -q``"],
        "risks": ["rounding changes totals in reports"],
        "evidence": [handle(root, "app/refunds.py", 1, 2), handle(root, "app/orders.py", 5, 6)],
    }


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def create(tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str], **kw: Any) -> Path:
    given = tmp_path / "input.json"
    given.write_text(json.dumps({**content(root), **kw}), encoding="utf-8")
    target = tmp_path / "handoff.json"
    code, _, err = run(
        capsys, "handoff", "create", "--repo", str(root), "--from", "claude", "--to", "codex",
        "--input", str(given), "-o", str(target),
    )  # fmt: skip
    assert code == 0, err
    return target


def validate(root: Path, doc: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code, out, _ = run(capsys, "handoff", "validate", "--repo", str(root), "--json", str(doc))
    return code, json.loads(out)


def test_create_show_and_validate_leave_the_repository_byte_identical_and_fresh(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_snapshot(repo)
    doc = create(tmp_path, repo, capsys)
    assert run(capsys, "handoff", "show", str(doc))[0] == 0
    code, report = validate(repo, doc, capsys)
    assert (code, report["valid"], report["fresh"], report["stale"]) == (0, True, True, [])
    assert [e["status"] for e in report["evidence"]] == ["fresh", "fresh"]
    assert tree_snapshot(repo) == before  # .git, CLAUDE.md and AGENTS.md included
    written = json.loads(doc.read_text(encoding="utf-8"))
    Draft202012Validator(SCHEMA).validate(written)
    assert written["schema"] == "excerpt.handoff/v1"
    stamped = (written["from"], written["to"], written["created_at"])
    assert stamped == ("claude", "codex", HANDOFF_CLOCK)
    assert written["dirty_files"] == [] and written["head"] is not None


def test_editing_a_referenced_file_makes_exactly_that_handle_stale_with_where_it_moved(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = create(tmp_path, repo, capsys)
    old = handle(repo, "app/refunds.py", 1, 2)
    path = repo / "app/refunds.py"
    path.write_text("# money\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    code, report = validate(repo, doc, capsys)
    assert (code, report["valid"], report["fresh"]) == (1, True, False)
    evidence = [s for s in report["stale"] if s["kind"] == "evidence"]
    assert evidence == [
        {"kind": "evidence", "handle": old, "status": "stale",
         "moved_to": handle(repo, "app/refunds.py", 2, 3)},
    ]  # fmt: skip
    dirty = [(s["path"], s["state"]) for s in report["stale"] if s["kind"] == "dirty_tree"]
    assert dirty == [("app/refunds.py", "modified")]
    assert not [s for s in report["stale"] if s["kind"] == "head"]


def test_a_deleted_referenced_file_is_missing(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = create(tmp_path, repo, capsys)
    (repo / "app/orders.py").unlink()
    _, report = validate(repo, doc, capsys)
    statuses = {s["handle"]: s["status"] for s in report["stale"] if s["kind"] == "evidence"}
    assert statuses == {handle_of(doc, "app/orders.py"): "missing"}
    dirty = [(s["path"], s["state"], s["was"], s["now"]) for s in report["stale"][1:]]
    assert dirty == [("app/orders.py", "deleted", None, "deleted")]


def handle_of(doc: Path, path: str) -> str:
    evidence: list[str] = json.loads(doc.read_text(encoding="utf-8"))["evidence"]
    return next(h for h in evidence if h.startswith(path + "#"))


def test_moving_head_is_reported_with_both_commits(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = create(tmp_path, repo, capsys)
    recorded = json.loads(doc.read_text(encoding="utf-8"))["head"]
    (repo / "README.md").write_text("readme\n", encoding="utf-8")
    git_commit_all(repo)
    code, report = validate(repo, doc, capsys)
    assert code == 1
    heads = [s for s in report["stale"] if s["kind"] == "head"]
    assert len(heads) == 1 and heads[0]["recorded"] == recorded
    assert heads[0]["current"] not in (None, recorded) and heads[0]["moved"] is True
    assert [e["status"] for e in report["evidence"]] == ["fresh", "fresh"]
    assert not [s for s in report["stale"] if s["kind"] == "dirty_tree"]  # committed: clean


def test_dirty_tree_changes_are_reported_path_by_path(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "notes.txt").write_text("draft\n", encoding="utf-8")  # dirty at creation
    doc = create(tmp_path, repo, capsys)
    recorded = json.loads(doc.read_text(encoding="utf-8"))
    assert [(d["path"], d["state"]) for d in recorded["dirty_files"]] == [
        ("notes.txt", "untracked")
    ]
    assert validate(repo, doc, capsys)[0] == 0  # the same dirty tree is still fresh
    (repo / "notes.txt").write_text("draft 2\n", encoding="utf-8")
    (repo / "CHANGES.md").write_text("x\n", encoding="utf-8")
    git(repo, "add", "CHANGES.md")
    code, report = validate(repo, doc, capsys)
    changed = [(s["path"], s["state"]) for s in report["stale"] if s["kind"] == "dirty_tree"]
    # a new file in git's index differs from HEAD in the work tree and in the index
    assert code == 1 and changed == [
        ("CHANGES.md", "modified"), ("CHANGES.md", "staged"), ("notes.txt", "untracked"),
    ]  # fmt: skip
    assert report["dirty"]["recorded"] != report["dirty"]["current"]


def test_the_same_input_and_clock_give_the_same_bytes(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = create(tmp_path, repo, capsys).read_bytes()
    second = create(tmp_path, repo, capsys).read_bytes()
    assert first == second


def test_a_handoff_from_claude_shown_to_codex_and_back_keeps_every_field(
    repo: Path, cache_dir: Path
) -> None:
    doc = create_handoff(repo, content(repo), sender="claude", receiver="codex").document
    for receiver in ("codex", "claude"):
        text = render_handoff(doc, receiver)
        for value in _values(doc):
            assert value in text, (receiver, value)
    # the receiver hands it back: the document is its input, and every field survives
    back = create_handoff(repo, doc, sender="codex", receiver="claude").document
    assert {k: v for k, v in back.items() if k not in ("from", "to")} == {
        k: v for k, v in doc.items() if k not in ("from", "to")
    }
    assert (back["from"], back["to"]) == ("codex", "claude")
    assert "<decisions>" in render_handoff(back) and "```sh" in render_handoff(doc)


def _values(doc: Any) -> list[str]:
    """Every scalar of the document but the excerpt digests ``validate`` reads from it."""
    if isinstance(doc, dict):
        return [v for k, item in doc.items() if k != "evidence_excerpts" for v in _values(item)]
    if isinstance(doc, list):
        return [v for item in doc for v in _values(item)]
    return [] if doc is None or doc == "" else [str(doc)]


def _json(obj: Any) -> bytes:
    return json.dumps(obj).encode()


TRAVERSAL = "../etc/passwd#L1-L2@0123456789abcdef"
TEXT_CODE = [{"command": "a", "exit_code": "1", "result": ""}]


def _problem_cases() -> list[Any]:
    return [
        pytest.param(b"{not json", "not JSON", id="malformed-json"),
        pytest.param(b"\x00\x01\x02binary", "binary", id="binary"),
        pytest.param(b"\xff\xfe{}", "not UTF-8", id="not-utf8"),
        pytest.param(b"[" * 100_000, "nested too deeply", id="deep-nesting"),
        pytest.param(b'{"goal": NaN}', "not JSON", id="nan"),
        pytest.param(b"[1, 2]", "JSON object", id="not-an-object"),
        pytest.param(b'{"goal": "x", "extra": 1}', "unknown key", id="unknown-key"),
        pytest.param(b'{"goal": ""}', "goal: must not be empty", id="empty-goal"),
        pytest.param(
            _json({"goal": "x", "evidence": [TRAVERSAL]}),
            "handle refused: path traversal", id="traversal-handle",
        ),
        pytest.param(
            _json({"goal": "x", "files_touched": ["/etc/passwd"]}),
            "absolute path", id="absolute-file",
        ),
        pytest.param(
            _json({"goal": "x", "commands": TEXT_CODE}),
            "exit_code: expected an integer", id="string-exit-code",
        ),
    ]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), _problem_cases())
def test_bad_input_is_a_one_line_usage_error_with_exit_2(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], data: bytes, message: str
) -> None:
    given = tmp_path / "input.json"
    given.write_bytes(data)
    argv = ["handoff", "create", "--repo", str(repo), "--from", "codex", "--to", "claude",
            "--input", str(given), "--json"]  # fmt: skip
    code, out, err = run(capsys, *argv)
    error = json.loads(out)
    assert (code, error["exit"], error["code"]) == (2, 2, "usage_error")
    assert message in error["error"] and len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_an_input_over_4_mib_is_refused_unread(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(3 * 1024**3)  # sparse: reading it whole would take 3 GiB
    code, _, err = run(capsys, "handoff", "show", str(big))
    assert code == 2 and "larger than 4 MiB" in err


def test_a_document_that_fails_the_schema_is_invalid_exit_1_and_says_where(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(create(tmp_path, repo, capsys).read_text(encoding="utf-8"))
    bad = dict(doc, to="gemini", commands=[{"command": "x", "exit_code": True, "result": ""}])
    bad["evidence"] = [*doc["evidence"], "a/../../b#L1-L1@0123456789abcdef"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    code, report = validate(repo, path, capsys)
    assert (code, report["valid"], report["fresh"]) == (1, False, False)
    assert sorted(report["errors"]) == [
        "commands[0].exit_code: expected an integer or null",
        "evidence[2]: handle refused: path traversal or empty component",
        "to: expected 'claude' or 'codex'",
    ]
    assert list(Draft202012Validator(SCHEMA).iter_errors(bad))
    assert run(capsys, "handoff", "show", str(path))[0] == 2


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"schema": "excerpt.handoff/v2"}, id="wrong-schema"),
        pytest.param({"created_at": "yesterday"}, id="created-at"),
        pytest.param({"head": "HEAD"}, id="head"),
        pytest.param({"dirty_digest": "md5:00"}, id="dirty-digest"),
        pytest.param({"decisions": [{"decision": "x"}]}, id="decision-without-why"),
        pytest.param({"risks": ["x", 3]}, id="non-string-risk"),
        pytest.param({"files_touched": ["a/../b"]}, id="traversal-file"),
        pytest.param({"evidence": ["no-handle"]}, id="malformed-handle"),
        pytest.param({"surprise": True}, id="unknown-key"),
    ],
)
def test_the_shipped_json_schema_and_the_checks_agree(
    repo: Path, cache_dir: Path, change: dict[str, Any]
) -> None:
    doc = create_handoff(repo, content(repo), sender="claude", receiver="codex").document
    assert check_document(doc) == [] and not list(Draft202012Validator(SCHEMA).iter_errors(doc))
    bad = {**doc, **change}
    assert check_document(bad)
    assert list(Draft202012Validator(SCHEMA).iter_errors(bad))


def test_a_directory_outside_git_pins_nothing_and_still_checks_handles(
    tmp_path: Path, make_repo: Any, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"a.py": "x = 1\n"}, use_git=False, name="plain")
    doc = create_handoff(root, {"goal": "g", "evidence": [handle(root, "a.py", 1, 1)]},
                         sender="codex", receiver="codex").document  # fmt: skip
    assert (doc["head"], doc["dirty_digest"], doc["dirty_files"]) == (None, None, None)
    from excerpt.handoff import validate_handoff

    assert validate_handoff(root, doc)["fresh"] is True
    (root / "a.py").write_text("x = 2\n", encoding="utf-8")
    assert [s["kind"] for s in validate_handoff(root, doc)["stale"]] == ["evidence"]


def test_past_a_thousand_dirty_files_only_the_digest_is_kept_and_still_compared(
    repo: Path, cache_dir: Path
) -> None:
    from excerpt.handoff import validate_handoff

    for i in range(1001):
        (repo / f"gen{i:04d}.txt").write_text("x\n", encoding="utf-8")
    doc = create_handoff(repo, {"goal": "g"}, sender="claude", receiver="codex").document
    assert doc["dirty_files"] is None and doc["dirty_digest"] is not None
    assert check_document(doc) == [] and "too many dirty files" in render_handoff(doc)
    assert validate_handoff(repo, doc)["fresh"] is True
    (repo / "gen0000.txt").write_text("y\n", encoding="utf-8")
    stale = validate_handoff(repo, doc)["stale"]
    assert [(s["kind"], s["path"]) for s in stale] == [("dirty_tree", None)]


def test_a_created_at_that_is_not_utc_seconds_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(CLOCK_ENV, "2026-01-02 03:04")
    argv = ["handoff", "create", "--repo", str(repo), "--from", "claude", "--to", "codex",
            "--goal", "g"]  # fmt: skip
    code, _, err = run(capsys, *argv)
    assert code == 2 and CLOCK_ENV in err


def test_a_file_name_that_is_not_utf8_is_pinned_and_rendered(
    repo: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import os

    with open(os.fsencode(repo) + b"/caf\xe9.txt", "wb") as fh:
        fh.write(b"x\n")
    target = tmp_path / "h.json"
    argv = ["handoff", "create", "--repo", str(repo), "--from", "claude", "--to", "codex",
            "--goal", "g", "-o", str(target)]  # fmt: skip
    assert run(capsys, *argv)[0] == 0
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert [d["path"] for d in doc["dirty_files"]] == ["caf\udce9.txt"]
    code, out, _ = run(capsys, "handoff", "show", str(target))
    assert code == 0 and "caf\\udce9.txt" in out
    assert validate(repo, target, capsys)[0] == 0


def test_a_subdirectory_is_pinned_by_its_work_tree(repo: Path, cache_dir: Path) -> None:
    from excerpt.handoff import validate_handoff

    sub = repo / "app"
    doc = create_handoff(sub, {"goal": "g", "evidence": [handle(sub, "refunds.py", 1, 1)]},
                         sender="claude", receiver="codex").document  # fmt: skip
    assert doc["head"] is not None and doc["dirty_files"] == []
    (repo / "AGENTS.md").write_text("changed\n", encoding="utf-8")
    stale = validate_handoff(sub, doc)["stale"]
    assert [(s["kind"], s.get("path")) for s in stale] == [("dirty_tree", "AGENTS.md")]
