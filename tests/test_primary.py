"""Primary and related files: a calibrated confidence per file, the tests of the primary
files from the index's test association, and a pack that stops short of its budget when the
rest is noise (SPEC §3.1, §3.2, §4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import excerpt.deliver as deliver
from conftest import git, git_commit_all, write_tree
from excerpt.cli import main
from excerpt.errors import UsageError
from excerpt.pack import PackRequest
from excerpt.pack.model import pack_schema, plan_schema
from excerpt.pack.related import regions_of_test, related_tests
from excerpt.rank.confidence import FEATURES, confidences
from excerpt.rank.score import RankedFile
from excerpt.rank.signals import Reason
from excerpt.rank.weights import default_weights
from excerpt_bench.fixes import FixCommits
from excerpt_bench.primary import primary_summary

PRICING = '''\
"""Order totals: percentages off a price, rounded to cents."""


def apply_discount(price: float, percentage: float) -> float:
    """The price after taking ``percentage`` off; totals must never go negative."""
    return price - price * percentage / 100


def round_cents(amount: float) -> float:
    return round(amount, 2)
'''
CART = '''\
"""A shopping cart."""

from shop.pricing import round_cents


class Cart:
    def __init__(self) -> None:
        self.lines: list[tuple[str, float]] = []

    def add(self, sku: str, price: float) -> None:
        self.lines.append((sku, price))

    def subtotal(self) -> float:
        return round_cents(sum(p for _, p in self.lines))
'''
TEST_PRICING = """\
from shop.pricing import apply_discount


def test_nothing_here() -> None:
    assert True


def test_apply_discount_takes_the_share_off() -> None:
    assert apply_discount(200.0, 25) == 150.0
"""
# modules that all hold the same everyday words: a task made of those words locates nothing
NOISE = {
    f"shop/part_{n}.py": (
        f'"""Part {n} of the shop: it handles the thing, and the thing works."""\n\n\n'
        f"def handle_{n}(thing: str) -> str:\n"
        + "".join(f"    thing = thing + 'step {k} works'\n" for k in range(40))
        + "    return thing\n"
    )
    for n in range(12)
}
TASK = "Totals go negative when the percentage is over one hundred"
VAGUE = "the thing works but it handles things"
NOTHING = "qzxv wrbl kprt"  # no word of it is in the repository


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(
        tmp_path_factory.mktemp("primary") / "shop",
        {
            "README.md": "# shop\n\nA tiny shop.\n",
            "pyproject.toml": '[project]\nname = "shop"\nversion = "1.0"\n',
            "Makefile": "test:\n\tpytest -q\n\nlint:\n\truff check .\n",
            "shop/__init__.py": "",
            "shop/pricing.py": PRICING,
            "shop/cart.py": CART,
            "tests/test_pricing.py": TEST_PRICING,
            "tests/test_cart.py": "from shop.cart import Cart\n\n\ndef test_cart() -> None:\n"
            "    assert Cart().subtotal() == 0\n",
            **NOISE,
        },
    )
    git_commit_all(root)
    return root


def _pack(shop: Path, task: str, budget: int, **kw: Any) -> deliver.Delivered:
    return deliver.build_pack(
        PackRequest(repo=shop, task=task, budget=budget, cache_dir=shop.parent / "cache", **kw)
    )


def _plan(shop: Path, task: str) -> dict[str, Any]:
    request = PackRequest(repo=shop, task=task, budget=8000, cache_dir=shop.parent / "cache")
    return deliver.build_plan(request).plan.to_dict()  # type: ignore[return-value]


# -- the wire forms ------------------------------------------------------------------------


@pytest.mark.parametrize("task", [TASK, VAGUE, NOTHING], ids=["specific", "vague", "nothing"])
@pytest.mark.parametrize("fill", [True, False], ids=["default", "stop-short"])
def test_roles_and_confidence_validate_against_the_pack_and_plan_schemas(
    shop: Path, task: str, fill: bool
) -> None:
    pack = _pack(shop, task, 8000, fill=fill).pack.to_dict()
    Draft202012Validator(pack_schema()).validate(pack)
    plan = _plan(shop, task)
    Draft202012Validator(plan_schema()).validate(plan)
    for entries in (pack["items"], plan["candidates"]):
        assert entries[0]["role"] == "primary"
        assert all(0.0 <= e["confidence"] <= 1.0 for e in entries)
        assert all(e["role"] in ("primary", "related") for e in entries)
    # a file has one role and one confidence, wherever it appears
    for entries in (pack["items"], plan["candidates"]):
        seen: dict[str, tuple[str, float]] = {}
        for e in entries:
            assert seen.setdefault(e["path"], (e["role"], e["confidence"])) == (
                e["role"],
                e["confidence"],
            )


def test_a_schema_refuses_an_item_without_a_role() -> None:
    item = {
        "rank": 1, "path": "a.py", "start_line": 1, "end_line": 1, "source_sha256": "0" * 64,
        "excerpt_sha256": "0" * 64, "bytes": 0, "handle": "a.py#L1-L1@" + "0" * 16,
        "kind": "file", "truncated": False, "score": 1.0, "reasons": [], "text": "",
        "confidence": 0.5,
    }  # fmt: skip
    validator = Draft202012Validator(pack_schema()["$defs"]["item"])
    assert not validator.is_valid(item)
    assert validator.is_valid({**item, "role": "primary"})
    assert not validator.is_valid({**item, "role": "primary", "confidence": 1.5})


# -- related tests -------------------------------------------------------------------------


def test_the_test_of_a_primary_file_arrives_as_related_with_the_function_naming_it(
    shop: Path,
) -> None:
    """The task's words are in the source file only; its test reaches a pack that stops
    short through the index's test association, showing the test function that calls the
    primary's code, after the files confident enough to serve."""
    done = _pack(shop, TASK, 4000, fill=False)
    items = done.pack.to_dict()["items"]
    paths = list(dict.fromkeys(i["path"] for i in items))
    assert paths[0] == "shop/pricing.py" and items[0]["role"] == "primary"
    assert paths[-1] == "tests/test_pricing.py"  # in the room the ranked files left
    tests = [i for i in items if i["path"] == "tests/test_pricing.py"]
    assert all(t["role"] == "related" and t["related_to"] == "shop/pricing.py" for t in tests)
    served = "".join(t["text"] for t in tests)
    assert "def test_apply_discount_takes_the_share_off" in served
    assert "def test_nothing_here" not in served
    assert f"## {len(paths)}. `tests/test_pricing.py` · tests 1" in done.text
    # a filled pack spends its budget on ranked files; the test stays listed in its JSON
    filled = _pack(shop, TASK, 4000).pack.to_dict()
    held = [o for o in filled["omitted"] if o.get("related_to") == "shop/pricing.py"]
    filled_paths = {i["path"] for i in filled["items"]}
    assert held or "tests/test_pricing.py" in filled_paths
    assert all(o["path"] == "tests/test_pricing.py" and o["handle"] for o in held)
    plan = _plan(shop, TASK)
    related = [c for c in plan["candidates"] if c.get("related_to") == "shop/pricing.py"]
    assert {c["path"] for c in related} == {"tests/test_pricing.py"}


def _cand(path: str, score: float, *signals: str, tier: int = 0) -> RankedFile:
    reasons = tuple(Reason(s, "x") for s in signals)  # type: ignore[arg-type]
    return RankedFile(path=path, score=score, tier=tier, reasons=reasons, anchors=())


def test_related_tests_take_the_test_named_after_the_file_first_and_respect_the_caps() -> None:
    w = default_weights()
    edges = [
        ("tests/test_misc.py", "src/pay.py", "tests"),
        ("tests/test_pay.py", "src/pay.py", "tests"),
        ("tests/test_all.py", "src/pay.py", "tests"),
        ("tests/test_all.py", "src/cart.py", "tests"),
        ("tests/test_cart.py", "src/cart.py", "tests"),
        ("src/pay.py", "src/cart.py", "imports"),
    ]
    got = related_tests(["src/pay.py", "src/cart.py"], edges, {}, w)
    # the test named after each file, and no other while there is one
    assert got == [("tests/test_pay.py", "src/pay.py"), ("tests/test_cart.py", "src/cart.py")]
    unnamed = [e for e in edges if e[0] not in ("tests/test_pay.py", "tests/test_cart.py")]
    got = related_tests(["src/pay.py"], unnamed, {}, w)
    assert got[0] == ("tests/test_misc.py", "src/pay.py")  # tests one file: before test_all
    assert len(got) <= min(w.related_per_primary, w.related_tests)
    assert related_tests(["src/pay.py"], [e for e in edges if e[2] == "imports"], {}, w) == []


def test_a_test_file_naming_none_of_the_primary_names_is_shown_from_its_head() -> None:
    lines = [f"line {n}\n" for n in range(1, 200)]
    (region,) = regions_of_test(lines, [], frozenset({"apply_discount"}), default_weights())
    assert (region.start_line, region.signal) == (1, "head")
    assert region.end_line == default_weights().head_lines


# -- confidence ------------------------------------------------------------------------------


def test_confidence_is_a_probability_and_the_clear_winner_is_surer_than_the_tail() -> None:
    ranked = [
        _cand("a.py", 9.0, "lexical", "defines", "path", tier=2),
        _cand("b.py", 1.0, "lexical"),
        _cand("c.py", 0.5, "graph"),
        _cand("d.py", 0.4, "lexical", "demoted"),
    ]
    sure = confidences(ranked, default_weights())
    assert len(sure) == len(ranked) and all(0.0 <= s <= 1.0 for s in sure)
    assert sure[0] > max(sure[1:])
    assert confidences(ranked, default_weights()) == sure  # same input, same numbers


def test_a_coefficient_list_of_the_wrong_length_is_refused() -> None:
    import dataclasses

    w = dataclasses.replace(default_weights(), confidence_coefficients=(1.0,))
    with pytest.raises(UsageError, match=f"needs {len(FEATURES)} numbers"):
        confidences([_cand("a.py", 1.0, "lexical")], w)


# -- stopping short ----------------------------------------------------------------------------


def test_a_task_matching_nothing_specific_stops_short_when_asked_and_fills_by_default(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing matches: asked to stop short, the pack offers the overview's first file and
    says it stopped short; by default it fills its budget."""
    short = _pack(shop, NOTHING, 16000, fill=False)
    budget = short.pack.to_dict()["budget"]
    stop = budget["stopped_short"]
    assert stop["reason"] == "low_confidence"
    assert stop["unused_bytes"] == budget["bytes"] - budget["rendered_bytes"] > 0
    assert "Stopped short of the budget" in short.text
    assert [i.path for i in short.pack.items] == ["README.md"]
    withheld = [o for o in short.pack.to_dict()["omitted"] if "confidence" in o]
    assert {o["path"] for o in withheld} == {"pyproject.toml", "Makefile"}
    assert all(o["reason"] == "budget" and o["confidence"] < stop["floor"] for o in withheld)
    full = _pack(shop, NOTHING, 16000)
    assert "stopped_short" not in full.pack.to_dict()["budget"]
    assert {i.path for i in full.pack.items} == {"README.md", "pyproject.toml", "Makefile"}
    assert "Stopped short" not in full.text and len(full.text.encode("utf-8")) <= 16000
    args = ["pack", NOTHING, "--repo", str(shop), "--budget", "16000", "--json"]
    assert main(args) == 0
    assert len(json.loads(capsys.readouterr().out)["items"]) == 3
    assert main([*args, "--stop-short"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [i["path"] for i in out["items"]] == ["README.md"]
    assert out["budget"]["stopped_short"]["reason"] == "low_confidence"


@pytest.mark.parametrize("task", [TASK, VAGUE], ids=["specific", "vague"])
def test_a_pack_that_stops_short_serves_what_clears_the_floor_then_the_tests(
    shop: Path, task: str
) -> None:
    floor = default_weights().pack_floor
    pack = _pack(shop, task, 32000, fill=False).pack.to_dict()
    ranked = [i["rank"] for i in pack["items"] if "related_to" not in i]
    assert ranked == sorted(ranked)
    for item in pack["items"]:
        assert item["confidence"] >= floor or "related_to" in item, item["path"]
    tests = [n for n, i in enumerate(pack["items"]) if "related_to" in i]
    assert tests == list(range(len(pack["items"]) - len(tests), len(pack["items"])))
    # withheld: a file below the floor, or a region not worth its tokens (the worth rule is
    # tested in test_region_chance.py); each says its file's confidence
    withheld = [o for o in pack["omitted"] if "confidence" in o]
    assert all(0.0 <= o["confidence"] <= 1.0 and o["bytes_needed"] > 0 for o in withheld)
    if "stopped_short" in pack["budget"]:
        assert withheld


def test_same_input_same_bytes(shop: Path) -> None:
    for task in (TASK, NOTHING):
        for fill in (False, True):
            a, b = _pack(shop, task, 8000, fill=fill), _pack(shop, task, 8000, fill=fill)
            assert a.text == b.text
            assert a.pack.to_dict() == b.pack.to_dict()


# -- the benchmark's figures -------------------------------------------------------------------


def test_fix_commit_is_the_child_whose_message_is_the_task(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "r", {"src/a.go": "package a\n", "src/a_test.go": "package a\n"})
    git_commit_all(repo)
    base = _head(repo)
    write_tree(repo, {"src/a.go": "package a\n\nvar X = 1\n", "src/a_test.go": "package a\n//\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fix(a): set X\n\nbody line\n\nCo-authored-by: A <a@b>")
    fixes = FixCommits()
    git_dir = repo / ".git"
    assert fixes.tests_touched(git_dir, base, "fix(a): set X\r\n\r\nbody line") == (
        "src/a_test.go",
    )
    assert fixes.tests_touched(git_dir, base, "another message") is None


def _head(repo: Path) -> str:
    import subprocess

    out = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_primary_precision_and_recall_are_per_task_means_over_tasks_with_gold() -> None:
    def row(precision: float | None, recall: float | None, primary: int) -> dict[str, Any]:
        excerpt = {
            "primary": ["x"] * primary, "primary_precision": precision,
            "primary_recall": recall, "bytes_used": {"4000": 0.5},
            "bytes_used_fill": {"4000": 1.0}, "line_coverage_fill": {"4000": 0.25},
            "stopped_short": {"4000": True},
        }  # fmt: skip
        return {"excerpt": excerpt, "related_tests": None}

    rows = [row(1.0, 0.5, 1), row(0.5, 1.0, 2), row(None, None, 1)]
    rows[0]["related_tests"] = {"touched": ["t.go"], "in_pack": True}
    rows[1]["related_tests"] = {"touched": [], "in_pack": False}
    got = primary_summary(rows, [4000])
    assert got["primary"] == {"precision": 0.75, "recall": 0.75, "files": 1.33, "tasks": 2}
    assert got["related_tests"] == {
        "fix_commits_found": 2, "tasks_touching_tests": 1, "share_in_pack": 1.0, "unscored": 1,
    }  # fmt: skip
    assert got["bytes_used"] == {"4000": 0.5} and got["stopped_short"] == {"4000": 1.0}


def test_the_markdown_names_the_primary_files_once_in_the_room_the_excerpts_leave(
    shop: Path,
) -> None:
    done = _pack(shop, TASK, 8000)
    pack = done.pack.to_dict()
    files = list(dict.fromkeys(i["path"] for i in pack["items"]))
    sure = {i["path"]: i["confidence"] for i in pack["items"] if i["role"] == "primary"}
    shown = ", ".join(f"{files.index(p) + 1} ({c:.2f})" for p, c in sure.items())
    assert f"Likely to change: {shown}." in done.text.splitlines()
    # the line never costs an excerpt: with it, the same excerpts as a selection measured
    # without it
    assert len(done.text.encode("utf-8")) <= 8000
