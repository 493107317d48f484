"""Packs that do not repeat themselves: handles the agent already holds (``held``, MCP
``exclude``) are not sent again while their file is unchanged, and a changed file is served
again (SPEC §3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import excerpt.deliver as deliver
from excerpt.cli import main
from excerpt.errors import UsageError
from excerpt.pack import PackRequest
from excerpt.pack.handles import parse_handle
from excerpt.pack.model import PackDict, pack_schema

TASK = "settle_invoice returns a negative balance when a refund exceeds the payment"


def _functions(prefix: str, count: int) -> str:
    return "".join(
        f"def {prefix}_{n}(invoice):\n"
        f'    """Settle step {n}: refund and payment of the invoice."""\n'
        f"    total = invoice.total - invoice.refund * {n}\n"
        f"    return max(total, invoice.paid - {n})\n\n\n"
        for n in range(count)
    )


FILES = {
    "billing/settle.py": "def settle_invoice(invoice):\n"
    "    balance = invoice.paid - invoice.refund\n"
    "    return balance\n\n\n" + _functions("settle_refund_payment", 30),
    "billing/refunds.py": _functions("refund_payment_invoice", 30),
    "billing/ledger.py": _functions("ledger_invoice_balance", 30),
}


def _pack(repo: Path, cache: Path, budget: int = 3000, **kw: object) -> deliver.Delivered:
    return deliver.build_pack(
        PackRequest(repo=repo, task=TASK, budget=budget, cache_dir=cache, **kw)  # type: ignore[arg-type]
    )


def _lines(pack: PackDict) -> set[tuple[str, int]]:
    items = pack["items"]
    return {(i["path"], n) for i in items for n in range(i["start_line"], i["end_line"] + 1)}


def test_held_lines_are_not_sent_again_and_the_budget_goes_to_the_next_regions(
    repo: Path, cache_dir: Path
) -> None:
    first = _pack(repo, cache_dir).pack.to_dict()
    held = [i["handle"] for i in first["items"][:2]]
    again = _pack(repo, cache_dir, held=tuple(held))
    second = again.pack.to_dict()
    Draft202012Validator(pack_schema()).validate(second)
    assert second["already_held"] == sorted(held)
    held_lines = {
        (h.path, n) for h in map(parse_handle, held) for n in range(h.start_line, h.end_line + 1)
    }
    assert not _lines(second) & held_lines  # nothing the agent holds comes back
    # the room they took went to regions the first pack did not send
    assert _lines(second) - _lines(first)
    assert second["budget"]["used_bytes"] >= first["budget"]["used_bytes"] // 2
    assert "Held excerpts not sent again, still fresh" in again.text
    assert all(h in again.text for h in held)
    assert "held_stale" not in second


def test_a_changed_file_is_served_again_and_its_handle_listed_stale(
    repo: Path, cache_dir: Path
) -> None:
    first = _pack(repo, cache_dir).pack.to_dict()
    top = first["items"][0]
    path = repo / top["path"]
    path.write_text(path.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    again = _pack(repo, cache_dir, held=(top["handle"],)).pack.to_dict()
    assert again["held_stale"] == [top["handle"]]
    assert "already_held" not in again
    # the file's lines are served again, under a handle of its new content
    served = [i for i in again["items"] if i["path"] == top["path"]]
    assert served and all(i["handle"] != top["handle"] for i in served)
    assert any(i["start_line"] <= top["start_line"] <= i["end_line"] for i in served)


def test_a_held_handle_of_a_file_the_pack_does_not_reach_changes_nothing(
    repo: Path, cache_dir: Path
) -> None:
    plain = _pack(repo, cache_dir).pack.to_dict()
    elsewhere = "docs/guide.md#L1-L4@0123456789abcdef"
    same = _pack(repo, cache_dir, held=(elsewhere,)).pack.to_dict()
    assert same == plain


def test_two_excerpts_are_never_joined_across_held_lines(repo: Path, cache_dir: Path) -> None:
    # hold one line in the middle of the top function: the pack may serve its neighbours,
    # never that line (a join would bridge a gap of one line)
    first = _pack(repo, cache_dir, budget=6000).pack.to_dict()
    top = first["items"][0]
    middle = (top["start_line"] + top["end_line"]) // 2
    digest = parse_handle(top["handle"]).digest
    handle = f"{top['path']}#L{middle}-L{middle}@{digest}"
    again = _pack(repo, cache_dir, budget=6000, held=(handle,)).pack.to_dict()
    assert (top["path"], middle) not in _lines(again)
    assert again["already_held"] == [handle]


def test_same_input_same_bytes_with_held_handles(repo: Path, cache_dir: Path) -> None:
    first = _pack(repo, cache_dir).pack.to_dict()
    held = (first["items"][0]["handle"],)
    a, b = _pack(repo, cache_dir, held=held), _pack(repo, cache_dir, held=held)
    assert a.text == b.text and a.pack.to_dict() == b.pack.to_dict()


def test_a_malformed_held_handle_is_refused_before_any_work(
    repo: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError, match="malformed handle"):
        PackRequest(repo=repo, task=TASK, held=("billing/settle.py#L9-L2@0123456789abcdef",))
    code = main(["pack", TASK, "--repo", str(repo), "--held", "nonsense", "--json"])
    assert code == 2
    err = json.loads(capsys.readouterr().out)
    assert "malformed handle" in json.dumps(err)


def test_the_cli_takes_held_handles_from_an_earlier_pack(
    repo: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["pack", TASK, "--repo", str(repo), "--budget", "3000", "--format", "json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    handle = first["items"][0]["handle"]
    assert main([*args, "--held", handle]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["already_held"] == [handle]
    assert handle not in {i["handle"] for i in second["items"]}


def test_held_from_takes_an_earlier_pack_or_a_handoffs_evidence(
    repo: Path, cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["pack", TASK, "--repo", str(repo), "--budget", "3000", "--format", "json"]
    assert main([*args, "-o", str(tmp_path / "first.json")]) == 0
    first = json.loads((tmp_path / "first.json").read_text(encoding="utf-8"))
    capsys.readouterr()
    assert main([*args, "--held-from", str(tmp_path / "first.json")]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["already_held"]
    assert set(second["already_held"]) <= {i["handle"] for i in first["items"]}
    assert not {i["handle"] for i in second["items"]} & set(second["already_held"])
    # a handoff's evidence, as `handoff create` writes it
    given = tmp_path / "input.json"
    evidence = [first["items"][0]["handle"]]
    given.write_text(json.dumps({"goal": "settle invoices", "evidence": evidence}), "utf-8")
    handoff = tmp_path / "handoff.json"
    created = main([
        "handoff", "create", "--repo", str(repo), "--from", "claude", "--to", "codex",
        "--input", str(given), "-o", str(handoff),
    ])  # fmt: skip
    assert created == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main([*args, "--held-from", str(handoff)]) == 0
    assert json.loads(capsys.readouterr().out)["already_held"] == evidence
    # anything else is refused with the usage exit code
    (tmp_path / "other.json").write_text('{"schema": "excerpt.plan/v1"}', "utf-8")
    assert main([*args, "--held-from", str(tmp_path / "other.json")]) == 2
    assert "--held-from takes a JSON pack" in capsys.readouterr().err
