"""What compaction saves on real tool output, made by the real tools, with Headroom beside it.

Usage: python scripts/compact_savings.py [--mirrors /work/.mirror] [--node DIR]
       [--record DIR | --replay DIR] [--peer-python PYTHON] [--json]

Payloads (produced now, in a temporary directory; nothing is written anywhere else):
JSON: ``pip list --format json`` and ``pip inspect`` of two Python environments, ``npm ls
--all --json`` of an installed node tree (``--node``), the same tree under a project asking
for other versions, and the tree with every package's version changed in a hard-linked copy
(every entry invalid), and a CI API's response of 300 workflow runs, 3 of them failed
(generated, deterministic). Logs: ``pytest -v`` of psf/requests with three bugs put into a
copy (failing), ``pytest -v`` of pallets/click (passing, about 2,000 tests), ``gcc`` warning
floods of libuv and zstd (``-Wshadow -Wconversion``). Diffs: ``git log -p`` and ``git diff``
of mirrored repositories (``--mirrors``, read through ``--git-dir``). ``--record DIR`` keeps
the payloads; ``--replay DIR`` measures recorded ones in seconds.

For each payload: bytes and exact o200k tokens of the original and of the view; whether it
came back unchanged (under 10% saved); the signal kept; and what an agent pays to read the
view and then expand the one part it needs, against reading the original. Beside it,
Headroom (``headroom-ai``, run by ``scripts/peer_headroom.py`` under ``--peer-python``,
default this interpreter; skipped with a note when it is not installed): its public
``compress()`` and its compressor for the kind, their savings and their signal kept, counted
the same way as ours, and the target: our saving must reach the peer's per-kind figure or
50%, whichever is lower.

Signal, counted the same way for both: logs, every line matching an error, warning or
failure word (a test reported PASSED, SKIPPED or XFAIL is not one, whatever its name);
diffs, those and every ``+``/``-`` line; JSON, every string under a key named error(s),
warning(s), problems, missing or invalid, at any depth. A line is kept when it is in the
view verbatim, or when the view names its location: a diagnostic's ``file:line[:col]``,
or (diffs) a marker that names the line's file and whose ``expand`` call returns it; a JSON
string when its token is in the view. For excerpt, every line counted by its location is
also expanded and checked to come back exactly.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from excerpt.compact import Compaction, Store, compact, expand
from excerpt.core.tokens import o200k_count

ROOT = Path(__file__).resolve().parents[1]
CODEX_CUT = 12_000
TARGET_CAP = 0.5  # the target: the peer's per-kind saving, or this, whichever is lower
_LOG_SIGNAL = re.compile(
    r"(?i)\b(error|errors|warning|warnings)\b|FAILED|\bfailed\b|Traceback|^E\s{2,}|Error:"
)
_PASSING = re.compile(r"::\S.* (PASSED|SKIPPED|XFAIL)\b|\.\.\. ok$|--- PASS: ")
_LOCATION = re.compile(r"^(?:[ \t]*--> )?(\S+?:\d+(?::\d+)?)(?::|\s*$)")
_SOURCE_QUOTE = re.compile(r"^\s*\d+ \| ")
_ERROR_KEY = re.compile(r"^(errors?|warnings?|problems|missing|invalid)$")
_DIFF_FILE = re.compile(rb"^diff --git a/(\S+) b/(\S+)")

Kind = Literal["json", "log", "diff"]


@dataclass(frozen=True, slots=True)
class Payload:
    """A payload, what it is (``label``: the class its target is set for), and the part an
    agent would expand from it (``pick``: a selector, computed from the bytes)."""

    name: str
    kind: Kind
    label: str
    data: bytes
    pick: tuple[str, ...]


def _run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> bytes:
    done = subprocess.run(
        argv, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, timeout=900,
        check=False,
    )  # fmt: skip
    return done.stdout + done.stderr if argv[0].endswith("gcc") else done.stdout


def _archive(git_dir: Path, into: Path) -> None:
    into.mkdir()
    tree = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", "HEAD"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=tree, check=True)


# ------------------------------------------------------------------------- the parts needed


def selector(pick: tuple[str, ...], data: bytes) -> dict[str, str]:
    """The ``expand`` selector ``pick`` names in ``data``."""
    how, *args = pick
    if how == "grep":
        return {"grep": args[0]}
    if how == "json-item":
        key, name = args
        doc = json.loads(data)
        items = doc if key == "$" else doc[key.split(".")[-1]]
        for i, item in enumerate(items):
            meta = item.get("metadata", item)
            if str(meta.get("name", "")).lower() == name:
                return {"path": f"{key}[{i}]"}
        return {"path": f"{key}[0]"}
    if how == "npm-dep":  # the first dependency of the first direct dependency
        path, node = "$", json.loads(data)
        for _ in range(2):
            dep = next(iter(node.get("dependencies", {})), None)
            if dep is None:
                break
            step = f".{dep}" if re.fullmatch(r"[A-Za-z_]\w*", dep) else f"[{json.dumps(dep)}]"
            path += ".dependencies" + step
            node = node["dependencies"][dep]
        return {"path": path}
    if how == "lines-between":
        return _lines_between(data, args[0], args[1], int(args[2]))
    if how == "first-failure":  # the first failing test's section, else the summary
        for start in (r"_{3,} \S.* _{3,}$", r"={3,} warnings summary ={3,}$"):
            if re.search(start.encode(), data, re.M):
                return _lines_between(data, start, r"(_{3,} \S.* _{3,}$|={3,})", 0)
        return {"lines": "1-40"}
    raise ValueError(f"unknown pick {pick}")


def _lines_between(data: bytes, start: str, stop: str, nth: int) -> dict[str, str]:
    """Lines from the ``nth`` line matching ``start`` to the line before the next ``stop``."""
    lines = data.decode("utf-8", "replace").split("\n")
    hits = [i for i, line in enumerate(lines) if re.match(start, line)]
    a = hits[min(nth, len(hits) - 1)] if hits else 0
    b = next((i for i in range(a + 1, len(lines)) if re.match(stop, lines[i])), len(lines))
    return {"lines": f"{a + 1}-{max(a + 1, b)}"}


# ------------------------------------------------------------------------------- payloads


def _pythons() -> list[tuple[str, list[str]]]:
    """This interpreter's environment and the first other ``python3`` on PATH."""
    out = [("this environment", [sys.executable])]
    other = shutil.which("python3")
    if other:
        probe = [other, "-c", "import sys; print(sys.prefix)"]
        if _run(probe).strip() != sys.prefix.encode():
            out.append(("python3 on PATH", [other]))
    return out


def json_payloads(node: Path | None, tmp: Path) -> Iterator[Payload]:
    for label, py in _pythons():
        listed = _run([*py, "-m", "pip", "list", "--format", "json"])
        yield Payload(f"pip list --format json ({label})", "json", "json", listed,
                      ("json-item", "$", "pip"))  # fmt: skip
        inspected = _run([*py, "-m", "pip", "inspect"])
        yield Payload(f"pip inspect ({label})", "json", "json", inspected,
                      ("json-item", "$.installed", "pip"))  # fmt: skip
    yield Payload("CI API response: 300 runs, 3 failed", "json", "json", _ci_runs(),
                  ("grep", "failure"))  # fmt: skip
    if node is None or not (node / "node_modules").is_dir() or not shutil.which("npm"):
        return
    tree = _run(["npm", "ls", "--all", "--json", "--prefix", str(node)])
    yield Payload("npm ls --all --json", "json", "json", tree, ("npm-dep",))
    # the same tree under a project asking for another major version and for a package that
    # is not installed: npm reports both as problems
    project = tmp / "npm-project"
    project.mkdir()
    (project / "node_modules").symlink_to(node / "node_modules")
    wanted = dict.fromkeys(json.loads(tree).get("dependencies", {}), "^1.0.0")
    wanted["left-pad"] = "^1.3.0"
    doc = {"name": "project", "version": "1.0.0", "dependencies": wanted}
    (project / "package.json").write_text(json.dumps(doc), encoding="utf-8")
    broken = _run(["npm", "ls", "--all", "--json", "--prefix", str(project)])
    yield Payload("npm ls --all --json (invalid and missing)", "json", "json", broken,
                  ("grep", "left-pad"))  # fmt: skip
    # every package of a hard-linked copy at a version no range admits: each entry invalid
    invalid = tmp / "npm-invalid"
    invalid.mkdir()
    shutil.copytree(node / "node_modules", invalid / "node_modules", copy_function=os.link,
                    symlinks=True)  # fmt: skip
    shutil.copy(node / "package.json", invalid / "package.json")
    for manifest in (invalid / "node_modules").rglob("package.json"):
        parent = manifest.parent.parent
        if parent.name != "node_modules" and not parent.name.startswith("@"):
            continue
        try:
            meta = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict) or "version" not in meta:
            continue
        meta["version"] = "0.0.1-local"
        manifest.unlink()  # a new file: the hard-linked original stays as it was
        manifest.write_text(json.dumps(meta, indent=2), encoding="utf-8")
    every = _run(["npm", "ls", "--all", "--json", "--prefix", str(invalid)])
    yield Payload("npm ls --all --json (every entry invalid)", "json", "error-rich json",
                  every, ("npm-dep",))  # fmt: skip


def _ci_runs() -> bytes:
    """A CI service's list of 300 workflow runs (the shape of a REST API's response), three
    of them failed with their error; deterministic."""
    runs = []
    for i in range(300):
        failed = i in (41, 142, 243)
        run: dict[str, Any] = {
            "id": 9_000_000_000 + i * 7919,
            "name": "tests",
            "head_branch": "main" if i % 5 else f"feature/{i}",
            "head_sha": f"{(i * 2654435761) % 16**40:040x}",
            "run_number": 4000 + i,
            "event": "push" if i % 3 else "pull_request",
            "status": "completed",
            "conclusion": "failure" if failed else "success",
            "created_at": f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
            "run_attempt": 1,
            "html_url": f"https://ci.example.com/acme/widgets/actions/runs/{9_000_000_000 + i}",
            "error": None,
        }
        if failed:
            run["error"] = {
                "step": "pytest",
                "message": f"Process completed with exit code 1: test_parse_{i} failed",
            }
        runs.append(run)
    return json.dumps({"total_count": 300, "workflow_runs": runs}, indent=2).encode()


_BUGS = [  # (file in the requests copy, text, replacement): each makes some tests fail
    (
        "src/requests/utils.py",
        "    if isinstance(value, _SupportsItems):\n        return list(value.items())\n",
        "    if isinstance(value, _SupportsItems):\n        return list(value.items())[::-1]\n",
    ),
    (
        "src/requests/utils.py",
        "auth = (unquote(parsed.username), unquote(parsed.password))",
        "auth = (unquote(parsed.password), unquote(parsed.username))",
    ),
    (
        "src/requests/structures.py",
        "return ((lowerkey, keyval[1]) for (lowerkey, keyval) in self._store.items())",
        "return ((lowerkey.upper(), keyval[1]) for (lowerkey, keyval) in self._store.items())",
    ),
]
_UV_UNIX = "async core dl fs getaddrinfo linux loop pipe poll process signal stream tcp thread"
_UV_FILES = ["src/*.c", *(f"src/unix/{n}.c" for n in [*_UV_UNIX.split(), "tty", "udp"])]
_ZSTD_FILES = ["lib/common/*.c", "lib/compress/*.c", "lib/decompress/*.c"]
_FLOOD = ["-Wall", "-Wextra", "-Wshadow", "-Wconversion"]


def log_payloads(tmp: Path, mirrors: Path) -> Iterator[Payload]:
    python = shutil.which("python3") or sys.executable  # its environment has pytest
    git_dir = mirrors / "psf+requests" / "repo"
    if git_dir.is_dir():
        copy = tmp / "requests"
        _archive(git_dir, copy)
        for name, old, new in _BUGS:
            path = copy / name
            text = path.read_text(encoding="utf-8")
            if old not in text:
                raise SystemExit(f"the requests checkout changed: cannot break {name}")
            path.write_text(text.replace(old, new), encoding="utf-8")
        for files in (["tests/test_utils.py"], ["tests/test_utils.py", "tests/test_structures.py",
                                                "tests/test_hooks.py"]):  # fmt: skip
            log = _run(
                [python, "-m", "pytest", "-v", "-p", "no:cacheprovider", *files],
                cwd=copy, env={"PYTHONPATH": str(copy / "src")},
            )  # fmt: skip
            yield Payload(f"pytest -v psf/requests {' '.join(files)} (failing)", "log",
                          "failing tests", log, ("first-failure",))  # fmt: skip
    click = mirrors / "pallets+click" / "repo"
    if click.is_dir():
        copy = tmp / "click"
        _archive(click, copy)
        log = _run(
            [python, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"],
            cwd=copy, env={"PYTHONPATH": str(copy / "src")},
        )  # fmt: skip
        yield Payload("pytest -v pallets/click (passing)", "log", "passing tests", log,
                      ("grep", r"passed|failed"))  # fmt: skip
    if not shutil.which("gcc"):
        return
    for repo, globs, floods in (
        ("libuv+libuv", _UV_FILES, (["-Wall", "-Wextra"], _FLOOD)),
        ("facebook+zstd", _ZSTD_FILES, (_FLOOD,)),
    ):
        git_dir = mirrors / repo / "repo"
        if not git_dir.is_dir():
            continue
        copy = tmp / repo
        _archive(git_dir, copy)
        sources = sorted(str(p.relative_to(copy)) for g in globs for p in copy.glob(g))
        includes = ["-Iinclude", "-Isrc"] if "libuv" in repo else ["-Ilib", "-Ilib/common"]
        for flags in floods:
            log = b""
            for src in sources:
                argv = ["gcc", *flags, "-D_GNU_SOURCE", *includes, "-fsyntax-only", src]
                log += f"$ {' '.join(argv)}\n".encode() + _run(argv, cwd=copy)
            label = "warning flood" if log.count(b"warning:") >= 50 else "build log"
            name = f"gcc {' '.join(flags)} {repo.split('+')[1]} ({len(sources)} files)"
            yield Payload(name, "log", label, log, ("grep", "warning:"))


def diff_payloads(mirrors: Path) -> Iterator[Payload]:
    commit = ("lines-between", r"commit [0-9a-f]{40}", r"commit [0-9a-f]{40}", "9")
    one_file = ("lines-between", r"diff --git ", r"diff --git ", "0")
    specs = [
        ("pallets+flask", ["log", "-p", "-n", "300"], commit),
        ("pallets+flask", ["log", "-p", "-n", "50"], commit),
        ("psf+requests", ["log", "-p", "-n", "200"], commit),
        ("pytest-dev+pytest", ["log", "-p", "-n", "100"], commit),
        ("pallets+flask", ["diff", "HEAD~40", "HEAD"], one_file),
        ("psf+requests", ["diff", "HEAD~60", "HEAD"], one_file),
        ("pytest-dev+pytest", ["diff", "HEAD~30", "HEAD"], one_file),
    ]
    for repo, argv, pick in specs:
        git_dir = mirrors / repo / "repo"
        if git_dir.is_dir():
            data = _run(["git", "--git-dir", str(git_dir), "--no-pager", *argv, "--no-color",
                         "--no-ext-diff", "--no-textconv"])  # fmt: skip
            name = f"git {' '.join(argv)} ({repo.split('+')[1]})"
            yield Payload(name, "diff", "diff", data, pick)


def record(payloads: list[Payload], into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    index = []
    for n, p in enumerate(payloads):
        (into / f"{n:02d}.bin").write_bytes(p.data)
        index.append({"name": p.name, "kind": p.kind, "label": p.label, "file": f"{n:02d}.bin",
                      "pick": list(p.pick)})  # fmt: skip
    (into / "index.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")


def replay(source: Path) -> list[Payload]:
    index = json.loads((source / "index.json").read_text(encoding="utf-8"))
    out = []
    for r in index:
        data = (source / r["file"]).read_bytes()
        out.append(Payload(r["name"], r["kind"], r["label"], data, tuple(r["pick"])))
    return out


# --------------------------------------------------------------------------- the signal


def signal_units(payload: Payload) -> list[tuple[int, str]]:
    """What must be kept: (0-based line, text) of each signal line; for JSON (-1, token)
    of each error string."""
    text = payload.data.decode("utf-8", "replace")
    if payload.kind == "json":
        try:
            doc = json.loads(text)
        except ValueError:
            return []
        return [(-1, token) for token in _error_strings(doc, False)]
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        changed = (
            payload.kind == "diff" and line[:1] in "+-" and not line.startswith(("+++", "---"))
        )
        if changed or (_LOG_SIGNAL.search(line) and not _PASSING.search(line)):
            out.append((i, line))
    return out


def _error_strings(value: Any, under_error: bool) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _error_strings(item, under_error or bool(_ERROR_KEY.match(str(key))))
    elif isinstance(value, list):
        for item in value:
            yield from _error_strings(item, under_error)
    elif isinstance(value, str) and under_error:
        yield value


def kept_units(
    payload: Payload,
    units: list[tuple[int, str]],
    view: str,
    ours: Compaction | None = None,
    store: Store | None = None,
) -> tuple[int, int]:
    """(kept, of which by location) of ``units`` in ``view``: verbatim, or named by their
    location (for ours, checked: the marker's ``expand`` returns the line exactly)."""
    if payload.kind == "json":
        kept = sum(1 for _, s in units if _json_token_in(s, view))
        return kept, 0
    shown = set(view.split("\n"))
    lines = payload.data.decode("utf-8", "replace").split("\n")
    files = _file_of_line(payload.data) if payload.kind == "diff" else []
    spans = [tuple(int(x) for x in str(e["lines"]).split("-")) for e in (ours.elisions if ours
             else ()) if "lines" in e]  # fmt: skip
    markers = {
        (int(m.group(1)), int(m.group(2))): m.group(0)
        for m in re.finditer(r"(?m)^.*--lines (\d+)-(\d+)\]$", view)
    }
    kept = by_location = 0
    for i, line in units:
        if line in shown:
            kept += 1
            continue
        where = _location(lines, i) if payload.kind == "log" else None
        named = where is not None and where in view
        if payload.kind == "diff" and ours is not None:
            marker = next((markers[s] for s in spans if s[0] <= i + 1 <= s[1] and s in markers),
                          "")  # fmt: skip
            named = bool(files[i]) and (files[i] or "") in marker
        if named and ours is not None and store is not None:
            named = _expands_to(ours, store, spans, i, line)
        if named:
            kept += 1
            by_location += 1
    return kept, by_location


def _json_token_in(value: str, view: str) -> bool:
    return any(
        token in view for token in (json.dumps(value), json.dumps(value, ensure_ascii=False), value)
    )


def _location(lines: list[str], i: int) -> str | None:
    """The ``file:line[:col]`` a diagnostic line names (on it, or on the ``-->`` line after
    a rustc-style header); for a compiler's quote of a source line, its diagnostic's."""
    for line in (lines[i], lines[i + 1] if i + 1 < len(lines) else ""):
        m = _LOCATION.match(line)
        if m:
            return m.group(1)
    if _SOURCE_QUOTE.match(lines[i]):  # a compiler's quote of the source it warns about
        for back in range(i - 1, max(-1, i - 4), -1):
            m = _LOCATION.match(lines[back])
            if m:
                return m.group(1)
    return None


def _file_of_line(data: bytes) -> list[str | None]:
    out: list[str | None] = []
    current: str | None = None
    for line in data.split(b"\n"):
        m = _DIFF_FILE.match(line)
        if m:
            current = m.group(2).decode("utf-8", "replace")
        elif line.startswith(b"commit "):
            current = None
        out.append(current)
    return out


def _expands_to(
    ours: Compaction, store: Store, spans: list[tuple[int, ...]], i: int, line: str
) -> bool:
    for a, b in spans:
        if a <= i + 1 <= b:
            part = expand(ours.id, store=store, lines=f"{i + 1}-{i + 1}").data
            return part.decode("utf-8", "replace").rstrip("\n") == line
    return False


# ------------------------------------------------------------------------------ measuring


def measure(payload: Payload, store: Store, peer: dict[str, str] | None) -> dict[str, Any]:
    done = compact(payload.data, store=store, kind=payload.kind)
    units = signal_units(payload)
    kept, by_location = kept_units(payload, units, done.text, done, store)
    chosen = selector(payload.pick, payload.data)
    # a payload returned unchanged needs no expansion: the agent has all of it already
    part = b"" if done.unchanged else expand(done.id, store=store, **chosen).data
    call = f"excerpt expand {done.id} " + " ".join(f"--{k} {v}" for k, v in chosen.items())
    size = len(payload.data)
    row: dict[str, Any] = {
        "payload": payload.name,
        "kind": payload.kind,
        "label": payload.label,
        "original_bytes": size,
        "original_tokens": done.original_tokens,
        "compacted_bytes": done.compacted_bytes,
        "compacted_tokens": done.compacted_tokens,
        "saved_share": round(1 - done.compacted_bytes / size, 4) if size else 0.0,
        "saved_tokens_share": round(1 - done.compacted_tokens / max(1, done.original_tokens), 4),
        "unchanged": done.unchanged,
        "elisions": len(done.elisions),
        "signal_lines": len(units),
        "signal_lines_kept": kept,
        "signal_kept_by_location": by_location,
        "part": call,
        "part_bytes": len(part),
        "view_plus_part_bytes": done.compacted_bytes + len(part),
        "view_plus_part_tokens": done.compacted_tokens
        + o200k_count(part.decode("utf-8", "replace")),
        "claude_code_spill": len(payload.data.decode("utf-8", "replace")) > 30_000,
        "codex_cut": size > CODEX_CUT,
    }
    if peer is not None:
        for which in ("compress", "kind"):
            text = peer[which]
            row[f"peer_{which}_saved"] = round(1 - len(text.encode()) / max(1, size), 4)
            row[f"peer_{which}_kept"] = kept_units(payload, units, text)[0]
        row["target"] = round(min(max(0.0, row["peer_kind_saved"]), TARGET_CAP), 4)
        row["target_met"] = row["saved_share"] >= row["target"]
    return row


def run_peer(python: str, payloads: list[Payload], tmp: Path) -> list[dict[str, str]] | None:
    files = []
    for n, p in enumerate(payloads):
        path = tmp / f"peer-{n:02d}.bin"
        path.write_bytes(p.data)
        files.append(f"{p.kind}:{path}")
    script = ROOT / "scripts" / "peer_headroom.py"
    done = subprocess.run([python, str(script), *files], capture_output=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(
            "headroom-ai is not installed for " + python + ": measuring excerpt alone "
            "(pip install 'excerpt[peers]', or pass --peer-python an interpreter that has it)\n"
            + done.stderr.decode("utf-8", "replace")[-400:]
        )
        return None
    got = json.loads(done.stdout)
    return [got[f.split(":", 1)[1]] for f in files]


def _quantiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) == 1:
        return values[0], values[0], values[0]
    deciles = statistics.quantiles(values, n=10, method="inclusive")
    return statistics.median(values), deciles[0], deciles[-1]


def report(rows: list[dict[str, Any]]) -> str:
    peer = "peer_kind_saved" in rows[0] if rows else False
    head = ["payload", "kind", "original B", "o200k", "compacted B", "o200k", "saved",
            "signal kept", "view + part B", "of original", "CC spill", "Codex cut"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "| --- | --- |" + " ---: |" * 8 + " --- | --- |"]
    for r in rows:
        share = r["view_plus_part_bytes"] / max(1, r["original_bytes"])
        saved = f"{r['saved_share']:.1%}" + (" (unchanged)" if r["unchanged"] else "")
        cells = [
            r["payload"], r["label"], f"{r['original_bytes']:,}", f"{r['original_tokens']:,}",
            f"{r['compacted_bytes']:,}", f"{r['compacted_tokens']:,}", saved, _kept(r),
            f"{r['view_plus_part_bytes']:,}", f"{share:.1%}",
            "yes" if r["claude_code_spill"] else "no", "yes" if r["codex_cut"] else "no",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    if peer:
        lines += ["", "| payload | excerpt saved, signal kept | Headroom compress() | its "
                  "compressor for the kind | target | met |",
                  "| --- | ---: | ---: | ---: | ---: | --- |"]  # fmt: skip
        for r in rows:
            n = r["signal_lines"]
            lines.append(
                f"| {r['payload']} | {r['saved_share']:.1%}, {r['signal_lines_kept']}/{n} |"
                f" {r['peer_compress_saved']:.1%}, {r['peer_compress_kept']}/{n} |"
                f" {r['peer_kind_saved']:.1%}, {r['peer_kind_kept']}/{n} |"
                f" {r['target']:.1%} | {'yes' if r['target_met'] else '**no**'} |"
            )
    theirs_head = " Headroom's compressor: median saved, signal kept |" if peer else ""
    rule = "| --- | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if peer else "")
    lines += [
        "",
        "| class | payloads | median saved | p10 | p90 | signal kept |" + theirs_head,
        rule,
    ]
    for label in dict.fromkeys(r["label"] for r in rows):
        mine = [r for r in rows if r["label"] == label]
        med, p10, p90 = _quantiles([r["saved_share"] for r in mine])
        wanted = sum(r["signal_lines"] for r in mine)
        kept = sum(r["signal_lines_kept"] for r in mine)
        cell = (
            f"| {label} | {len(mine)} | {med:.1%} | {p10:.1%} | {p90:.1%} |"
            f" {kept}/{wanted} ({kept / max(1, wanted):.1%}) |"
        )
        if peer:
            theirs = sum(r["peer_kind_kept"] for r in mine)
            pmed = statistics.median(r["peer_kind_saved"] for r in mine)
            cell += f" {pmed:.1%}, {theirs}/{wanted} ({theirs / max(1, wanted):.1%}) |"
        lines.append(cell)
    lines += ["", "Parts expanded:"]
    lines += [f"- {r['payload']}: `{r['part']}` ({r['part_bytes']:,} B)" for r in rows]
    return "\n".join(lines)


def _kept(row: dict[str, Any]) -> str:
    text = f"{row['signal_lines_kept']}/{row['signal_lines']}"
    if row["signal_kept_by_location"]:
        text += f" ({row['signal_kept_by_location']} by location)"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--node", type=Path, default=ROOT / ".ci" / "node")
    parser.add_argument("--record", type=Path, help="keep the payloads made in DIR")
    parser.add_argument("--replay", type=Path, help="measure the payloads recorded in DIR")
    parser.add_argument("--peer-python", default=sys.executable,
                        help="an interpreter with headroom-ai (default: this one)")  # fmt: skip
    parser.add_argument("--no-peer", action="store_true", help="measure excerpt alone")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.replay is not None:
            payloads = replay(args.replay)
        else:
            made = [*json_payloads(args.node, Path(tmp)), *log_payloads(Path(tmp), args.mirrors)]
            made += diff_payloads(args.mirrors)
            payloads = [p for p in made if p.data]
        if args.record is not None:
            record(payloads, args.record)
        store = Store(root=Path(tmp) / "store")
        peers = None if args.no_peer else run_peer(args.peer_python, payloads, Path(tmp))
        rows = [measure(p, store, peers[n] if peers else None) for n, p in enumerate(payloads)]
    sys.stdout.write((json.dumps(rows, indent=2) if args.json else report(rows)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
