"""Logs with floods: repeated compiler and linter diagnostics group under the first of their
kind with every other location listed, errors stay whole, and passing test lines fold to a
count per file whatever the tests are called."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction import memory_store, round_trip
from excerpt.compact import Store, compact, expand
from excerpt.compact.diagnostics import diagnostics


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    with memory_store() as s:
        yield s


def _gcc(path: str, line: int, col: int, message: str, flag: str, code: str) -> str:
    return (
        f"{path}:{line}:{col}: warning: {message} [{flag}]\n"
        f"  {line} |     {code}\n"
        f"      |     ^~~~\n"
    )


def _flood(n: int = 60) -> str:
    out = ["$ make -k", "gcc -c src/a.c"]
    for i in range(n):
        if i % 3 == 0:
            msg = f"conversion from \u2018long int\u2019 to \u2018int{i % 2}\u2019 may change value"
            out.append(_gcc("src/a.c", 10 + i, 5 + i % 7, msg, "-Wconversion", f"x{i} = y;"))
        elif i % 3 == 1:
            msg = f"declaration of \u2018v{i}\u2019 shadows a previous local"
            out.append(_gcc("src/b.c", 100 + i, 9, msg, "-Wshadow", f"int v{i};"))
        else:
            out.append(f"src/c.c: In function \u2018f{i}\u2019:\n")
            msg = f"comparison of different signedness: \u2018int\u2019 and \u2018size_t\u2019 {i}"
            out.append(_gcc("src/c.c", 200 + i, 12, msg, "-Wsign-compare", f"if (i < n{i})"))
    return "\n".join(line.rstrip("\n") for line in out) + "\nmake: *** [all] Error 2\n"


def test_a_warning_flood_keeps_one_of_each_kind_whole_and_lists_every_other_location(
    store: Store,
) -> None:
    data = _flood().encode()
    done = round_trip(data, store, "log")
    assert done.compacted_bytes <= 0.5 * done.original_bytes
    view = done.text
    for flag in ("-Wconversion", "-Wshadow", "-Wsign-compare"):
        first = next(line for line in data.decode().split("\n") if f"[{flag}]" in line)
        assert first in view  # the first of each kind, whole, with its source and caret
    for m in re.finditer(r"^(src/\w\.c:\d+:\d+): warning:", data.decode(), re.M):
        assert m.group(1) in view  # every location stays in the view
    assert "make: *** [all] Error 2" in view
    # a listed location's line comes back exactly from the marker's range
    marker = next(line for line in view.split("\n") if "src/a.c:13:" in line and "[…" in line)
    a, b = (int(x) for x in re.search(r"--lines (\d+)-(\d+)\]", marker).groups())  # type: ignore[union-attr]
    part = expand(done.id, store=store, lines=f"{a}-{b}").data.decode()
    assert re.search(r"^src/a\.c:13:\d+: warning: conversion", part, re.M)


def test_errors_are_never_grouped_however_many_repeat(store: Store) -> None:
    lines = ["building"] * 12
    for i in range(40):
        lines += [f"src/m.c:{i + 1}:3: error: unknown type name \u2018t{i}\u2019"]
        lines += [f"  {i + 1} | t{i} x;", "    |   ^~"]
    lines += ["done"] * 12
    data = ("\n".join(lines) + "\n").encode()
    done = compact(data, store=store, kind="log")
    for line in lines:
        if ": error:" in line:
            assert line in done.text


def test_rustc_style_diagnostics_group_by_their_header_and_list_their_arrow_locations(
    store: Store,
) -> None:
    blocks = ["   Compiling app v0.1.0 (/src/app)"] * 11
    for i in range(30):
        blocks += [
            f"warning: unused variable: `v{i}`",
            f"  --> src/lib.rs:{10 + i}:9",
            "   |",
            f"{10 + i} |     let v{i} = compute();",
            "   |         ^^ help: if this is intentional, prefix it with an underscore",
            "",
        ]
    blocks += ["warning: `app` (lib) generated 30 warnings"] + ["    Finished dev"] * 10
    data = ("\n".join(blocks) + "\n").encode()
    done = round_trip(data, store, "log")
    assert done.compacted_bytes <= 0.5 * done.original_bytes
    for i in range(30):
        assert f"src/lib.rs:{10 + i}:9" in done.text
    assert "warning: `app` (lib) generated 30 warnings" in done.text


def test_diagnostics_are_read_from_every_common_layout() -> None:
    lines = [
        "src/a.c:1:2: warning: unused variable \u2018x\u2019 [-Wunused-variable]",
        "  1 | int x;",
        "src/a.c:1:2: note: declared here",
        "app/m.py:12: error: Incompatible types in assignment  [assignment]",
        "app/m.py:4:1: F401 'os' imported but unused",
        "pkg/x.go:7:2: SA4006: this value of x is never used",
        "web/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
        "tests/test_a.py:12: AssertionError",
        "lib/x.py:3: DeprecationWarning: old",
    ]
    found = diagnostics(lines)
    assert [(d.location, d.severity, d.code) for d in found] == [
        ("src/a.c:1:2", "warning", "[-Wunused-variable]"),
        ("app/m.py:12", "error", "[assignment]"),
        ("app/m.py:4:1", "", "F401"),
        ("pkg/x.go:7:2", "", "SA4006"),
        ("web/a.ts(3,7)", "error", "TS2322"),
    ]
    assert found[0].end == 3  # its source line and its note belong to it
    one, two = diagnostics(
        [
            "a.c:1:1: warning: \u2018x\u2019 unused [-Wu]",
            "b.c:9:4: warning: \u2018y\u2019 unused [-Wu]",
        ]
    )
    assert one.group == two.group  # quoted names differ: one group


def _pytest_run(names: list[str], failing: set[int]) -> str:
    out = ["============================= test session starts ==============================",
           "platform linux -- Python 3.12.0, pytest-8.3.0", "rootdir: /src", "",
           f"collecting ... collected {len(names)} items", ""]  # fmt: skip
    for i, name in enumerate(names):
        outcome = "FAILED" if i in failing else ("SKIPPED" if i % 17 == 5 else "PASSED")
        out.append(f"{name} {outcome}{' ' * 8}[{100 * (i + 1) // len(names):3d}%]")
    out += ["", "=================================== FAILURES ===================================",
            "______________________________ test_error_raised _______________________________",
            "    def test_error_raised():", ">       assert parse('x') == 1",
            "E       AssertionError: assert 2 == 1", "", "tests/test_b.py:40: AssertionError",
            "=========================== short test summary info ============================",
            "FAILED tests/test_b.py::test_error_raised - AssertionError: assert 2 == 1",
            f"=========== 1 failed, {len(names) - 1} passed in 3.10s ==========="]  # fmt: skip
    return "\n".join(out) + "\n"


def test_a_test_run_folds_its_passing_lines_to_counts_per_file_and_keeps_failures_whole(
    store: Store,
) -> None:
    names = [f"tests/test_a.py::test_error_case_{i}" for i in range(150)]
    names += [f"tests/test_b.py::test_warning_{i}" for i in range(100)]
    names.append("tests/test_b.py::test_error_raised")
    data = _pytest_run(names, failing={len(names) - 1}).encode()
    done = round_trip(data, store, "log")
    assert done.compacted_bytes <= 0.2 * done.original_bytes
    view = done.text
    assert "tests/test_b.py::test_error_raised FAILED" in view
    assert "E       AssertionError: assert 2 == 1" in view
    assert "FAILED tests/test_b.py::test_error_raised - AssertionError: assert 2 == 1" in view
    # a passing test named "error" is not an error: folded, counted under its file
    assert "tests/test_a.py::test_error_case_77 PASSED" not in view
    assert re.search(r"\d+ passed, \d+ skipped in tests/test_a\.py \d+, tests/test_b\.py \d+", view)


def test_passing_lines_of_other_runners_are_quiet_too(store: Store) -> None:
    lines = ["running 120 tests"]
    lines += [f"test parser::tests::error_on_{i} ... ok" for i in range(60)]
    lines += [f"--- PASS: TestErrorPath{i} (0.00s)" for i in range(60)]
    lines += [
        "test parser::tests::rejects_bad ... FAILED",
        "failures:",
        "    boom",
        "test result: FAILED",
    ]
    data = ("\n".join(lines) + "\n").encode()
    done = round_trip(data, store, "log")
    assert done.compacted_bytes <= 0.2 * done.original_bytes
    assert "test parser::tests::rejects_bad ... FAILED" in done.text
    shown = sum(
        1 for line in done.text.split("\n") if line.endswith(" ... ok") or "--- PASS" in line
    )
    counted = re.search(r"(\d+) passed", done.text)
    assert counted is not None and int(counted.group(1)) + shown == 120


# -------------------------------------------------------------------------------- properties

_FLAGS = ["-Wconversion", "-Wshadow", "-Wunused", "-Wsign-compare"]


def _flood_of(seed: int, noise: bytes) -> bytes:
    """A build log: warnings of a few kinds at random places (some repeated exactly), errors,
    notes, rustc blocks, `In function` lines, progress noise and passing tests."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(rng.randint(0, 120)):
        roll = rng.randint(0, 9)
        path = rng.choice(["src/a.c", "lib/b b.c", "C:\\w\\x.c", "é/ü.c"])
        if roll <= 4:
            flag = rng.choice(_FLAGS)
            where = f"{path}:{rng.randint(1, 900)}:{rng.randint(1, 80)}"
            message = f"\u2018v{i}\u2019 {flag[2:]} issue {rng.randint(0, 3)}"
            out.append(f"{where}: warning: {message} [{flag}]")
            out += rng.choice([[f"  {i} |   v{i} = w;", "      |   ^"], [], ["\t^"]])
            if rng.randint(0, 5) == 0:
                out.append(f"{path}:{i}:1: note: previous declaration here")
        elif roll == 5:
            out.append(
                f"{path}:{i + 1}:2: error: expected \u2018;\u2019 before \u2018}}\u2019 token"
            )
        elif roll == 6:
            out += [f"warning: unused import: `m{i % 4}`", f"  --> src/m.rs:{i}:5", "   |", ""]
        elif roll == 7:
            out.append(f"{path}: In function \u2018f{i}\u2019:")
        elif roll == 8:
            out.append(f"tests/t.py::test_error_{i} {rng.choice(['PASSED', 'FAILED', 'XPASS'])}")
        else:
            out.append(rng.choice(["[ 12%] Building C object", "", "make[2]: Leaving directory"]))
    end = rng.choice(["\n", "\r\n"])
    return end.join(out).encode("utf-8") + end.encode() * bool(out) + noise


@pytest.mark.reliability("B2.20", cases=250)
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.builds(_flood_of, st.integers(0, 2**32), st.binary(max_size=30)))
def test_generated_floods_come_back_exactly_and_lose_no_location_error_or_failure(
    data: bytes, store: Store
) -> None:
    done = round_trip(data, store, "log")
    again = compact(data, store=store, kind="log")
    assert again.text == done.text  # deterministic
    view = done.text.encode("utf-8", "surrogateescape")
    spans = [tuple(int(x) for x in str(e["lines"]).split("-")) for e in done.elisions]
    for n, line in enumerate(data.split(b"\n"), start=1):
        text = line.rstrip(b"\r")
        if b": error:" in text or b"FAILED" in text or b"XPASS" in text:
            assert text in view
        m = re.match(rb"(.+?:\d+:\d+): warning:", text) or re.match(rb"\s*--> (\S+:\d+:\d+)", text)
        if m and line not in view:
            assert m.group(1) in view  # named by its location ...
            a, b = next(s for s in spans if s[0] <= n <= s[1])  # ... inside a marker's range
            assert expand(done.id, store=store, lines=f"{n}-{n}").data.startswith(line)
            assert a <= n <= b
