"""``expand(compact(x)) == x`` byte for byte, for any bytes and for generated JSON, logs and
diffs; every marker's part is the same slice of the original; error, warning and changed
lines are always in the view."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction import memory_store, round_trip
from excerpt.compact import Store, expand

EXAMPLES = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    with memory_store() as s:
        yield s


# ------------------------------------------------------------------------------- strategies

_KEYS = ["a", "b", "name", "id", "é", "\\ud800", "x y", "status", "error"]
_SCALARS = ['"\\ud800"', '"\\udfff tail"', "true", "false", "null", '""', "NaN",
            "Infinity", "-Infinity", str(2**200), str(-(2**70)), "1e400", "-0.0", '"é ✓"',
            '"a\\"b"']  # fmt: skip


def _random_json(rng: random.Random, text: str, depth: int = 0) -> str:
    """Any JSON value, duplicate keys, non-finite numbers, lone surrogates and huge numbers
    included; ``text`` is a string Hypothesis chose, written raw or escaped."""
    roll = rng.randint(0, 9) if depth < 4 else 0
    if roll <= 4:
        return rng.choice([*_SCALARS, json.dumps(text), json.dumps(text, ensure_ascii=False)])
    n = rng.randint(0, 5)
    if roll <= 6:
        return "[" + ", ".join(_random_json(rng, text, depth + 1) for _ in range(n)) + "]"
    members = (f'"{rng.choice(_KEYS)}": {_random_json(rng, text, depth + 1)}' for _ in range(n))
    return "{" + rng.choice([",", ", ", ",\n"]).join(members) + "}"


_value = st.builds(lambda seed, text: _random_json(random.Random(seed), text),
                   st.integers(0, 2**32), st.text(max_size=8))  # fmt: skip


def _obj(values: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda seed, v: "{" + f'"meta": {{"n": {seed % 7}}}, "items": {v}, "a": 1, "a": 2' + "}",
        st.integers(0, 2**32), values,
    )  # fmt: skip


# Large shapes are built from one drawn seed (a few draws per example, not hundreds: the
# suite's time goes to compaction, not to generation); the odd values come from Hypothesis.
_ODD = ['"\\ud800"', '"\\udfff x"', "NaN", "-Infinity", str(2**70), "-0.0e-999", '"é\\n"', "null"]


def _similar_items_of(seed: int, odd: str) -> str:
    """An array of objects of one shape (the case compaction is for), with odd ones in."""
    rng = random.Random(seed)
    keys = rng.sample(["a", "b", "name", "id", "\\ud800", "x y", "status", "error", "a"], 3)
    items = []
    for i in range(rng.randint(5, 40)):
        roll = rng.randint(0, 11)
        if roll == 0:
            items.append(odd)
        elif roll == 1:
            items.append("{" + f'"{keys[0]}": {rng.choice(_ODD)}, "extra": {i}' + "}")
        else:
            items.append(
                "{"
                + ", ".join(
                    f'"{k}": {rng.choice([str(i), _ODD[i % 8], json.dumps(str(i))])}' for k in keys
                )
                + "}"
            )
    return "[" + rng.choice([",", ", ", ",\n  "]).join(items) + "]"


_similar_items = st.builds(_similar_items_of, st.integers(0, 2**32), _value)

_deep = st.integers(1, 3000).map(lambda n: "[" * n + "0" + "]" * n) | st.integers(1, 1000).map(
    lambda n: '{"k": ' * n + "null" + "}" * n
)
_json = st.one_of(
    _value, _similar_items, _deep, _obj(_similar_items),
    st.lists(_similar_items, min_size=1, max_size=3).map(
        lambda xs: '{"a": [' + ",".join(xs) + "]}"
    ),
).map(lambda s: s.encode("utf-8", "surrogatepass"))  # fmt: skip

_NOISE = [
    "2026-01-02T10:00:{n:02d}Z INFO GET /items/{n} 200",
    "Jan  2 10:00:{n:02d} host app[{n}]: heartbeat ok from 10.0.0.{n}:8080",
    "copying build/lib/pkg/module_{n}.py -> dist",
    "\x1b[32mok\x1b[0m test_{n}",
    "plain line {n} with nothing special",
    "",
]
_SIGNALS = [
    "ERROR: connection refused (attempt {n})",
    "warning: unused variable 'x{n}' [-Wunused-variable]",
    "FAILED tests/test_mod.py::test_case_{n} - AssertionError",
    "Traceback (most recent call last):",
    '  File "app/mod.py", line {n}, in handler',
    "E       assert {n} == 0",
    "    at Object.<anonymous> (/app/index.js:{n}:7)",
]


def _log_of(seed: int, tail: bytes) -> bytes:
    rng = random.Random(seed)
    lines: list[str] = []
    for i in range(rng.randint(0, 50)):
        if rng.randint(0, 9) == 0:
            lines.append(rng.choice(_SIGNALS).format(n=i % 60))
            continue
        template = rng.choice(_NOISE)
        lines += [template.format(n=(i + r) % 60) for r in range(rng.choice([1, 1, 1, 4, 12]))]
    end = rng.choice(["\n", "\r\n"])
    return end.join(lines).encode() + end.encode() * bool(lines) + tail


def _diff_of(seed: int) -> bytes:
    rng = random.Random(seed)
    out = []
    for f in range(rng.randint(1, 4)):
        out += [f"diff --git a/f{f}.py b/f{f}.py", "index 1234567..89abcde 100644",
                f"--- a/f{f}.py", f"+++ b/f{f}.py"]  # fmt: skip
        for h in range(rng.randint(1, 3)):
            body, old, new = [], 0, 0
            for i in range(rng.randint(1, 25)):
                op = rng.choice(" " * 6 + "+-")
                text = rng.choice(["x = {n}", "raise ValueError('bad {n}')",
                                   "    return compute(value_{n}, other_{n})", ""])  # fmt: skip
                body.append(op + text.format(n=i))
                old += op != "+"
                new += op != "-"
            out.append(f"@@ -{h * 50 + 1},{old} +{h * 50 + 1},{new} @@ def f():")
            out += body
            if rng.randint(0, 9) == 0:
                out.append("\\ No newline at end of file")
    return ("\n".join(out) + "\n").encode()


_log = st.builds(_log_of, st.integers(0, 2**32), st.binary(max_size=20))
_diff = st.builds(_diff_of, st.integers(0, 2**32))


# -------------------------------------------------------------------------------- properties


@pytest.mark.reliability("B2.20", cases=500)
@EXAMPLES
@given(
    data=st.one_of(
        st.binary(max_size=2048), st.lists(st.binary(max_size=40), max_size=80).map(b"\n".join)
    ),
    kind=st.sampled_from(["auto", "json", "log", "diff"]),
)
def test_any_bytes_come_back_exactly_under_every_kind(data: bytes, kind: str, store: Store) -> None:
    round_trip(data, store, kind)


@pytest.mark.reliability("B2.20", cases=500)
@EXAMPLES
@given(data=_json)
def test_generated_json_comes_back_exactly_and_its_parts_by_path(data: bytes, store: Store) -> None:
    done = round_trip(data, store, "json")
    assert done.kind == "json"
    assert expand(done.id, store=store, path="$").data == data.strip(b" \t\r\n")


@pytest.mark.reliability("B2.20", cases=500)
@EXAMPLES
@given(data=_log)
def test_generated_logs_come_back_exactly_and_keep_every_error_line(
    data: bytes, store: Store
) -> None:
    done = round_trip(data, store, "log")
    view = done.text.encode("utf-8", "surrogateescape")
    for line in data.split(b"\n"):
        if re.search(rb"(?i)error|warning|failed|traceback|assert|File \"", line):
            assert line in view


@pytest.mark.reliability("B2.20", cases=500)
@EXAMPLES
@given(data=_diff)
def test_generated_diffs_come_back_exactly_and_keep_every_changed_line(
    data: bytes, store: Store
) -> None:
    done = round_trip(data, store, "diff")
    kept = done.text.encode().split(b"\n")
    for line in data.split(b"\n"):
        if not line.startswith(b" ") or b"Error" in line:
            assert line in kept


def _hunks(n: int) -> bytes:
    return b"".join(
        b"@@ -%d,3 +%d,3 @@\n ctx\n-old %d\n+new %d\n ctx\n" % (i * 10 + 1, i * 10 + 1, i, i)
        for i in range(n)
    )


_HEAD = b"diff --git a/app.py b/app.py\nindex 1111111..2222222 100644\n--- a/app.py\n+++ b/app.py\n"
# the shapes of diff git writes that are not plain text hunks, and the large ones
DIFFS = {
    "binary": b"diff --git a/logo.png b/logo.png\nindex 1111111..2222222 100644\n"
    b"Binary files a/logo.png and b/logo.png differ\n" + _HEAD + _hunks(30),
    "no-final-newline": _HEAD + b"@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
    b"\\ No newline at end of file\n" + _hunks(30),
    "rename": b"diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\n"
    b"rename to new.py\n" + _HEAD + _hunks(30),
    "mode-only": b"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    + _HEAD
    + _hunks(30),
    "submodule": b"diff --git a/vendor/lib b/vendor/lib\nindex 1111111..2222222 160000\n"
    b"--- a/vendor/lib\n+++ b/vendor/lib\n@@ -1 +1 @@\n-Subproject commit aaaa\n"
    b"+Subproject commit bbbb\n" + _HEAD + _hunks(30),
    "crlf-hunks": _HEAD + _hunks(40).replace(b"\n", b"\r\n"),
    "ten-thousand-hunks": _HEAD + _hunks(10_000),
    "deleted-file": b"diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n"
    b"index 1111111..0000000\n--- a/gone.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"
    + _HEAD
    + _hunks(30),
}


@pytest.mark.parametrize("shape", sorted(DIFFS))
@pytest.mark.reliability("B2.22")
def test_every_diff_shape_keeps_its_changed_lines_and_comes_back_exactly(
    shape: str, store: Store
) -> None:
    data = DIFFS[shape]
    done = round_trip(data, store, "diff")
    kept = set(done.text.encode("utf-8", "surrogateescape").split(b"\n"))
    for line in data.split(b"\n"):
        changed = line.startswith((b"+", b"-")) or line.startswith(
            (b"diff --git", b"Binary files", b"rename ", b"old mode", b"new mode", b"deleted")
        )
        if changed:
            assert line in kept, (shape, line[:60])
