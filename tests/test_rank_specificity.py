"""A name weighs by how specific it is, and a pack follows the code it chose."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from excerpt.index.view import MemoryView
from excerpt.pack.regions import choose_regions
from excerpt.rank import signals
from excerpt.rank.signals import Anchor
from excerpt.rank.task import analyze_task
from excerpt.rank.weights import default_weights
from memory_views import defining, file_info, memory_view, symbol


@pytest.mark.parametrize(
    ("text", "opening", "not_opening"),
    [
        pytest.param(
            "Admin changelist: filter fails\n\nWhen a ModelAdmin sets it. Cannot resolve.",
            {"Admin", "When", "Cannot"},
            {"ModelAdmin"},
            id="sentence-starts",
        ),
        pytest.param(
            "Pipeline should have a length\n\n```\npipe = Pipeline([])\n```\n",
            set(),
            {"Pipeline"},
            id="written-again-inside-a-line",
        ),
        pytest.param(
            "* Add tests\n- Fixes docs\n# Notes", {"Add", "Fixes", "Notes"}, set(), id="lists"
        ),
        pytest.param("The Walker skips files", {"The"}, {"Walker"}, id="mid-sentence"),
    ],
)
def test_a_capital_that_only_opens_a_sentence_is_told_apart(
    text: str, opening: set[str], not_opening: set[str]
) -> None:
    task = analyze_task(text)
    assert opening <= task.initial_only
    assert not (not_opening & task.initial_only)


def test_a_name_defined_many_times_in_one_file_weighs_by_its_definitions() -> None:
    # ``Admin`` nested in eight tests of one file, and defined once elsewhere: nine
    # definitions, so each file's gain is a ninth of one definition's (the file repeating it
    # gains once, as the other), and the repeated stubs yield to that file's other lines
    nested = [
        symbol("class", "Admin", f"Test{n}.test_it.Admin", 5 * n, 5 * n + 2, "shop/checks.py")
        for n in range(1, 9)
    ]
    single = symbol("class", "Admin", "Admin", 1, 3, "shop/filters.py")
    view = MemoryView(
        file_infos={p: file_info(p) for p in ("shop/checks.py", "shop/filters.py")},
        symbols=[*nested, single],
    )
    w = default_weights()
    out = signals.named_symbols(analyze_task("The Admin shows nothing"), view, view.files(), w)
    gains: dict[str, float] = {}
    for c in out:
        gains[c.path] = gains.get(c.path, 0.0) + c.gain
    one = w.defines_gain * w.title_name_factor
    assert gains == pytest.approx({"shop/checks.py": one / 9, "shop/filters.py": one / 9})
    weights = {c.path: c.anchor.weight for c in out if c.anchor is not None}
    assert weights["shop/checks.py"] == pytest.approx(w.defines_anchor / math.sqrt(8))
    assert weights["shop/filters.py"] == pytest.approx(w.defines_anchor)


def test_a_class_named_like_a_word_opening_a_sentence_is_not_a_definition_hit() -> None:
    # query/when.py defines ``class When``, query/lookup.py ``lookup``; each word in one file
    view = memory_view(
        ["query/__init__.py", "query/when.py", "query/lookup.py"],
        [
            symbol("class", "When", "When", 1, 3, "query/when.py"),
            symbol("method", "resolve", "When.resolve", 2, 3, "query/when.py"),
            symbol("function", "lookup", "lookup", 1, 2, "query/lookup.py"),
        ],
        frequencies={"when": 1, "lookup": 1},
    )
    opening = "Lookup of a name fails\n\nWhen a name has a dot, the lookup fails."
    assert "query/when.py" not in defining(view, opening)
    written = "Lookup of a name fails\n\nInside a When clause, the lookup fails."
    assert "query/when.py" in defining(view, written)


MODULE = [
    "class Store:\n",  # 1
    "    '''Where rows are kept.'''\n",  # 2
    "    limit = 10\n",  # 3
    "\n",  # 4
    "    def put(self, row):\n",  # 5
    "        row = _clean(row)\n",  # 6
    "        self.rows.append(row)\n",  # 7
    "\n",  # 8
    "    def size(self):\n",  # 9
    "        return len(self.rows)\n",  # 10
    "\n",  # 11
    "\n",  # 12
    "def _clean(row):\n",  # 13
    "    return row.strip()\n",  # 14
    "\n",  # 15
    "\n",  # 16
    "def load(store, rows):\n",  # 17
    "    for row in rows:\n",  # 18
    "        store.put(row)\n",  # 19
    "\n",  # 20
    "\n",  # 21
    "def unrelated():\n",  # 22
    "    return 0\n",  # 23
]
SYMBOLS = [
    symbol("class", "Store", "Store", 1, 10),
    symbol("method", "put", "Store.put", 5, 7),
    symbol("method", "size", "Store.size", 9, 10),
    symbol("function", "_clean", "_clean", 13, 14),
    symbol("function", "load", "load", 17, 19),
    symbol("function", "unrelated", "unrelated", 22, 23),
]


FOLLOW = dataclasses.replace(default_weights(), follow_regions=2)


def test_a_chosen_method_brings_its_class_header_its_callee_and_its_caller() -> None:
    anchors = [Anchor(5, 7, 1.0, "defines")]
    regions = choose_regions(len(MODULE), SYMBOLS, anchors, [], lines=MODULE, geometry=FOLLOW)
    covered = {n for r in regions for n in range(r.start_line, r.end_line + 1)}
    # the method, its class's head, the helper it calls and the function calling it; not the
    # function that has nothing to do with it
    assert {1, 2, 3, 5, 6, 7, 13, 14, 17, 18, 19} <= covered
    assert not {22, 23} & covered
    assert regions[0].start_line <= 5 and regions[0].end_line >= 7  # what led there first
    assert {"calls", "called_by"} <= {r.signal for r in regions}
    assert all(r.weight < regions[0].weight for r in regions[1:])
    off = dataclasses.replace(default_weights(), follow_regions=0)
    alone = choose_regions(len(MODULE), SYMBOLS, anchors, [], lines=MODULE, geometry=off)
    assert [(r.start_line, r.end_line) for r in alone] == [(4, 8)]


def test_following_the_code_never_overlaps_what_was_chosen_and_stops_at_a_window() -> None:
    # ``size`` and ``put`` both chosen: the header is taken once, nothing overlaps
    anchors = [Anchor(5, 7, 1.0, "defines"), Anchor(9, 10, 0.8, "defines")]
    regions = choose_regions(len(MODULE), SYMBOLS, anchors, [], lines=MODULE, geometry=FOLLOW)
    spans = sorted((r.start_line, r.end_line) for r in regions)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))
    assert sum(r.signal == "header" for r in regions) <= 1
    # a line outside any symbol is a window: it leads nowhere
    windowed = choose_regions(
        len(MODULE),
        SYMBOLS,
        [Anchor(21, 21, 1.0, "stack_frame")],
        [],
        lines=MODULE,
        geometry=FOLLOW,
    )
    assert {r.signal for r in windowed} == {"stack_frame"}


def test_an_exception_the_task_names_counts_less_than_the_code_it_names() -> None:
    symbols = [
        symbol("class", "FieldError", "FieldError", 1, 2, "core/exceptions.py"),
        symbol("class", "ChangeList", "ChangeList", 1, 9, "admin/views.py"),
    ]
    view = MemoryView(
        file_infos={p: file_info(p) for p in ("core/exceptions.py", "admin/views.py")},
        symbols=symbols,
    )
    w = default_weights()
    task = analyze_task("The ChangeList raises FieldError on a related field")
    gains: dict[str, float] = {}
    for c in signals.named_symbols(task, view, view.files(), w):
        gains[c.path] = gains.get(c.path, 0.0) + c.gain
    assert w.error_name_factor < 1
    assert gains["core/exceptions.py"] == pytest.approx(
        gains["admin/views.py"] * w.error_name_factor
    )


def test_a_method_written_with_its_class_locates_its_file_however_many_share_its_name() -> None:
    # ``_eval_evalf`` is defined by twenty classes; the task writes ``Function._eval_evalf``:
    # that one definition is as specific as a name defined once
    paths = [f"pkg/m{n}.py" for n in range(20)]
    symbols = [
        symbol("method", "_eval_evalf", f"C{n}._eval_evalf", 5, 9, p) for n, p in enumerate(paths)
    ]
    symbols.append(symbol("method", "_eval_evalf", "Function._eval_evalf", 3, 8, "pkg/fn.py"))
    view = MemoryView(file_infos={p: file_info(p) for p in [*paths, "pkg/fn.py"]}, symbols=symbols)
    w = default_weights()
    task = analyze_task("evalf is not recursive\n\nThe code is in `Function._eval_evalf`.")
    out = signals.named_symbols(task, view, view.files(), w)
    gains: dict[str, float] = {}
    for c in out:
        gains[c.path] = gains.get(c.path, 0.0) + c.gain
    assert gains == pytest.approx({"pkg/fn.py": w.defines_exact_gain})
    bare = signals.named_symbols(
        analyze_task("evalf is not recursive\n\nThe code is in `_eval_evalf`."),
        view, view.files(), w,
    )  # fmt: skip
    assert not bare  # twenty-one definitions of a bare name locate nothing
