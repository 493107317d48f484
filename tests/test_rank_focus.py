"""What an issue is about: its first line and its prose outweigh the code it quotes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import write_tree
from excerpt.pack import PackRequest, build_pack, build_plan
from excerpt.rank.task import analyze_task

ISSUE_WITH_CODE = """\
{title}

Saving an order in the admin loses the note the clerk typed.

```python
class Order(models.Model):
    note = NoteField()
    total = PriceField()
```

    >>> order.save()
Traceback (most recent call last):
  File "shop/views.py", line 3, in save
"""

SOURCES = {
    "shop/__init__.py": "",
    "shop/notes.py": (
        "class NoteField:\n    def clean(self, value):\n        return value.strip()\n"
    ),
    "shop/prices.py": (
        "class PriceField:\n    def clean(self, value):\n        return round(value, 2)\n"
    ),
    "shop/catalogue.py": (
        "def list_items():\n    return []\n\n\ndef describe():\n    return 'items'\n"
    ),
}


def _ranked(root: Path, cache: Path, task: str) -> list[str]:
    plan: dict[str, Any] = build_plan(PackRequest(repo=root, task=task, cache_dir=cache)).to_dict()
    return list(dict.fromkeys(c["path"] for c in plan["candidates"]))


def test_the_first_line_and_the_prose_are_told_apart_from_code() -> None:
    task = analyze_task(
        "\n\nNoteField loses text\nThe clerk's note goes missing.\n"
        "```\nPriceField()\n```\n    indented_call()\n>>> repl_name()\n"
        'Traceback (most recent call last):\n  File "a.py", line 1, in traced_name\n'
    )
    assert task.title_terms == ("note", "field", "notefield", "lose", "text")
    assert {"NoteField", "loses", "text"} <= task.title_words
    assert "clerk" in task.prose_words and "NoteField" in task.prose_words
    for code_only in ("PriceField", "indented_call", "repl_name", "traced_name"):
        assert code_only not in task.prose_words, code_only


def test_a_name_in_the_title_outranks_names_only_in_the_code_sample(
    tmp_path: Path, cache_dir: Path
) -> None:
    root = write_tree(tmp_path / "repo", SOURCES)
    about_notes = _ranked(root, cache_dir, ISSUE_WITH_CODE.format(title="NoteField drops text"))
    assert about_notes.index("shop/notes.py") < about_notes.index("shop/prices.py")
    plan = build_plan(
        PackRequest(
            repo=root,
            task=ISSUE_WITH_CODE.format(title="NoteField drops text"),
            cache_dir=cache_dir,
        )
    ).to_dict()
    score = {c["path"]: c["score"] for c in plan["candidates"]}
    # the title's name counts double, a name seen only in code about a third
    assert score["shop/notes.py"] > 2.5 * score["shop/prices.py"]
    about_prices = _ranked(root, cache_dir, ISSUE_WITH_CODE.format(title="PriceField drops cents"))
    assert about_prices.index("shop/prices.py") < about_prices.index("shop/notes.py")


def test_the_reason_says_where_the_task_named_the_symbol(tmp_path: Path, cache_dir: Path) -> None:
    root = write_tree(tmp_path / "repo", SOURCES)
    plan = build_plan(
        PackRequest(
            repo=root,
            task=ISSUE_WITH_CODE.format(title="NoteField drops text"),
            cache_dir=cache_dir,
        )
    ).to_dict()
    details = {
        c["path"]: [r["detail"] for r in c["reasons"] if r["signal"] == "defines"]
        for c in plan["candidates"]
    }
    assert "defines NoteField named in the task's first line" in details["shop/notes.py"]
    assert "defines PriceField named in the task's code or traceback" in details["shop/prices.py"]


def test_the_title_alone_matches_files_again(tmp_path: Path, cache_dir: Path) -> None:
    root = write_tree(tmp_path / "repo", SOURCES)
    plan = build_plan(
        PackRequest(repo=root, task="catalogue items\nnothing else here", cache_dir=cache_dir)
    ).to_dict()
    top = plan["candidates"][0]
    assert top["path"] == "shop/catalogue.py"
    assert any(
        r["signal"] == "lexical" and "first line" in r["detail"] and "catalogue" in r["detail"]
        for r in top["reasons"]
    )


def test_labelled_metadata_in_the_first_line_is_not_its_subject() -> None:
    task = analyze_task("Handoff note (from: Codex session, to: next agent)\n\nGoal: pins")
    assert task.title_terms == ("handoff", "note")
    kept = analyze_task("IndexError in identify_format (io.registry)\nbody")
    assert "registry" in kept.title_terms


def test_a_named_test_file_is_counted_but_not_pinned_above_the_code(
    tmp_path: Path, cache_dir: Path
) -> None:
    root = write_tree(
        tmp_path / "repo",
        {
            "calc/__init__.py": "",
            "calc/ops.py": "def add(a, b):\n    return a - b\n",
            "tests/test_ops.py": (
                "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
            ),
        },
    )
    task = "add() returns the wrong sum\n\nThe check in tests/test_ops.py fails: 2 + 2 gives 0."
    plan = build_plan(PackRequest(repo=root, task=task, cache_dir=cache_dir)).to_dict()
    order = list(dict.fromkeys(c["path"] for c in plan["candidates"]))
    assert order[0] == "calc/ops.py"
    named = [c for c in plan["candidates"] if c["path"] == "tests/test_ops.py"]
    assert named and any(r["signal"] == "path" for r in named[0]["reasons"])


def test_the_top_file_is_served_whole_when_it_fits_in_half_the_budget(
    tmp_path: Path, cache_dir: Path
) -> None:
    body = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n\n" for i in range(40))
    root = write_tree(
        tmp_path / "repo",
        {"calc/__init__.py": "", "calc/ops.py": body + "def add(a, b):\n    return a - b\n"},
    )
    size = len((root / "calc/ops.py").read_bytes())
    task = "add() returns the wrong sum"
    lines = body.count("\n") + 2

    def items(budget: int) -> list[dict[str, Any]]:
        pack = build_pack(PackRequest(repo=root, task=task, budget=budget, cache_dir=cache_dir))
        return [i for i in pack.to_dict()["items"] if i["path"] == "calc/ops.py"]

    whole = items(2 * size + 10)
    assert [(i["kind"], i["start_line"], i["end_line"]) for i in whole] == [("file", 1, lines)]
    focused = items(2 * size - 10)
    assert focused and all(i["kind"] != "file" for i in focused)
    assert any(i["start_line"] <= lines - 1 <= i["end_line"] for i in focused)
