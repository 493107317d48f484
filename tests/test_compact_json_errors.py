"""JSON whose items mostly carry errors: a run of them folds into one marker that writes
every distinct error message once, as its raw JSON, with the names of the items that have it;
no message is lost from the view, and the original comes back byte for byte.

"No message lost" is checked on the raw tokens as written: every string under a key named
``error(s)``, ``warning(s)``, ``problems``, ``missing`` or ``invalid`` at any depth (stack
traces aside: a marker counts them), and for linters and test reports also under
``message(s)``/``msg``, read with the scanner that keeps each value's bytes, must appear in
the view byte for byte."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction import MARK, memory_store, round_trip
from excerpt.compact import Compaction, Store, compact
from excerpt.compact.jsonscan import Node, decode_string, parse

EXAMPLES = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A JSON marker stands inline, after the indentation of its line, which is not its own; its
# details may hold quotes, brackets and "·": it ends at the first " · excerpt expand ID".
ERROR_KEYS = re.compile(r"error|errors|warning|warnings|problems|missing|invalid", re.I)
MESSAGE_KEYS = re.compile(r"message|messages|msg", re.I)
TRACE_KEYS = re.compile(r"stack|stacktrace|traceback|trace", re.I)


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    with memory_store() as s:
        yield s


def error_tokens(data: bytes, messages: bool = False) -> set[bytes]:
    """The raw token of every non-empty string under an error-named key at any depth (stack
    traces aside), and with ``messages`` of every string that is a ``message(s)``/``msg``
    member or an item of one."""
    text = data.decode("latin-1")
    root = parse(text)
    assert root is not None
    out: set[bytes] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, under = stack.pop()
        if under and node.kind == "string" and node.end - node.start > 2:
            out.add(text[node.start : node.end].encode("latin-1"))
        for key, _, value in node.members:
            name = decode_string(key) if key is not None else ""
            if TRACE_KEYS.fullmatch(name):
                continue
            stack.append((value, under or bool(ERROR_KEYS.fullmatch(name))))
            if messages and MESSAGE_KEYS.fullmatch(name):
                items = [m for _, _, m in value.members] if value.kind == "array" else [value]
                out.update(
                    text[v.start : v.end].encode("latin-1")
                    for v in items
                    if v.kind == "string" and v.end - v.start > 2
                )
    return out


def lost(data: bytes, done: Compaction, messages: bool = False) -> list[bytes]:
    view = done.text.encode("utf-8", "surrogateescape")
    return sorted(t for t in error_tokens(data, messages) if t not in view)


def _markers(done: Compaction) -> list[str]:
    return [m.group().decode() for m in MARK.finditer(done.text.encode("utf-8", "surrogateescape"))]


# ------------------------------------------------------------------------------- payloads


def npm_tree(seed: int = 7, top: int = 24) -> bytes:
    """An ``npm ls --all --json`` of a tree whose packages fail their ranges: each node has
    ``invalid`` (or ``missing``) and a ``problems`` entry, repeated in the root ``problems``
    and in ``error.summary``; dependencies nest inside dependencies."""
    rng = random.Random(seed)
    problems: list[str] = []

    def node(name: str, parent: str, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {"version": "0.0.1-local"}
        if rng.random() < 0.85:  # npm leaves it out of a deduplicated entry
            out["overridden"] = False
        if rng.random() < 0.05:
            out = {"required": f"^{rng.randint(1, 9)}.0.0", "missing": True}
            problem = f"missing: {name}@{out['required']}, required by {parent}@0.0.1-local"
            out["problems"] = [problem]
            problems.append(problem)
            return out
        else:
            ranges = [f'"^{rng.randint(1, 20)}.{rng.randint(0, 9)}.0" from node_modules/{parent}']
            if rng.random() < 0.3:
                ranges.append(f'"^{rng.randint(1, 9)}.0.0" from node_modules/{name}-peer')
            out["invalid"] = ", ".join(ranges)
            problem = f"invalid: {name}@0.0.1-local /tmp/proj/node_modules/{name}"
        out["problems"] = [problem]
        if problem not in problems:
            problems.append(problem)
        if depth < 3 and rng.random() < 0.5:
            kids = [f"{name}-{k}" for k in ("core", "utils", "types", "cli")[: rng.randint(1, 4)]]
            out["dependencies"] = {k: node(k, name, depth + 1) for k in kids}
        return out

    deps = {f"pkg-{i:02d}": node(f"pkg-{i:02d}", "app", 1) for i in range(top)}
    doc = {
        "name": "app",
        "problems": problems,
        "dependencies": {"@scope/app-core": {"version": "1.0.0", "dependencies": deps}},
        "error": {"code": "ELSPROBLEMS", "summary": "\n".join(problems), "detail": ""},
    }
    return json.dumps(doc, indent=2).encode()


_RULES = [
    ("no-unused-vars", 2, "'{v}' is defined but never used."),
    ("semi", 2, "Missing semicolon."),
    ("quotes", 1, "Strings must use singlequote."),
    ("no-console", 1, "Unexpected console statement."),
    ("eqeqeq", 2, "Expected '===' and instead saw '=='."),
    ("@typescript-eslint/no-explicit-any", 1, "Unexpected any. Specify a different type."),
    ("prefer-const", 2, "'{v}' is never reassigned. Use 'const' instead."),
    ("no-undef", 2, "'{v}' is not defined."),
]


def eslint_report(files: int = 200) -> bytes:
    """``eslint --format json``: one result per file, 80% of them with messages."""
    out = []
    for i in range(files):
        messages = []
        for m in range((1 + i * 7 % 4) if i % 5 else 0):
            rule, severity, text = _RULES[(i + m * 3) % len(_RULES)]
            line = 3 + (i * 13 + m * 29) % 180
            messages.append(
                {"ruleId": rule, "severity": severity, "message": text.format(v=f"value{i}_{m}"),
                 "line": line, "column": 1 + (i + m) % 40, "nodeType": "Identifier",
                 "messageId": rule.split("/")[-1], "endLine": line, "endColumn": 12}
            )  # fmt: skip
        errors = sum(1 for m in messages if m["severity"] == 2)
        result: dict[str, Any] = {
            "filePath": f"/home/dev/app/src/features/module_{i:03d}.ts",
            "messages": messages, "suppressedMessages": [], "errorCount": errors,
            "fatalErrorCount": 0, "warningCount": len(messages) - errors,
            "fixableErrorCount": 0, "fixableWarningCount": 0,
        }  # fmt: skip
        if messages:  # eslint includes the source of a file with messages
            result["source"] = "".join(
                f"export const value{i}_{k} = compute({k}, '{i}');\n" for k in range(12)
            )
        result["usedDeprecatedRules"] = []
        out.append(result)
    return json.dumps(out).encode()


def run_report(results: int = 300) -> bytes:
    """A test run's JSON report: 70% of the results failed, some with a message of their own
    and many with a shared one, each failure with its trace."""
    shared = ["AssertionError: expected status 200, got 500",
              "TimeoutError: operation timed out after 5000 ms",
              "ConnectionRefusedError: [Errno 111] Connection refused"]  # fmt: skip
    tests = []
    for i in range(results):
        area = ("api", "db", "cache", "auth")[i % 4]
        test: dict[str, Any] = {
            "nodeid": f"tests/test_{area}.py::test_case_{i:03d}",
            "outcome": "failed" if i % 10 < 7 else "passed",
            "duration": round(0.01 + (i * 37 % 100) / 1000, 3),
            "error": None, "message": None, "trace": None,
        }  # fmt: skip
        if test["outcome"] == "failed":
            own = i % 3 == 0
            test["error"] = "AssertionError" if own else shared[i % 3].split(":")[0]
            test["message"] = f"assert {i} == {i + 1}, item {i} differs" if own else shared[i % 3]
            test["trace"] = (
                f'Traceback (most recent call last):\n  File "tests/test_{area}.py", line'
                f" {10 + i}, in test_case_{i:03d}\n    check(item)\n{test['message']}"
            )
        tests.append(test)
    summary = {"passed": sum(t["outcome"] == "passed" for t in tests), "total": results}
    return json.dumps(
        {"created": 1767225600.0, "summary": summary, "tests": tests}, indent=2
    ).encode()


def api_runs(runs: int = 300, failing: tuple[int, ...] = (41, 170, 263)) -> bytes:
    """An API listing: 300 workflow runs, 3 of them failed with an error."""
    items = []
    for i in range(runs):
        run: dict[str, Any] = {
            "id": 9000 + i, "name": "CI", "head_sha": f"{i * 2654435761 % 2**32:08x}",
            "status": "completed", "conclusion": "success",
            "html_url": f"https://example.invalid/runs/{9000 + i}",
            "created_at": f"2026-01-{1 + i % 28:02d}T10:{i % 60:02d}:00Z",
            "error": None,
        }  # fmt: skip
        if i in failing:
            run["conclusion"] = "failure"
            run["error"] = f"job 'test' exited with code {i % 7 + 1}"
        items.append(run)
    return json.dumps({"total_count": runs, "workflow_runs": items}, indent=2).encode()


def failed_records(records: int = 200) -> bytes:
    """An API's answer to a batch whose records all failed validation: a list of errors,
    each with its pointer and a detail many share."""
    errors = []
    for i in range(records):
        field = ("email", "phone", "name", "zip")[i % 4]
        errors.append({
            "id": f"err-{i:03d}", "status": "422", "code": "validation_failed",
            "source": {"pointer": f"/data/{i}/attributes/{field}"},
            "title": "Invalid Attribute",
            "detail": f"{field} is not valid" if i % 3 else f"{field} must not be blank",
            "meta": {"docs": "https://example.invalid/docs/errors#validation_failed"},
        })  # fmt: skip
    return json.dumps({"data": None, "errors": errors}, indent=2).encode()


# ------------------------------------------------------------------------------ behaviour


def test_a_tree_whose_entries_all_fail_folds_and_keeps_every_message(store: Store) -> None:
    data = npm_tree()
    done = round_trip(data, store, "json")
    assert not done.unchanged and done.compacted_bytes < 0.65 * done.original_bytes
    assert lost(data, done) == []
    folded = [e for e in done.elisions if e["what"] == "members with errors"]
    assert folded and all(e["path"].startswith('$.dependencies["@scope/app-core"]') for e in folded)
    # each entry's problems line is in the root problems: pointed to, not written again
    marks = _markers(done)
    assert any(re.search(r'; \d+ "problems" entries as in \$\.problems\)', m) for m in marks)
    for problem in json.loads(data)["problems"]:
        assert not any(json.dumps(problem) in m for m in marks)


def test_an_error_nested_in_a_folded_item_is_named_by_its_path(store: Store) -> None:
    data = npm_tree()
    done = round_trip(data, store, "json")
    doc = json.loads(data)["dependencies"]["@scope/app-core"]["dependencies"]
    nested = [
        (f"{top} > {name}", dep["invalid"])
        for top, node in doc.items() for name, dep in node.get("dependencies", {}).items()
        if "invalid" in dep
    ]  # fmt: skip
    assert nested
    marks = " ".join(_markers(done))
    written = [(who, why) for who, why in nested if who in marks]
    assert written  # the others sit in items that stayed whole
    for who, why in written:
        entry = re.search(re.escape(f'"invalid": {json.dumps(why)} (') + r"([^)]*)\)", marks)
        assert entry and who in entry.group(1).split(", ")


def test_the_first_item_of_each_group_stays_whole(store: Store) -> None:
    items = []
    for i in range(40):
        item: dict[str, Any] = {"name": f"pkg-{i}", "version": "1.0.0"}
        if i % 4 == 3:
            item["missing"] = True
        else:
            item["invalid"] = f'"^{i}.0.0" from the root project'
        items.append(item)
    data = json.dumps({"dependencies": {x["name"]: x for x in items}}, indent=2).encode()
    done = round_trip(data, store, "json")
    for first in (items[0], items[3]):  # the first invalid, the first missing
        whole = json.dumps(first, indent=2).replace("\n", "\n    ")
        assert f'"{first["name"]}": {whole}' in done.text
    assert [e["path"] for e in done.elisions] == ["$.dependencies[1:3]", "$.dependencies[4:40]"]
    assert all(e["what"] == "members with errors" for e in done.elisions)
    mark = _markers(done)[1]
    assert '"missing": true (pkg-7, pkg-11, ' in mark and '"invalid": "\\"^38.0.0\\" from' in mark


def test_a_linter_report_keeps_every_message_with_its_files(store: Store) -> None:
    data = eslint_report()
    done = round_trip(data, store, "json")
    assert lost(data, done, messages=True) == []
    assert done.compacted_bytes < 0.3 * done.original_bytes
    (mark,) = [m for m in _markers(done) if "with errors" in m]
    # a message many files share is written once, followed by every file that has it
    assert mark.count('"message": "Missing semicolon."') == 1
    entry = re.search(r'"message": "Missing semicolon\." \(([^)]*)\)', mark)
    assert entry and len(entry.group(1).split(", ")) > 20


def test_a_test_report_keeps_every_failure_message_and_names_every_failed_test(
    store: Store,
) -> None:
    data = run_report()
    done = round_trip(data, store, "json")
    assert lost(data, done, messages=True) == []
    assert done.compacted_bytes < 0.3 * done.original_bytes
    for test in json.loads(data)["tests"]:
        if test["outcome"] == "failed":
            assert test["nodeid"] in done.text
    for mark in _markers(done):
        assert mark.count('"message": "TimeoutError: operation timed out after 5000 ms"') <= 1
    assert re.search(r'\d+ "trace" values not shown', done.text)


def test_a_list_of_errors_folds_and_keeps_every_string_of_every_error(store: Store) -> None:
    data = failed_records()
    done = round_trip(data, store, "json")
    assert lost(data, done) == []
    assert done.compacted_bytes < 0.3 * done.original_bytes
    (mark,) = _markers(done)
    # what every error of the run says is written once, for all of them
    assert '"title": "Invalid Attribute" (all 199)' in mark
    assert re.search(r'"detail": "zip must not be blank" \(err-003, err-015, ', mark)


def test_a_listing_with_a_few_failed_items_keeps_them_whole_as_before(store: Store) -> None:
    data = api_runs()
    done = round_trip(data, store, "json")
    doc = json.loads(data)["workflow_runs"]
    for i in (41, 170, 263):
        assert json.dumps(doc[i], indent=2).replace("\n", "\n    ") in done.text
    assert all(e["what"] == "similar items" for e in done.elisions)
    assert done.compacted_bytes < 0.04 * done.original_bytes  # 96.7% saved before


def test_half_the_items_with_errors_is_not_most(store: Store) -> None:
    items = [{"id": i, "status": "failed" if i % 2 else "ok", "note": "x" * 30} for i in range(20)]
    done = round_trip(json.dumps(items).encode(), store, "json")
    for item in items[1::2]:
        assert json.dumps(item) in done.text
    assert all(e["what"] == "similar items" for e in done.elisions)


def test_an_error_a_marker_cannot_write_byte_for_byte_keeps_its_item(store: Store) -> None:
    items = [{"id": i, "error": f"bad record {i % 3}", "payload": "y" * 40} for i in range(30)]
    data = json.dumps(items).encode().replace(b"bad record 2", b"bad \xff record 2")
    done = round_trip(data, store, "json")
    assert data.count(b"bad \xff record 2") == 10
    assert done.text.encode("utf-8", "surrogateescape").count(b"bad \xff record 2") == 10
    assert lost(data, done) == []


def test_a_run_whose_messages_outweigh_it_stays_whole(store: Store) -> None:
    items = [{"id": i, "error": f"{i}: " + "long distinct message " * 8} for i in range(12)]
    data = json.dumps(items).encode()
    done = round_trip(data, store, "json")
    assert done.unchanged  # folding would not save, so nothing is folded


def test_pip_inspect_is_compacted_as_before(store: Store) -> None:
    data = subprocess.run(
        [sys.executable, "-m", "pip", "inspect"], capture_output=True, check=True, timeout=60
    ).stdout
    done = compact(data, store=store, kind="json")
    assert not done.unchanged and done.compacted_bytes < 0.1 * done.original_bytes
    assert not any("with errors" in e["what"] for e in done.elisions)


def test_a_marker_whose_messages_hold_quotes_brackets_and_dots_reads_as_one(
    store: Store,
) -> None:
    items = [{"id": f"it[{i}]", "error": f"bad · value \"{i % 4}\" > [x] 'q'"} for i in range(30)]
    data = json.dumps({"a'b": items}).encode()
    done = round_trip(data, store, "json")
    assert not done.unchanged and "it[1]" in done.text
    assert all(m.endswith("']") for m in _markers(done))


# ------------------------------------------------------------------------------ properties

# characters that could break a marker's reading: quotes, escapes, separators, the marker's
# own "·", line and paragraph separators, non-ASCII
_ODD_CHARS = st.sampled_from(['"', "\\", "·", " > ", ",", ";", "(", ")", "[", "]", "'", "é",
                              "✓", "\n", "\t", "\u2028", "\x85", "\ud800",
                              "\U0001f600"])  # fmt: skip
_texts = st.lists(
    st.lists(_ODD_CHARS | st.characters(codec="utf-8"), max_size=6).map("".join),
    min_size=1, max_size=4,
)  # fmt: skip


# the items' kinds: {i} its number, {ident} its name, {msg} and {msg2} messages, {deps}
# nested dependencies (items of their own)
_STYLES = [
    '{{"id": {ident}, "ok": true, "note": {msg2}',
    '{{"id": {ident}, "error": {msg}',
    '{{"name": {ident}, "errors": [{msg}, {msg2}]',
    '{{"key": {ident}, "status": "failed", "message": {msg}, "ms": {i}',
    '{{"path": {ident}, "severity": 2, "message": {msg}, "line": {i}',
    '{{"filePath": {ident}, "messages": [{{"ruleId": "r{i}", "severity": 1, "message": {msg}}}],'
    ' "warningCount": 1',
    '{{"id": {ident}, "missing": true',
    '{{"version": "1", "invalid": {msg}, "problems": [{msg}]{deps}',
]
_META = (
    ', "meta": {{"size": {i}, "tags": ["alpha", "beta"], "url": "https://example.invalid/{i}"}}}}'
)


class _ErrorRich:
    """A document whose containers of similar items mostly carry errors (a third of the
    time, only a few do): error strings and lists, failed statuses and diagnostics with
    messages, counts, ``missing`` flags, nested dependencies; messages shared between
    items, written raw or escaped; sometimes a summary list that repeats them, or the whole
    a list of errors."""

    def __init__(self, seed: int, texts: list[str]) -> None:
        self.rng = random.Random(seed)
        self.texts = texts
        self.pool = [*texts, *(f"failure {k}: {self.rng.choice(texts)}" for k in range(3))]
        self.clean = self.rng.choice([0.1, 0.1, 0.8])  # the share of items without errors

    def token(self, s: str) -> str:
        return json.dumps(s, ensure_ascii=self.rng.random() < 0.5)

    def name(self, i: int) -> str:
        return self.rng.choice([f"n{i}", f"{self.rng.choice(self.texts)}{i}", f"pkg/{i}"])

    def item(self, i: int, depth: int) -> str:
        rng = self.rng
        style = 0 if rng.random() < self.clean else rng.randint(1, len(_STYLES) - 1)
        deps = ""
        if style == len(_STYLES) - 1 and depth < 2 and rng.random() < 0.5:
            kids = ", ".join(
                f"{self.token(self.name(k))}: {self.item(k, depth + 1)}" for k in range(3)
            )
            deps = f', "dependencies": {{{kids}}}'
        msg, msg2 = (self.token(rng.choice(self.pool)) for _ in range(2))
        head = _STYLES[style].format(
            i=i, ident=self.token(self.name(i)), msg=msg, msg2=msg2, deps=deps
        )
        return head + _META.format(i=i)

    def document(self) -> bytes:
        rng = self.rng
        n = rng.randint(5, 40)
        sep = rng.choice([",", ", ", ",\n  "])
        if rng.random() < 0.5:
            body = "[" + sep.join(self.item(i, 0) for i in range(n)) + "]"
        else:
            members = (f"{self.token(self.name(i % 20))}: {self.item(i, 0)}" for i in range(n))
            body = "{" + sep.join(members) + "}"
        roll = rng.random()
        if roll < 0.4:
            summary = ", ".join(self.token(s) for s in self.pool[: rng.randint(1, len(self.pool))])
            body = f'{{"problems": [{summary}],\n "items": {body}}}'
        elif roll < 0.6:  # a list of errors: every string of every item is an error's
            body = f'{{"data": null, "errors": {body}}}'
        return body.encode("utf-8", "surrogatepass")


_error_rich = st.builds(
    lambda seed, texts: _ErrorRich(seed, texts).document(), st.integers(0, 2**32), _texts
)


@pytest.mark.reliability("B2.20", cases=300)
@EXAMPLES
@given(data=_error_rich)
def test_error_rich_json_comes_back_exactly_part_by_part_and_keeps_every_message(
    data: bytes, store: Store
) -> None:
    done = round_trip(data, store, "json")
    assert lost(data, done, messages=True) == []
    assert compact(data, store=store, kind="json").text == done.text
