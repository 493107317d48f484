"""Diff compaction: lockfiles, generated, minified, snapshot and vendored files, binary
patches, whitespace-only hunks and the bodies of long new or deleted files fold, headers kept
and the file named in each marker; every other changed line stays; ``expand --path FILE``
returns every section of one file, byte for byte."""

from __future__ import annotations

import io
import random
import re
import sys
from collections.abc import Iterator
from itertools import count
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction import memory_store, round_trip
from excerpt.cli import main
from excerpt.compact import Compaction, Store, compact, expand
from excerpt.errors import UsageError

EXAMPLES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEADERS = ("diff --git ", "index ", "--- ", "+++ ", "@@ ", "new file mode", "commit ",
           "deleted file mode", "rename ", "old mode", "new mode", "Binary files",
           "GIT binary patch")  # fmt: skip


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    with memory_store() as s:
        yield s


def _view_lines(done: Compaction) -> set[bytes]:
    return set(done.text.encode("utf-8", "surrogateescape").split(b"\n"))


def _markers(done: Compaction) -> list[str]:
    return [line for line in done.text.splitlines() if line.lstrip().startswith("[… ")]


# ---------------------------------------------------------------------------- diff builders


def _hunk(old_start: int, body: list[str], new_start: int | None = None) -> list[str]:
    old = sum(not x.startswith("+") for x in body)
    new = sum(not x.startswith("-") for x in body)
    return [f"@@ -{old_start},{old} +{old_start if new_start is None else new_start},{new} @@",
            *body]  # fmt: skip


def _modified(path: str, *hunks: list[str]) -> list[str]:
    head = [f"diff --git a/{path} b/{path}", "index 1111111..2222222 100644",
            f"--- a/{path}", f"+++ b/{path}"]  # fmt: skip
    return head + [line for h in hunks for line in h]


def _created(path: str, body: list[str]) -> list[str]:
    return [f"diff --git a/{path} b/{path}", "new file mode 100644", "index 0000000..3333333",
            "--- /dev/null", f"+++ b/{path}", f"@@ -0,0 +1,{len(body)} @@",
            *(f"+{x}" for x in body)]  # fmt: skip


def _deleted(path: str, body: list[str]) -> list[str]:
    return [f"diff --git a/{path} b/{path}", "deleted file mode 100644", "index 4444444..0000000",
            f"--- a/{path}", "+++ /dev/null", f"@@ -1,{len(body)} +0,0 @@",
            *(f"-{x}" for x in body)]  # fmt: skip


def _ordinary(path: str, n: int = 0) -> list[str]:
    """A small real change: its changed lines must all stay."""
    body = [" def refund(order):", f"-    return order.total  # v{n}",
            f"+    return order.total - order.refunded  # v{n}", " ",
            " def retry(order):"]  # fmt: skip
    return _modified(path, _hunk(10 + n, body))


def _text(*parts: list[str]) -> bytes:
    return ("\n".join(line for part in parts for line in part) + "\n").encode()


def _lock_hunk(n: int = 0, size: int = 40) -> list[str]:
    body = []
    for i in range(size):
        body.append(f' name = "package-{n}-{i}"')
        if i % 8 == 3:
            body += [f'-version = "1.{i}.0"', f'+version = "1.{i}.1"']
    return _hunk(100 + n, body)


def _commit(n: int) -> list[str]:
    return [f"commit {n:040x}", "Author: A U Thor <author@example.com>",
            "Date:   Thu Jan 1 00:00:00 2026 +0000", "", f"    Change number {n}", ""]  # fmt: skip


# ---------------------------------------------------------------------------- behaviour


@pytest.mark.parametrize(
    ("path", "why"),
    [("uv.lock", "a lockfile"), ("web/package-lock.json", "a lockfile"),
     ("go.sum", "a lockfile"), ("Cargo.lock", "a lockfile"), ("gradle.lockfile", "a lockfile"),
     ("static/app.min.js", "a minified file"), ("static/app.js.map", "a minified file"),
     ("tests/__snapshots__/view.test.js.snap", "a snapshot file"),
     ("vendor/github.com/pkg/errors/errors.go", "vendored"),
     ("web/node_modules/left-pad/index.js", "vendored")],
    ids=["uv", "npm", "go", "cargo", "gradle", "minified", "sourcemap", "snapshot", "vendor",
         "node_modules"],
)  # fmt: skip
def test_a_lockfile_section_folds_with_its_headers_kept_and_its_counts_in_the_marker(
    path: str, why: str, store: Store
) -> None:
    lock = _modified(path, _lock_hunk(0), _lock_hunk(1, 30))
    data = _text(_ordinary("app/refund.py"), lock, _ordinary("app/retry.py", 1))
    done = round_trip(data, store, "diff")
    kept = _view_lines(done)
    for line in lock:
        assert (line.encode() in kept) == line.startswith(("diff", "index", "---", "+++", "@@"))
    marks = [m for m in _markers(done) if why in m]
    assert len(marks) == 2 and f"{path}, {why}: +5 \u22125)" in marks[0]
    assert f"{path}, {why}: +4 \u22124)" in marks[1]
    for raw in data.split(b"\n"):
        if raw.startswith((b"+", b"-")) and b"version" not in raw:
            assert raw in kept


@pytest.mark.parametrize(
    "path", ["src/lockfile.py", "app/vendoring.py", "docs/snapshots.md", "lib/map.py"]
)
def test_a_file_named_near_a_convention_keeps_every_changed_line(path: str, store: Store) -> None:
    data = _text(_modified(path, _lock_hunk(0), _lock_hunk(1)))
    done = round_trip(data, store, "diff")
    kept = _view_lines(done)
    assert all(line in kept for line in data.split(b"\n") if line.startswith((b"+", b"-")))


def test_a_generated_file_folds_by_the_comment_in_its_first_lines_in_every_commit(
    store: Store,
) -> None:
    header = [" #", "-# This file is autogenerated by pip-compile with Python 3.12",
              "+# This file is autogenerated by pip-compile with Python 3.13", " #"]  # fmt: skip
    pins = [f" package-{i}==1.{i}" for i in range(30)]
    first = _modified("requirements/dev.txt", _hunk(1, header + pins[:10]))
    later = _modified("requirements/dev.txt", _lock_hunk(2))  # no header in sight here
    go = _created("api/api.pb.go", ["// Code generated by protoc-gen-go. DO NOT EDIT.", *pins])
    data = _text(_commit(1), first, [""], _commit(2), later, go, _ordinary("app/refund.py"))
    done = round_trip(data, store, "diff")
    marks = _markers(done)
    assert sum("requirements/dev.txt, a generated file" in m for m in marks) == 2
    assert any("api/api.pb.go, a generated file: +31 \u22120)" in m for m in marks)
    kept = _view_lines(done)
    assert b"-# This file is autogenerated by pip-compile with Python 3.12" not in kept
    assert b"+    return order.total - order.refunded  # v0" in kept


@pytest.mark.parametrize(
    "first_lines",
    [['+GREETING = "this text is autogenerated by nothing"'],  # not a comment
     [f"+x{i} = {i}" for i in range(12)] + ["+# DO NOT EDIT below this line"]],  # too far down
    ids=["not-a-comment", "past-the-head"],
)  # fmt: skip
def test_a_marker_outside_a_comment_or_past_the_first_lines_is_not_generated(
    first_lines: list[str], store: Store
) -> None:
    body = first_lines + [f"+value_{i} = compute({i}, {i * 7})  # step {i}" for i in range(30)]
    data = _text(_modified("app/settings.py", _hunk(1, [" import os", *body])))
    done = round_trip(data, store, "diff")
    kept = _view_lines(done)
    assert all(line in kept for line in data.split(b"\n") if line.startswith(b"+"))


def _module(n: int) -> list[str]:
    out = ['"""A new module."""', "", "import os", ""]
    for k in range(n):
        out += [f"def step_{k}(value):", f'    """Step {k} of the pipeline."""',
                f"    total = value * {k}",
                *(f"    total += helper_{k}_{j}(value)" for j in range(8)),
                f"    return total + {k}", ""]  # fmt: skip
        if k == n // 2:
            out += ["class Broken:", "    def run(self):", "        raise ValueError('broken')", ""]
    return out


def test_a_new_file_keeps_its_head_its_outline_and_its_error_lines(store: Store) -> None:
    module = _module(30)
    data = _text(_ordinary("app/refund.py"), _created("app/pipeline.py", module))
    done = round_trip(data, store, "diff")
    kept = _view_lines(done)
    for i, line in enumerate(module):
        outline = line.startswith(("def ", "class ")) or "raise ValueError" in line
        if i < 12 or outline:
            assert f"+{line}".encode() in kept, line
    assert b"+    total += helper_20_3(value)" not in kept
    marks = _markers(done)
    assert marks and all("new file app/pipeline.py: +" in m for m in marks)
    assert f"+{len(module)} in all; head and outline kept" in marks[0]


def test_a_deleted_file_keeps_its_head_and_a_short_new_file_stays_whole(store: Store) -> None:
    short = [f"line {i} of a short new file" for i in range(20)]
    gone = _module(20)
    data = _text(_created("docs/short.md", short), _deleted("app/old.py", gone))
    done = round_trip(data, store, "diff")
    kept = _view_lines(done)
    assert all(f"+{line}".encode() in kept for line in short)
    assert all(f"-{line}".encode() in kept for line in gone[:12])
    assert b"-def step_19(value):" not in kept
    assert any("deleted file app/old.py: \u2212" in m for m in _markers(done))


def test_a_markdown_new_file_keeps_its_headings(store: Store) -> None:
    doc = ["# Guide", ""]
    for k in range(12):
        doc += [f"## Part {k}", "", *(f"Sentence {j} of part {k}, plain prose." for j in range(6))]
    data = _text(_created("docs/guide.md", doc))
    kept = _view_lines(round_trip(data, store, "diff"))
    assert all(f"+## Part {k}".encode() in kept for k in range(12))
    assert b"+Sentence 5 of part 11, plain prose." not in kept


def test_a_whitespace_only_hunk_folds_and_keeps_its_header(store: Store) -> None:
    code = [f"value_{i} = compute({i}, other_{i})" for i in range(8)]
    reindent = _hunk(40, [f"-  {x}" for x in code] + [f"+    {x}" for x in code])
    words = [f"word{i}" for i in range(40)]
    reflow = _hunk(
        80, ["-" + " ".join(words), "+" + " ".join(words[:20]), "+" + " ".join(words[20:])]
    )
    real = _hunk(120, [" x = 1", "-y = 2", "+y = 3", " z = 4"])
    data = _text(_modified("app/calc.py", reindent, reflow, real))
    done = round_trip(data, store, "diff")
    kept = _view_lines(done)
    assert b"@@ -40,8 +40,8 @@" in kept and b"@@ -80,1 +80,2 @@" in kept
    assert not any(f"+    {x}".encode() in kept for x in code)
    assert ("+" + " ".join(words[:20])).encode() not in kept
    assert b"-y = 2" in kept and b"+y = 3" in kept
    marks = _markers(done)
    assert any("whitespace-only change in app/calc.py: +8 \u22128)" in m for m in marks)
    assert any("whitespace-only change in app/calc.py: +2 \u22121)" in m for m in marks)


def test_a_binary_patch_folds_and_one_line_binary_changes_stay(store: Store) -> None:
    blob = [f"{chr(65 + i % 26)}" + "zcmV+Tbk0W%Y~Q#&6b" * 3 for i in range(40)]
    binary = [
        "diff --git a/img/logo.png b/img/logo.png",
        "index 1111111..2222222 100644",
        "GIT binary patch",
        "literal 2920",
        *blob,
        "",
        "literal 0",
        "HcmV?d00001",
        "",
    ]
    others = ["diff --git a/img/icon.png b/img/icon.png", "index 5555555..6666666 100644",
              "Binary files a/img/icon.png and b/img/icon.png differ",
              "diff --git a/run.sh b/run.sh", "old mode 100644", "new mode 100755"]  # fmt: skip
    data = _text(binary, others, _ordinary("app/refund.py"))
    done = round_trip(data, store, "diff")
    kept = _view_lines(done)
    assert all(line.encode() in kept for line in [*binary[:3], *others])
    assert not any(line.encode() in kept for line in blob)
    assert any("binary patch of img/logo.png: literal 2,920 bytes, then literal 0 bytes" in m
               for m in _markers(done))  # fmt: skip


def test_every_other_changed_line_stays_and_the_view_is_the_same_each_time(
    store: Store, tmp_path: Path
) -> None:
    data = _text(_ordinary("a.py"), _modified("uv.lock", _lock_hunk()), _ordinary("b.py", 2),
                 _created("c.py", _module(10)), _ordinary("d.py", 3))  # fmt: skip
    done = round_trip(data, store, "diff")
    kept = _view_lines(done)
    for path in ("a.py", "b.py", "d.py"):
        section = _text(_ordinary(path, {"a.py": 0, "b.py": 2, "d.py": 3}[path]))
        assert all(line in kept for line in section.split(b"\n"))
    again = compact(data, store=Store(root=tmp_path / "other"), kind="diff")
    assert again.text == done.text


# ---------------------------------------------------------------------------- --path FILE


def _sections(data: bytes, path_line: str) -> bytes:
    """The sections whose ``diff --git`` line is ``path_line``, found by hand: up to the
    next ``diff --git`` or ``commit`` line."""
    out, inside = [], False
    for line in data.splitlines(keepends=True):
        if line.startswith((b"diff --git ", b"commit ")):
            inside = line.rstrip(b"\n") == path_line.encode()
        if inside:
            out.append(line)
    return b"".join(out)


def test_path_on_a_git_diff_returns_every_line_of_that_files_section(store: Store) -> None:
    data = _text(_ordinary("app/refund.py"), _modified("uv.lock", _lock_hunk()),
                 _ordinary("app/retry.py", 1))  # fmt: skip
    done = compact(data, store=store, kind="diff")
    got = expand(done.id, store=store, path="uv.lock")
    assert got.data == _sections(data, "diff --git a/uv.lock b/uv.lock")
    start = data.split(b"\n").index(b"diff --git a/uv.lock b/uv.lock") + 1
    assert got.lines == ((start, start + len(got.data.splitlines()) - 1),)
    assert expand(done.id, store=store, path="./app/retry.py").data == _sections(
        data, "diff --git a/app/retry.py b/app/retry.py"
    )


def test_path_on_a_log_returns_the_files_sections_from_every_commit_in_order(
    store: Store,
) -> None:
    data = _text(_commit(1), _ordinary("app/refund.py"), _ordinary("app/retry.py"), [""],
                 _commit(2), _ordinary("docs/x.md"), [""],
                 _commit(3), _ordinary("app/refund.py", 5), [""])  # fmt: skip
    done = compact(data, store=store, kind="diff")
    got = expand(done.id, store=store, path="app/refund.py")
    assert got.data == _sections(data, "diff --git a/app/refund.py b/app/refund.py")
    assert len(got.lines) == 2 and got.data.count(b"diff --git") == 2
    assert got.data.endswith(b"# v5\n \n def retry(order):\n\n")  # up to the next commit


def test_path_names_a_renamed_or_deleted_file_by_its_old_name(store: Store) -> None:
    rename = ["diff --git a/old/name.py b/new/name.py", "similarity index 90%",
              "rename from old/name.py", "rename to new/name.py",
              "index 1111111..2222222 100644", "--- a/old/name.py", "+++ b/new/name.py",
              *_hunk(3, ["-x = 1", "+x = 2"])]  # fmt: skip
    data = _text(rename, _deleted("gone.py", ["a", "b"]), _ordinary("app/refund.py"))
    done = compact(data, store=store, kind="diff")
    for name in ("new/name.py", "old/name.py", "b/new/name.py"):
        assert expand(done.id, store=store, path=name).data == _text(rename)
    assert expand(done.id, store=store, path="gone.py").data == _text(
        _deleted("gone.py", ["a", "b"])
    )


def test_path_names_a_plain_unified_diffs_file_and_a_quoted_git_path(store: Store) -> None:
    plain = ["diff -u old/app/x.py new/app/x.py",
             "--- old/app/x.py\t2026-01-01 10:00:00.000000000 +0000",
             "+++ new/app/x.py\t2026-01-02 10:00:00.000000000 +0000", *_hunk(1, ["-a", "+b"]),
             "--- y.py", "+++ y.py", *_hunk(1, ["-c", "+d"])]  # fmt: skip
    quoted = ['diff --git "a/caf\\303\\251 menu.txt" "b/caf\\303\\251 menu.txt"',
              "index 1111111..2222222 100644", '--- "a/caf\\303\\251 menu.txt"',
              '+++ "b/caf\\303\\251 menu.txt"', *_hunk(1, ["-e", "+f"])]  # fmt: skip
    data = _text(plain, quoted)
    done = compact(data, store=store, kind="diff")
    for name in ("app/x.py", "new/app/x.py"):
        assert expand(done.id, store=store, path=name).data == _text(plain[:6])
    assert expand(done.id, store=store, path="y.py").data == _text(plain[6:])
    assert expand(done.id, store=store, path="caf\u00e9 menu.txt").data == _text(quoted)


def test_path_naming_no_file_of_a_diff_says_which_files_it_has(store: Store) -> None:
    data = _text(_ordinary("app/refund.py"), _ordinary("app/retry.py"))
    done = compact(data, store=store, kind="diff")
    with pytest.raises(UsageError, match=r"names no file .*app/refund\.py, app/retry\.py"):
        expand(done.id, store=store, path="app/missing.py")


def test_path_on_a_log_is_a_usage_error_and_on_json_still_a_json_path(store: Store) -> None:
    log = b"".join(b"2026-01-01 INFO step %d done\n" % i for i in range(50))
    done = compact(log, store=store, kind="log")
    with pytest.raises(UsageError, match="neither JSON nor a diff"):
        expand(done.id, store=store, path="app/refund.py")
    doc = b'{"a": [1, 2, 3], "b": "x"}'
    done = compact(doc, store=store, kind="json")
    assert expand(done.id, store=store, path="$.a[1]").data == b"2"


def test_cli_expand_path_writes_the_files_sections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "cache"))
    data = _text(_ordinary("app/refund.py"), _modified("uv.lock", _lock_hunk()))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["compact"]) == 0
    err = capfdbinary.readouterr().err.decode()
    ident = re.search(r"excerpt compact ([0-9a-f]{16})", err)
    assert ident is not None
    assert main(["expand", ident.group(1), "--path", "uv.lock"]) == 0
    assert capfdbinary.readouterr().out == _sections(data, "diff --git a/uv.lock b/uv.lock")


# ---------------------------------------------------------------------------- properties

_B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"


class _Gen:
    """A random ``git diff`` or ``git log -p`` mixing every kind of section, each line
    unique; it records the changed lines that must stay and where each file's sections
    start."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.n = count()
        self.lines: list[str] = []
        self.keep: list[str] = []
        self.starts: list[tuple[int, str | None]] = []  # (line, file) of sections and commits

    def word(self) -> str:
        return f"t{next(self.n)}"

    def code(self) -> str:
        return self.rng.choice(["x_{w} = compute({w})", "    return value_{w} + other_{w}",
                                "raise ValueError('bad {w}')", "# note {w}"]
                               ).format(w=self.word())  # fmt: skip

    def body_line(self) -> str:
        """A line of a new or deleted file: mostly plain, some definitions and errors."""
        roll = self.rng.random()
        if roll < 0.1:
            return f"def f_{self.word()}():"
        return self.code() if roll < 0.2 else f"    value_{self.word()} = table[{self.word()}]"

    def section(self, path: str, lines: list[str], keep: bool = False) -> None:
        self.starts.append((len(self.lines), path))
        self.lines += lines
        if keep:
            self.keep += [
                x for x in lines if x.startswith(("+", "-")) and not x.startswith(("+++", "---"))
            ]

    def ordinary_hunk(self, at: int) -> list[str]:
        body = [(self.rng.choice("  +-") + self.code()) for _ in range(self.rng.randint(1, 14))]
        body.append(self.rng.choice("+-") + self.code())  # at least one real change
        return _hunk(at, [x if x[0] != " " or self.rng.random() > 0.1 else "" for x in body])

    def whitespace_hunk(self, at: int) -> list[str]:
        code = [self.code() for _ in range(self.rng.randint(3, 9))]
        return _hunk(at, [f"-{x}" for x in code] + [f"+  {x.replace(' ', '  ')}" for x in code])

    def add(self) -> None:
        rng = self.rng
        kind = rng.choice(["ordinary", "ordinary", "ordinary", "lockfile", "new", "deleted",
                           "whitespace", "rename", "binary"])  # fmt: skip
        k = rng.randint(0, 3)
        if kind == "ordinary":
            hunks = [self.ordinary_hunk(1 + 60 * h) for h in range(rng.randint(1, 3))]
            self.section(f"src/mod{k}.py", _modified(f"src/mod{k}.py", *hunks), keep=True)
        elif kind == "whitespace":
            hunks = [self.whitespace_hunk(1), self.ordinary_hunk(70)]
            lines = _modified(f"src/fmt{k}.py", *hunks)
            self.section(f"src/fmt{k}.py", lines)
            self.keep += [x for x in hunks[1][1:] if x[:1] in ("+", "-")]  # context may fold
        elif kind == "lockfile":
            path = rng.choice(["uv.lock", "web/yarn.lock", "vendor/lib/x.go", "a.min.js"])
            self.section(path, _modified(path, *(self.ordinary_hunk(1 + 50 * h) for h in range(3))))
        elif kind in ("new", "deleted"):
            size = rng.choice([rng.randint(1, 25), rng.randint(45, 120)])
            body = [self.body_line() for _ in range(size)]
            build = _created if kind == "new" else _deleted
            self.section(f"pkg/{kind}{k}.py", build(f"pkg/{kind}{k}.py", body), keep=size < 30)
        elif kind == "rename":
            lines = [f"diff --git a/old{k}.py b/new{k}.py", "similarity index 80%",
                     f"rename from old{k}.py", f"rename to new{k}.py",
                     "index 1111111..2222222 100644", f"--- a/old{k}.py", f"+++ b/new{k}.py",
                     *self.ordinary_hunk(5)]  # fmt: skip
            self.section(f"new{k}.py", lines, keep=True)
        else:
            blob = ["".join(rng.choice(_B85) for _ in range(rng.randint(10, 66)))
                    for _ in range(rng.randint(1, 30))]  # fmt: skip
            lines = [f"diff --git a/img{k}.png b/img{k}.png", "index 1111111..2222222 100644",
                     "GIT binary patch", f"literal {rng.randint(0, 9999)}",
                     *(chr(rng.choice([65, 97]) + rng.randint(0, 25)) + b for b in blob), "",
                     "literal 0", "HcmV?d00001", ""] if rng.random() < 0.7 else [
                     f"diff --git a/img{k}.png b/img{k}.png", "index 1111111..2222222 100644",
                     f"Binary files a/img{k}.png and b/img{k}.png differ"]  # fmt: skip
            self.section(f"img{k}.png", lines)

    def build(self) -> bytes:
        log = self.rng.random() < 0.5
        for c in range(self.rng.randint(1, 3) if log else 1):
            if log:
                self.starts.append((len(self.lines), None))
                self.lines += _commit(c)
            for _ in range(self.rng.randint(1, 6)):
                self.add()
            if log:
                self.lines.append("")
        return ("\n".join(self.lines) + "\n").encode()

    def sections_of(self, path: str) -> bytes:
        ends = [s for s, _ in self.starts[1:]] + [len(self.lines)]
        return b"".join(
            ("".join(x + "\n" for x in self.lines[a:b])).encode()
            for (a, p), b in zip(self.starts, ends, strict=True)
            if p == path
        )


@pytest.mark.reliability("B2.20", cases=200)
@EXAMPLES
@given(seed=st.integers(0, 2**32))
def test_generated_diffs_come_back_exactly_and_keep_every_changed_line_outside_a_fold(
    seed: int, store: Store
) -> None:
    gen = _Gen(seed)
    data = gen.build()
    done = round_trip(data, store, "diff")
    assert compact(data, store=store, kind="diff").text == done.text
    kept = _view_lines(done)
    for line in gen.keep:
        assert line.encode() in kept, line
    for line in gen.lines:
        if line.startswith(HEADERS):
            assert line.encode() in kept, line
    for path in sorted({p for _, p in gen.starts if p is not None}):
        assert expand(done.id, store=store, path=path).data == gen.sections_of(path), path
