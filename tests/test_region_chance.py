"""Regions, not files, are ranked: a pack reads the regions most likely to hold a line to
change first, across files, names a file again when the reading returns to it, serves a small
top file's other lines after its regions, and, stopping short, serves a region only when its
chance is worth its tokens (``excerpt.pack.build``)."""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import excerpt
import excerpt.pack.prepare as prepare_module
from conftest import write_tree
from excerpt.rank.weights import default_weights


def _function(name: str, lines: int = 6) -> str:
    body = "".join(f"    step_{i} = invoice.get('{name}_{i}')\n" for i in range(lines))
    return f"def {name}(invoice):\n{body}    return invoice\n\n\n"


BILLING = '"""Billing."""\n\n\n' + "".join(_function(f"helper_{n}") for n in range(30))
BILLING += _function("apply_late_fee")
LEDGER = '"""Ledger."""\n\n\n' + "".join(_function(f"entry_{n}") for n in range(30))
LEDGER += _function("post_late_fee_entry")
TASK = "apply_late_fee charges the fee twice; post_late_fee_entry then posts two entries"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    files = {"app/__init__.py": "", "app/billing.py": BILLING, "app/ledger.py": LEDGER}
    return write_tree(tmp_path / "shop", {**files, "README.md": "# shop\n"})


def _pack(root: Path, cache: Path, budget: int = 32_000, **kw: object) -> excerpt.Delivered:
    request = excerpt.PackRequest(repo=root, task=TASK, budget=budget, cache_dir=cache, **kw)  # type: ignore[arg-type]
    return excerpt.build_pack(request)


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_the_named_definitions_are_read_first_not_the_top_of_a_small_file(
    shop: Path, tmp_path: Path
) -> None:
    # billing.py is small enough to be served whole; its lines to change are at its end
    items = _pack(shop, tmp_path / "cache").pack.items
    fee = _line_of(BILLING, "def apply_late_fee")
    entry = _line_of(LEDGER, "def post_late_fee_entry")
    first, second = items[0], items[1]
    assert (first.path, second.path) == ("app/billing.py", "app/ledger.py")
    assert first.start_line <= fee <= first.end_line and first.start_line >= fee - 2
    assert second.start_line <= entry <= second.end_line and second.start_line >= entry - 2


def test_the_rest_of_a_small_top_file_follows_its_regions_named_again(
    shop: Path, tmp_path: Path
) -> None:
    done = _pack(shop, tmp_path / "cache")
    billing = [i for i in done.pack.items if i.path == "app/billing.py"]
    served = sorted(n for i in billing for n in range(i.start_line, i.end_line + 1))
    assert served == list(range(1, BILLING.count("\n") + 1))  # every line, once
    assert done.pack.items[0].path == "app/billing.py"
    # the reading left billing.py for ledger.py and came back: the header says so
    headers = re.findall(r"^## (\d+)\. `([^`]+)`(, again)?", done.text, re.M)
    assert headers[:2] == [("1", "app/billing.py", ""), ("2", "app/ledger.py", "")]
    assert ("1", "app/billing.py", ", again") in headers
    assert all(i.file_rank is not None for i in done.pack.items)


def test_stopping_short_serves_a_region_only_when_its_chance_is_worth_its_tokens(
    shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = _pack(shop, tmp_path / "c1", fill=False)
    fee = _line_of(BILLING, "def apply_late_fee")
    assert short.pack.items[0].start_line <= fee <= short.pack.items[0].end_line
    # the definitions, not the other 60 helpers of two confident files
    assert len(short.pack.items) < len(_pack(shop, tmp_path / "c2").pack.items)
    assert short.pack.stopped_short is not None
    floor = default_weights().pack_floor
    withheld = [o.confidence for o in short.pack.omitted if o.confidence is not None]
    assert withheld and all(c > floor for c in withheld)
    assert all(o.handle for o in short.pack.omitted if o.confidence is not None)
    # worth nothing: a region is never worth its tokens but the strongest, always served
    shipped = default_weights()
    worthless = dataclasses.replace(shipped, region_worth_tokens=1e-9)
    monkeypatch.setattr(prepare_module, "default_weights", lambda: worthless)
    alone = _pack(shop, tmp_path / "c3", fill=False)
    assert [(i.path, i.start_line) for i in alone.pack.items] == [
        (short.pack.items[0].path, short.pack.items[0].start_line)
    ]
    # worth everything: the confident files' regions are all served, as when filling
    priceless = dataclasses.replace(shipped, region_worth_tokens=1e12)
    monkeypatch.setattr(prepare_module, "default_weights", lambda: priceless)
    full = _pack(shop, tmp_path / "c4", fill=False)
    assert len(full.pack.items) > len(short.pack.items)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(budget=st.integers(min_value=1_000, max_value=40_000), fill=st.booleans())
def test_packs_stay_within_budget_deterministic_and_exact_under_the_chance_order(
    shop: Path, tmp_path: Path, budget: int, fill: bool
) -> None:
    cache = tmp_path / "cache"
    a = _pack(shop, cache, budget, fill=fill)
    b = _pack(shop, cache, budget, fill=fill)
    assert a.text == b.text and a.pack.to_dict() == b.pack.to_dict()
    assert len(a.text.encode("utf-8")) <= budget
    sources = {"app/billing.py": BILLING, "app/ledger.py": LEDGER}
    for item in a.pack.items:
        lines = sources[item.path].splitlines(keepends=True)
        assert item.text == "".join(lines[item.start_line - 1 : item.end_line])
        assert item.text in a.text
    spans: dict[str, list[tuple[int, int]]] = {}
    for item in a.pack.items:
        spans.setdefault(item.path, []).append((item.start_line, item.end_line))
    for ranges in spans.values():
        ordered = sorted(ranges)
        assert all(x[1] < y[0] for x, y in itertools.pairwise(ordered))
