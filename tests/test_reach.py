"""Gold reach (``excerpt_bench.reach``): tokens of a delivered pack, read top to bottom,
until every changed line was shown; the irrelevant shares; the causes."""

from __future__ import annotations

from excerpt.core.tokens import o200k_count
from excerpt.pack.model import Item, Omitted, Pack
from excerpt_bench.reach import (
    Shown,
    bm25_pack,
    outside_shares,
    reach_cause,
    reach_summary,
    reach_tokens,
)

A = "def a():\n    return 1\n\n"
B = "def b():\n    x = 2\n    return x\n"
RENDERED = f"# head\n## 1. `m.py`\n```python\n{A}```\n## 2. `n.py`\n```python\n{B}```\n"
SHOWN = [Shown("m.py", 10, A), Shown("n.py", 1, B)]


def test_reach_is_the_tokens_up_to_the_end_of_the_last_gold_line_shown() -> None:
    end_of_b2 = RENDERED.index("    x = 2\n") + len("    x = 2\n")
    got = reach_tokens(RENDERED, SHOWN, {"m.py": [[11, 11]], "n.py": [[2, 2]]}, o200k_count)
    assert got == o200k_count(RENDERED[:end_of_b2])
    # the first file's line alone is reached earlier
    end_of_a2 = RENDERED.index("    return 1\n") + len("    return 1\n")
    assert reach_tokens(RENDERED, SHOWN, {"m.py": [[11, 11]]}, o200k_count) == o200k_count(
        RENDERED[:end_of_a2]
    )


def test_a_line_never_shown_or_no_gold_line_is_not_reached() -> None:
    assert reach_tokens(RENDERED, SHOWN, {"m.py": [[11, 13]]}, o200k_count) is None  # 13 is past
    assert reach_tokens(RENDERED, SHOWN, {"z.py": [[1, 1]]}, o200k_count) is None
    assert reach_tokens(RENDERED, SHOWN, {}, o200k_count) is None


def test_an_excerpt_the_rendering_does_not_hold_shows_nothing() -> None:
    shown = [Shown("m.py", 10, A), Shown("q.py", 1, "never rendered\n")]
    assert reach_tokens(RENDERED, shown, {"q.py": [[1, 1]]}, o200k_count) is None


def test_bm25_pack_is_whole_files_in_rank_order_cut_to_whole_lines() -> None:
    files = {"a.py": b"x = 1\ny = 2\n", "b.py": b"z = 3\nw = 4\n", "c.py": None}
    rendered, shown = bm25_pack(files.get, ["c.py", "a.py", "b.py"], 18)
    assert [(s.path, s.text) for s in shown] == [("a.py", "x = 1\ny = 2\n"), ("b.py", "z = 3\n")]
    assert rendered == "## a.py\n```\nx = 1\ny = 2\n```\n## b.py\n```\nz = 3\n```\n"


def test_outside_shares_count_bytes_outside_gold_files_and_gold_functions() -> None:
    shown = [Shown("m.py", 1, "aaaa\nbbbb\n"), Shown("n.py", 1, "cccc\n")]
    files, functions = outside_shares(shown, {"m.py"}, {"m.py": [(2, 2)]})
    assert (files, functions) == (round(5 / 15, 4), round(10 / 15, 4))
    assert outside_shares([], {"m.py"}, {}) == (0.0, 0.0)


def _item(path: str, start: int, end: int, truncated: bool = False) -> Item:
    text = "".join(f"line {n}\n" for n in range(start, end + 1))
    return Item(
        rank=1, path=path, start_line=start, end_line=end, source_sha256="0" * 64,
        excerpt_sha256="0" * 64, bytes=len(text), handle=f"{path}:{start}-{end}@0", kind="symbol",
        truncated=truncated, score=1.0, reasons=(), text=text,
    )  # fmt: skip


def _pack(items: list[Item], omitted: tuple[Omitted, ...] = ()) -> Pack:
    return Pack(task_sha256="0" * 64, budget_bytes=32000, items=tuple(items), omitted=omitted)


def test_causes_name_why_a_first_ranked_gold_file_was_not_reached() -> None:
    gold = {"m.py", "n.py"}
    lines = {"m.py": [[5, 5]]}
    late = _pack([_item("m.py", 1, 9)])
    assert reach_cause(late, lines, "m.py", gold, 2500) == "late"
    assert reach_cause(late, lines, "m.py", gold, 900) is None  # reached in time
    assert reach_cause(late, lines, "x.py", gold, None) is None  # the first file is not gold
    unserved = _pack([_item("m.py", 1, 3)])
    assert reach_cause(unserved, lines, "m.py", gold, None) == "not_served"
    cut = Omitted(path="m.py", reason="budget", start_line=4, end_line=9)
    short = _pack([_item("m.py", 1, 3, truncated=True)], (cut,))
    assert reach_cause(short, lines, "m.py", gold, None) == "cut_short"
    both = {"m.py": [[2, 2]], "n.py": [[1, 1]]}
    assert reach_cause(unserved, both, "m.py", gold, None) == "second_file_missing"


def _row(repo: str, language: str, ours: int | None, theirs: int | None) -> dict[str, object]:
    reach = {"all_lines": {"8000": ours is not None}, "pack_tokens": 100}
    shares = {"outside_gold_files": 0.5, "outside_gold_functions": 0.75}
    return {
        "repo": repo,
        "language": language,
        "excerpt": {
            "reach": {**reach, **shares, "tokens": ours},
            "default": {"tokens": ours, "pack_tokens": 90},
        },
        "bm25": {"reach": {**reach, **shares, "tokens": theirs}},
        "reach_cause": "late" if ours is None else None,
    }


def test_the_summary_gives_shares_within_each_level_the_median_and_the_groups() -> None:
    rows = [
        _row("a/a", "python", 400, None),
        _row("a/a", "python", 1500, 3000),
        _row("b/b", "go", 7000, 900),
        _row("b/b", "go", None, None),
    ]
    got = reach_summary(rows, [8000])
    assert got["excerpt"]["within"] == {
        "500": 0.25, "1000": 0.25, "2000": 0.5, "4000": 0.5, "8000": 0.75,
    }  # fmt: skip
    assert got["excerpt"]["median_tokens"] == 4250.0  # (1,500 + 7,000) / 2
    assert got["bm25"]["median_tokens"] is None  # half unreached: no median
    assert got["excerpt"]["all_lines"] == {"8000": 0.75}
    assert got["per_language"]["go"]["excerpt"]["within"]["8000"] == 0.5
    assert got["per_repo"]["a/a"]["bm25"]["within"]["1000"] == 0.0
    assert got["causes"] == {"late": 1}
    assert got["default"]["pack_tokens_median"] == 90.0
