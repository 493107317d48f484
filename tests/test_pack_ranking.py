"""What a pack serves first: files the change touches, the frames of a traceback and
``path:line`` references, files and symbols the task names (pinned above a stronger lexical
match); and what it serves below the source: a translation catalog matching the task's
words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git
from pack_repos import GO_STOCK, ORDERS_VIEW_PY, PAYMENT_PY, REFUND_PY, TS_CURRENCY, TS_DISCOUNT
from packs import cli, file_lines, first_index, line_of, pack_of, plan_of, signals

# -- pins ------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["absolute", "relative-to-cwd", "cli"])
def test_changed_paths_come_first(
    repos: dict[str, Path],
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    repo = repos["py_shop"]
    changed = ["app/settings.py", "tests/test_orders.py"]  # unrelated to the task's words
    task = "fix the refund webhook retry"
    if how == "absolute":
        pack = pack_of(repo, task, cache_dir, changed=tuple(str(repo / p) for p in changed))
    elif how == "relative-to-cwd":
        monkeypatch.chdir(repo)
        pack = pack_of(repo, task, cache_dir, changed=tuple(changed))
    else:
        monkeypatch.chdir(repo)
        code, out, _ = cli(
            capsys, "pack", task, "--repo", str(repo), "--format", "json",
            *(arg for path in changed for arg in ("--changed", path)),
        )  # fmt: skip
        assert code == 0
        pack = json.loads(out)
    assert sorted(i["path"] for i in pack["items"][:2]) == changed
    assert all("changed" in signals(i) for i in pack["items"][:2])
    assert {i["path"] for i in pack["items"] if "changed" in signals(i)} == set(changed)
    assert pack["items"][2]["path"] == "app/services/refund.py"  # then the best lexical match


@pytest.mark.parametrize("via", ["library", "cli"])
def test_changed_from_git_pins_edited_staged_and_untracked_files_first(
    py_shop: Path,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    via: str,
) -> None:
    settings = py_shop / "app/settings.py"
    settings.write_text(settings.read_text() + 'CURRENCY = "EUR"\n')  # edited, not staged
    webhooks = py_shop / "app/views/webhooks.py"
    webhooks.write_text(webhooks.read_text() + "\n\ndef ping() -> int:\n    return 200\n")
    git(py_shop, "add", "app/views/webhooks.py")  # staged
    (py_shop / "app/audit.py").write_text("def audit_log(event):\n    return event\n")  # untracked
    expected = ["app/audit.py", "app/settings.py", "app/views/webhooks.py"]
    task = "RefundService.refund double counts partial refunds"
    if via == "library":
        pack = pack_of(py_shop, task, cache_dir, changed_from_git=True)
    else:
        argv = ["pack", task, "--repo", str(py_shop), "--format", "json", "--changed-from-git"]
        code, out, _ = cli(capsys, *argv)
        assert code == 0
        pack = json.loads(out)
    assert sorted(i["path"] for i in pack["items"][:3]) == expected
    assert all("changed" in signals(i) for i in pack["items"][:3])
    later = {i["path"] for i in pack["items"][3:] if "changed" in signals(i)}
    assert later <= set(expected)  # nothing unchanged is reported as changed
    assert pack["items"][3]["path"] == "app/services/refund.py"


def test_no_changes_in_git_pins_nothing(repos: dict[str, Path], cache_dir: Path) -> None:
    pack = pack_of(
        repos["py_shop"], "fix the refund webhook retry", cache_dir, changed_from_git=True
    )
    assert not [i for i in pack["items"] if "changed" in signals(i)]
    assert pack["items"][0]["path"] == "app/services/refund.py"


def _traceback(root: Path) -> tuple[str, int]:
    line = line_of(REFUND_PY, "provider_id = self.gateway.refund(")
    task = (
        "Refunds crash in production:\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/site-packages/gunicorn/workers/sync.py", line 135, in run\n'
        f'  File "{root}/app/services/refund.py", line {line}, in refund\n'
        "    provider_id = self.gateway.refund(order.payment_id, amount_cents)\n"
        "KeyError: 'id'\n"
    )
    return task, line


FRAME_CASES = [
    pytest.param(
        "ts_pkg",
        "TypeError: Cannot read properties of undefined (reading 'toFixed')\n"
        "    at formatMoney (src/utils/currency.ts:{line}:22)\n"
        "    at checkout (src/checkout.ts:11:47)",
        "src/utils/currency.ts",
        line_of(TS_CURRENCY, "toFixed"),
        id="node-stack",
    ),
    pytest.param(
        "py_shop",
        "mypy: app/services/payment.py:{line}: error: Value of type dict is not indexable",
        "app/services/payment.py",
        line_of(PAYMENT_PY, '"/refunds"'),
        id="path-colon-line",
    ),
    pytest.param(
        "go_svc",
        "panic: assignment to entry in nil map\n\ngoroutine 7 [running]:\n"
        "example.com/inventory/stock.(*Store).Restock(...)\n"
        "\t/home/ci/work/inventory/stock/store.go:{line} +0x1d",
        "stock/store.go",
        line_of(GO_STOCK, "s.levels[sku] += quantity"),
        id="go-panic",
    ),
]


def test_a_python_traceback_pins_its_file_first_at_the_frame_line(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    task, line = _traceback(repos["py_shop"])
    pack = pack_of(repos["py_shop"], task, cache_dir)
    first = pack["items"][0]
    assert first["path"] == "app/services/refund.py"
    assert first["start_line"] <= line <= first["end_line"]
    assert "stack_frame" in signals(first)


@pytest.mark.parametrize(("name", "template", "path", "line"), FRAME_CASES)
def test_a_file_line_reference_pins_its_file_first_at_that_line(
    repos: dict[str, Path], cache_dir: Path, name: str, template: str, path: str, line: int
) -> None:
    pack = pack_of(repos[name], template.format(line=line), cache_dir)
    first = pack["items"][0]
    assert first["path"] == path
    assert first["start_line"] <= line <= first["end_line"]
    assert "stack_frame" in signals(first)


def test_a_frame_pin_survives_a_tight_budget_as_a_fragment_holding_the_line(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    task, line = _traceback(repos["py_shop"])
    pack = pack_of(repos["py_shop"], task, cache_dir, 120)
    assert pack["items"][0]["path"] == "app/services/refund.py"
    holding = [
        i
        for i in pack["items"]
        if i["path"] == "app/services/refund.py" and i["start_line"] <= line <= i["end_line"]
    ]
    assert [(i["kind"], i["truncated"]) for i in holding] == [("fragment", True)]


def test_every_in_repo_frame_of_a_traceback_is_pinned_before_other_files(
    repos: dict[str, Path], cache_dir: Path
) -> None:
    root = repos["py_shop"]
    view_line = line_of(ORDERS_VIEW_PY, "refund = service.refund(")
    task, refund_line = _traceback(root)
    task = task.replace(
        '  File "/usr/lib',
        f'  File "{root}/app/views/orders.py", line {view_line}, in refund_order\n  File "/usr/lib',
    )
    items = pack_of(root, task, cache_dir)["items"]
    pinned = {"app/views/orders.py": view_line, "app/services/refund.py": refund_line}
    assert {i["path"] for i in items[:2]} == set(pinned)
    for path, line in pinned.items():
        item = items[first_index(items, path)]
        assert item["start_line"] <= line <= item["end_line"], item


STRONG_MATCH = "RefundService.refund and RefundService.retry_refund_webhook retry forever"
OUTRANKING_PINS = [
    pytest.param(
        f"{STRONG_MATCH} since the change in app/settings.py",
        "app/settings.py",
        None,
        id="named-path",
    ),
    pytest.param(
        f'{STRONG_MATCH}\n  File "{{root}}/app/services/notifications.py", line 12, in <module>',
        "app/services/notifications.py",
        12,
        id="traceback-frame",
    ),
]


@pytest.mark.parametrize(("template", "path", "line"), OUTRANKING_PINS)
def test_a_pin_outranks_a_stronger_lexical_and_symbol_match(
    repos: dict[str, Path], cache_dir: Path, template: str, path: str, line: int | None
) -> None:
    # the task names RefundService's methods loudly; the pinned file barely matches its words
    root = repos["py_shop"]
    items = pack_of(root, template.format(root=root), cache_dir)["items"]
    assert items[0]["path"] == path
    # the loud match comes right after the pin in the ranking (excerpts are read by their
    # chance of holding a line to change, so its excerpt need not be the second)
    ranked = sorted({i["path"]: i["file_rank"] for i in items}.items(), key=lambda pr: pr[1])
    assert [p for p, _ in ranked[:2]] == [path, "app/services/refund.py"]
    assert {"path", "stack_frame"} & set(signals(items[0]))
    if line is not None:
        assert items[0]["start_line"] <= line <= items[0]["end_line"]


NAMED_PATHS = [
    pytest.param("py_shop", "add a currency field to app/models.py", "app/models.py", id="py"),
    pytest.param(
        "ts_pkg",
        "support stacked discounts in src/pricing/discount.ts",
        "src/pricing/discount.ts",
        id="ts",
    ),
    pytest.param("go_svc", "log every reservation made in main.go", "main.go", id="go-root"),
]


@pytest.mark.parametrize(("name", "task", "path"), NAMED_PATHS)
def test_a_file_named_in_the_task_is_pinned_first(
    repos: dict[str, Path], cache_dir: Path, name: str, task: str, path: str
) -> None:
    first = pack_of(repos[name], task, cache_dir)["items"][0]
    assert first["path"] == path
    assert "path" in signals(first)


def _span(text: str, start: str, end: str) -> tuple[int, int]:
    first = line_of(text, start)
    return first, line_of(text, end, after=first)


NAMED_SYMBOLS = [
    pytest.param(
        "py_shop",
        "RefundService.refund double counts partial refunds",
        "app/services/refund.py",
        _span(REFUND_PY, "    def refund(", "        return refund"),
        id="py-method",
    ),
    pytest.param(
        "ts_pkg",
        "applyDiscount lets a fixed discount exceed the total",
        "src/pricing/discount.ts",
        _span(TS_DISCOUNT, "export function applyDiscount", "}"),
        id="ts-function",
    ),
    pytest.param(
        "go_svc",
        "Store.Restock should reject negative quantities",
        "stock/store.go",
        _span(GO_STOCK, "func (s *Store) Restock", "}"),
        id="go-method",
    ),
]


@pytest.mark.parametrize(("name", "task", "path", "span"), NAMED_SYMBOLS)
def test_a_named_symbol_gives_its_definition_lines(
    repos: dict[str, Path],
    cache_dir: Path,
    name: str,
    task: str,
    path: str,
    span: tuple[int, int],
) -> None:
    items = pack_of(repos[name], task, cache_dir)["items"]
    assert items[0]["path"] == path
    assert "defines" in signals(items[0])
    holding = [
        i
        for i in items
        if i["path"] == path and i["start_line"] <= span[0] and span[1] <= i["end_line"]
    ]
    assert holding, f"no excerpt of {path} holds lines {span}"
    lines = file_lines(repos[name], path)
    definition = b"".join(lines[span[0] - 1 : span[1]]).decode()
    assert definition in holding[0]["text"]


# -- demotion --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "task",
    [
        pytest.param("refund exceeds the captured amount", id="error-message"),
        pytest.param("Your refund has been issued message is wrong", id="email-template"),
        pytest.param("refund webhook retry", id="feature-words"),
    ],
)
def test_a_matching_translation_catalog_ranks_below_the_matching_source(
    repos: dict[str, Path], cache_dir: Path, task: str
) -> None:
    po, source = "locale/fr/LC_MESSAGES/django.po", "app/services/refund.py"
    plan = plan_of(repos["py_shop"], task, cache_dir)["candidates"]
    paths = [c["path"] for c in plan]
    assert po in paths, "the catalog matches the task and should still be ranked"
    assert paths.index(source) < paths.index(po)
    demoted = plan[paths.index(po)]
    assert {"signal": "demoted", "detail": "translation catalog"} in demoted["reasons"]
    assert demoted["score"] < plan[paths.index(source)]["score"]
    pack = pack_of(repos["py_shop"], task, cache_dir)
    items = pack["items"]
    if any(i["path"] == po for i in items):
        assert first_index(items, source) < first_index(items, po)
    else:  # or left out, below the confidence a pack serves without filling
        assert any(o["path"] == po and "confidence" in o for o in pack["omitted"])
        assert any(i["path"] == source for i in items)
