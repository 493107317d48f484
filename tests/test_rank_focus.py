"""What an issue is about: its first line and its prose outweigh the code it quotes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import write_tree
from excerpt.deliver import build_pack, build_plan
from excerpt.index.view import MemoryView, SymbolSpan
from excerpt.pack import PackRequest
from excerpt.pack.regions import choose_regions
from excerpt.rank.signals import Anchor
from excerpt.rank.task import analyze_task
from memory_views import defining, memory_view, ranked, symbol

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
    plan = build_plan(PackRequest(repo=root, task=task, cache_dir=cache)).plan.to_dict()
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
    ).plan.to_dict()
    score = {c["path"]: c["score"] for c in plan["candidates"]}
    # the title's name counts double, a name seen only in code about a third
    assert score["shop/notes.py"] > 2.5 * score["shop/prices.py"]
    about_prices = _ranked(root, cache_dir, ISSUE_WITH_CODE.format(title="PriceField drops cents"))
    assert about_prices.index("shop/prices.py") < about_prices.index("shop/notes.py")


# SOURCES as the index answers ranking: its files and their definitions
SOURCES_VIEW = memory_view(
    SOURCES,
    [
        symbol("function", "list_items", "list_items", 1, 2, "shop/catalogue.py"),
        symbol("function", "describe", "describe", 5, 6, "shop/catalogue.py"),
        symbol("class", "NoteField", "NoteField", 1, 3, "shop/notes.py"),
        symbol("method", "clean", "NoteField.clean", 2, 3, "shop/notes.py"),
        symbol("class", "PriceField", "PriceField", 1, 3, "shop/prices.py"),
        symbol("method", "clean", "PriceField.clean", 2, 3, "shop/prices.py"),
    ],
)


def test_the_reason_says_where_the_task_named_the_symbol() -> None:
    details = {
        f.path: [r.detail for r in f.reasons if r.signal == "defines"]
        for f in ranked(SOURCES_VIEW, ISSUE_WITH_CODE.format(title="NoteField drops text"))
    }
    assert "defines NoteField named in the task's first line" in details["shop/notes.py"]
    assert "defines PriceField named in the task's code or traceback" in details["shop/prices.py"]


def test_the_title_alone_matches_files_again(tmp_path: Path, cache_dir: Path) -> None:
    root = write_tree(tmp_path / "repo", SOURCES)
    plan = build_plan(
        PackRequest(repo=root, task="catalogue items\nnothing else here", cache_dir=cache_dir)
    ).plan.to_dict()
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
    plan = build_plan(PackRequest(repo=root, task=task, cache_dir=cache_dir)).plan.to_dict()
    order = list(dict.fromkeys(c["path"] for c in plan["candidates"]))
    assert order[0] == "calc/ops.py"
    named = [c for c in plan["candidates"] if c["path"] == "tests/test_ops.py"]
    assert named and any(r["signal"] == "path" for r in named[0]["reasons"])


def test_the_top_file_is_served_whole_when_it_fits_in_seven_tenths_of_the_budget(
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
        pack = build_pack(
            PackRequest(repo=root, task=task, budget=budget, cache_dir=cache_dir)
        ).pack
        return [dict(i) for i in pack.to_dict()["items"] if i["path"] == "calc/ops.py"]

    whole = items(size * 10 // 7 + 10)
    # every line of the file, its strongest region first: ``add`` with the two blank lines
    # above it (where a new function would go), then the rest of the file
    served = sorted(n for i in whole for n in range(i["start_line"], i["end_line"] + 1))
    assert served == list(range(1, lines + 1))
    assert whole[0]["start_line"] <= lines - 3 and whole[0]["end_line"] == lines
    assert {r["signal"] for i in whole[1:] for r in i["reasons"]} >= {"match"}
    focused = items(size * 10 // 7 - 10)
    covered = {n for i in focused for n in range(i["start_line"], i["end_line"] + 1)}
    assert focused and len(covered) < lines
    assert focused[0]["start_line"] <= lines - 3 and focused[0]["end_line"] == lines


def _symbol(name: str, start: int, end: int) -> SymbolSpan:
    return SymbolSpan(
        path="m.py", kind="function", name=name, qualname=name, start_line=start, end_line=end
    )


def test_regions_take_in_the_blank_lines_around_them_but_never_a_neighbours_line() -> None:
    lines = [
        "def a():\n", "    return 1\n", "\n", "\n", "\n",  # 1-5
        "def b():\n", "    return 2\n", "\n",  # 6-8
        "def c():\n", "    return 3\n",  # 9-10
    ]  # fmt: skip
    symbols = [_symbol(n, s, e) for n, s, e in (("a", 1, 2), ("b", 6, 7), ("c", 9, 10))]
    anchors = [
        Anchor(6, 7, 2.0, "defines"),
        Anchor(1, 2, 1.0, "defines"),
        Anchor(9, 10, 0.5, "defines"),
    ]
    regions = choose_regions(len(lines), symbols, anchors, [], lines=lines)
    spans = {(r.start_line, r.end_line) for r in regions}
    # ``b`` (the strongest) claims two blank lines above and the one below; ``a`` gets the
    # one left; ``c`` starts where ``b`` ends; nothing overlaps, no region grows past two
    assert spans == {(1, 3), (4, 8), (9, 10)}
    unpadded = choose_regions(len(lines), symbols, anchors, [])
    assert [(r.start_line, r.end_line) for r in unpadded] == [(6, 7), (1, 2), (9, 10)]


def test_a_region_padded_to_the_whole_file_is_a_file_region() -> None:
    lines = ["\n", "def a():\n", "    return 1\n", "\n"]
    symbols = [_symbol("a", 2, 3)]
    regions = choose_regions(4, symbols, [Anchor(2, 3, 1.0, "defines")], [], lines=lines)
    assert [(r.start_line, r.end_line, r.kind) for r in regions] == [(1, 4, "file")]


PROJECT = {
    "walker/__init__.py": "from walker.app import Walker\n",
    "walker/app.py": "class Walker:\n    def run(self):\n        pass\n",
    "walker/hidden.py": (
        "import walker\n\n\ndef skip_hidden(entries):\n"
        "    return [e for e in entries if not e.startswith('.')]\n"
    ),
    "walker/links.py": "import walker\n\n\ndef follow(link):\n    return link\n",
}


def _project_view(app_class: str, held_by: int) -> MemoryView:
    """PROJECT, its walker/app.py defining ``app_class``, as the index answers ranking: each
    of its four files holds the package's name ``walker`` (in its path, or an import), one
    holds ``hidden``, and ``held_by`` hold the class's name."""
    return memory_view(
        PROJECT,
        [
            symbol("class", app_class, app_class, 1, 3, "walker/app.py"),
            symbol("method", "run", f"{app_class}.run", 2, 3, "walker/app.py"),
            symbol("function", "skip_hidden", "skip_hidden", 4, 5, "walker/hidden.py"),
            symbol("function", "follow", "follow", 4, 5, "walker/links.py"),
        ],
        frequencies={"walker": 4, "hidden": 1, app_class.lower(): held_by},
    )


def test_a_capitalised_word_most_files_hold_is_not_a_pointer_to_its_definition() -> None:
    task = "Hidden entries are listed\n\nWith Walker version 2.1 the entries are not skipped."
    assert "walker/app.py" not in defining(_project_view("Walker", held_by=4), task)


@pytest.mark.parametrize(
    "task",
    [
        pytest.param("`Walker` lists hidden entries", id="quoted"),
        pytest.param("Walker.run lists hidden entries", id="dotted"),
    ],
)
def test_the_same_word_written_as_code_still_finds_its_definition(task: str) -> None:
    assert "walker/app.py" in defining(_project_view("Walker", held_by=4), task)


def test_a_capitalised_name_few_files_hold_still_finds_its_definition() -> None:
    task = "Hidden entries are listed\n\nWith Pathfinder 2.1 the entries are not skipped."
    assert "walker/app.py" in defining(_project_view("Pathfinder", held_by=1), task)


HOSTILE_UNITS = ["a.", "_a", "A_", "aB", "/", "a/", "a-", "a.b:", "`a", "a(", "a::", "\\"]
HOSTILE_UNITS += ["a:1\n", 'File "a", line 1\n', "http://a/", "0a", "[a](", "a.py:", "a/b.c "]


@pytest.mark.reliability("T1", cases=1)
@pytest.mark.parametrize("unit", HOSTILE_UNITS)
def test_hostile_task_text_is_packed_in_time_linear_in_its_length(
    tmp_path: Path, cache_dir: Path, unit: str
) -> None:
    """A task of ``a.a.a.…`` once took the square of its length in task analysis (25 s at
    50 KB), and one long word (``_a_a…``) the square of it in ranking (47 s). Measured
    against ordinary prose of the same length in the same test, through the whole pack
    (analysis, ranking, regions): within 10 times it, where a quadratic pass is hundreds of
    times slower at this size."""
    import time

    root = write_tree(tmp_path / "repo", PROJECT)
    size = 50_000
    hostile = (unit * (size // len(unit) + 1))[:size]
    prose = ("fix the refund retry in the billing webhook handler " * (size // 50 + 1))[:size]

    def seconds(text: str) -> float:
        best = float("inf")
        for _ in range(2):
            started = time.perf_counter()
            build_pack(PackRequest(repo=root, task=text, budget=4000, cache_dir=cache_dir))
            best = min(best, time.perf_counter() - started)
        return best

    baseline = seconds(prose)
    assert seconds(hostile) <= 10 * baseline + 0.05, (unit, baseline)


@pytest.mark.parametrize(
    ("title", "scope"),
    [
        ("fix(fetch): handle a missing body", ("fetch",)),
        ("perf(bash-v2): short-circuit", ("bash-v2",)),
        ("fix(types,headers): spread", ("types", "headers")),
        ("[router] routes collide", ("router",)),
        ("walk: encapsulate buffering", ()),
        ("fix: quote args", ()),
        ("chore(deps): bump", ()),
        ("TypeError: bad operand", ()),
        ("[v4] deprecate clearCookie", ()),
        ("Admin changelist: list_filter fails", ()),
    ],
)
def test_the_first_line_s_scope_is_read_and_change_types_or_errors_are_not_scopes(
    title: str, scope: tuple[str, ...]
) -> None:
    assert analyze_task(title + "\n\nbody").scope == scope


SCOPED = {
    "lib/adapters/fetch.js": "export function send(config) { return config.body; }\n",
    "lib/adapters/xhr.js": "export function send(config) { return config.data; }\n",
    "lib/core/AxiosHeaders.js": "export class Headers { set(name) { return name; } }\n",
    "lib/core/request.js": "export function request(config) { return config; }\n",
    "test/fetch.test.js": "test('fetch', () => {});\n",
}


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("fix(fetch): the body is sent twice", "lib/adapters/fetch.js"),
        ("fix(headers): clear drops every entry", "lib/core/AxiosHeaders.js"),
    ],
)
def test_the_file_a_scope_names_ranks_first_and_says_so(
    tmp_path: Path, cache_dir: Path, task: str, expected: str
) -> None:
    first = _first_candidate(write_tree(tmp_path / "repo", SCOPED), cache_dir, task)
    assert first["path"] == expected
    assert any("scope" in r["detail"] for r in first["reasons"])


def test_a_first_line_opening_with_a_file_s_name_pins_that_file(
    tmp_path: Path, cache_dir: Path
) -> None:
    tree = {
        "src/printer.rs": "pub fn print(line: &str) { write(line); }\n",
        # more of the task's words, and a definition the first line names
        "src/pretty_printer.rs": (
            "/// Highlight long lines: de-duplicate the code that highlights them.\n"
            "pub fn highlight(long_lines: bool) -> bool { long_lines }\n"
        ),
    }
    root = write_tree(tmp_path / "repo", tree)
    task = "printer.rs: de-duplicate code to highlight long lines"
    assert analyze_task(task).scope_file == "printer.rs"
    assert _first_candidate(root, cache_dir, task)["path"] == "src/printer.rs"
    # written in passing, a bare file name is counted, not pinned
    passing = "De-duplicate code to highlight long lines, as printer.rs does"
    assert analyze_task(passing).scope_file is None
    assert _first_candidate(root, cache_dir, passing)["path"] == "src/pretty_printer.rs"


def _first_candidate(root: Path, cache: Path, task: str) -> Any:
    """The top candidate of the task's plan, as its JSON gives it."""
    return build_plan(PackRequest(repo=root, task=task, cache_dir=cache)).plan.to_dict()[
        "candidates"
    ][0]


# A workspace of crates and a Go tree: a task may name a crate by its directory's name.
COMPONENTS = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
    "crates/derive/Cargo.toml": '[package]\nname = "acme_derive"\n',
    "crates/derive/src/lib.rs": (
        "/// Expands the derive of an enum.\n"
        "pub fn expand(variant: Variant) -> Output {\n    variant.into()\n}\n"
    ),
    "crates/core/Cargo.toml": '[package]\nname = "acme_core"\n',
    "crates/core/src/lib.rs": (
        "/// A struct field of an enum variant with attributes.\n"
        "pub struct Field { pub attrs: Vec<Attr> }\n"
        "pub fn fields_of(variant: &Variant) -> Vec<Field> { variant.fields() }\n"
    ),
    "go.mod": "module example.com/acme\n",
    "xds/internal/balancer/picker.go": (
        "package balancer\n\nfunc Pick(cluster Cluster) int { return cluster.First() }\n"
    ),
    "xds/internal/resolver/watch.go": (
        "package resolver\n\n// Watch picks the endpoints of a cluster update.\n"
        "func Watch(update Update) []Endpoint { return update.Endpoints }\n"
    ),
}


def test_a_component_the_task_names_by_its_directory_ranks_first(
    tmp_path: Path, cache_dir: Path
) -> None:
    task = (
        "derive panics on an enum variant with field attributes\n\nThe struct field attrs of "
        "the variant are lost."
    )
    first = _first_candidate(write_tree(tmp_path / "repo", COMPONENTS), cache_dir, task)
    assert first["path"] == "crates/derive/src/lib.rs"
    assert any("names its component" in r["detail"] for r in first["reasons"])


def test_a_layout_directory_or_a_word_nobody_wrote_names_no_component() -> None:
    # components are read from paths alone: the files are the whole of what they need
    view = memory_view(COMPONENTS)
    task = "internal error when the crates are built\n\nThe src tree fails."
    details = [r.detail for f in ranked(view, task) for r in f.reasons]
    assert not any("names its component" in d for d in details)
    named = "derive panics on an enum variant\n\nThe variant is lost."  # the control
    assert any("names its component" in r.detail for f in ranked(view, named) for r in f.reasons)
