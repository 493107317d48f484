"""What compaction saves on real tool output, made in this run by the real tools.

Usage: python scripts/compact_savings.py [--mirrors /work/.mirror] [--node DIR] [--json]

Payloads (all produced now, in a temporary directory; nothing is written anywhere else):
JSON: ``pip list --format json`` and ``pip inspect`` of two Python environments, ``npm ls
--all --json`` of an installed node tree (``--node``). Logs: ``pytest -v`` of psf/requests
(an archive of the mirror's HEAD) with two bugs put into its copy so that tests fail, and
``gcc -Wall -Wextra`` builds of generated C files with warnings. Diffs: ``git log -p`` and
``git diff`` of mirrored repositories (``--mirrors``, read through ``--git-dir``).

For each payload: bytes and exact o200k tokens of the original and of the compacted view;
whether it came back unchanged (under 10% saved); the share of its error/warning/failing-
test lines (logs: an independent pattern; diffs: also every +/- line; JSON: every field
named error/warning/problems/missing/invalid with a value) found in the view (must be
100%); and what an agent pays to read the view and then expand the one part it needs
(named per payload) against reading the original. Per kind: median, p10 and p90 of the
byte savings. Savings are against the whole original: Claude Code's 30,000-character spill
of a Bash result to a file, and Codex's cut at about 12,000 bytes, are named per payload,
never counted as a saving.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from excerpt.compact import Store, compact, expand
from excerpt.core.tokens import o200k_count

ROOT = Path(__file__).resolve().parents[1]
CODEX_CUT = 12_000
_LOG_SIGNAL = re.compile(
    r"(?i)\b(error|errors|warning|warnings)\b|FAILED|\bfailed\b|Traceback|^E\s{2,}|Error:"
)
_JSON_SIGNAL = re.compile(
    r'"(error|errors|warning|warnings|problems|missing|invalid)":\s*(?!null|false|\[\]|""|\{\})'
)

Payload = tuple[str, Literal["json", "log", "diff"], bytes, Callable[[bytes], dict[str, str]]]


def _run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> bytes:
    done = subprocess.run(
        argv, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, timeout=600,
        check=False,
    )  # fmt: skip
    return done.stdout + done.stderr if argv[0].endswith("gcc") else done.stdout


# ------------------------------------------------------------------------- the parts needed


def _json_item(key: str, name: str) -> Callable[[bytes], dict[str, str]]:
    """The one item of a list (``key``: the list's path) whose name is ``name``."""

    def pick(data: bytes) -> dict[str, str]:
        doc = json.loads(data)
        items = doc if key == "$" else doc[key.split(".")[-1]]
        for i, item in enumerate(items):
            meta = item.get("metadata", item)
            if meta.get("name", "").lower() == name:
                return {"path": f"{key}[{i}]"}
        return {"path": f"{key}[0]"}

    return pick


def _npm_dep(data: bytes) -> dict[str, str]:
    """One package of the tree: the first dependency of the first direct dependency."""
    path, node = "$", json.loads(data)
    for _ in range(2):
        deps = node.get("dependencies", {})
        name = next(iter(deps), None)
        if name is None:
            break
        step = f".{name}" if re.fullmatch(r"[A-Za-z_]\w*", name) else f"[{json.dumps(name)}]"
        path += ".dependencies" + step
        node = deps[name]
    return {"path": path}


def _lines_between(start: str, stop: str, nth: int = 0) -> Callable[[bytes], dict[str, str]]:
    """Lines from the ``nth`` line matching ``start`` to the line before the next ``stop``."""

    def pick(data: bytes) -> dict[str, str]:
        lines = data.decode("utf-8", "replace").split("\n")
        hits = [i for i, line in enumerate(lines) if re.match(start, line)]
        a = hits[min(nth, len(hits) - 1)] if hits else 0
        b = next((i for i in range(a + 1, len(lines)) if re.match(stop, lines[i])), len(lines))
        return {"lines": f"{a + 1}-{max(a + 1, b)}"}

    return pick


def _grep(pattern: str) -> Callable[[bytes], dict[str, str]]:
    return lambda data: {"grep": pattern}


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


def json_payloads(node: Path | None, tmp: Path) -> list[Payload]:
    out: list[Payload] = []
    for label, py in _pythons():
        listed = _run([*py, "-m", "pip", "list", "--format", "json"])
        out.append((f"pip list --format json ({label})", "json", listed, _json_item("$", "pip")))
        inspected = _run([*py, "-m", "pip", "inspect"])
        pick = _json_item("$.installed", "pip")
        out.append((f"pip inspect ({label})", "json", inspected, pick))
    if node is not None and (node / "node_modules").is_dir() and shutil.which("npm"):
        tree = _run(["npm", "ls", "--all", "--json", "--prefix", str(node)])
        out.append(("npm ls --all --json", "json", tree, _npm_dep))
        # the same tree under a project asking for another major version and for a package
        # that is not installed: npm reports both as problems
        project = tmp / "npm-project"
        project.mkdir()
        (project / "node_modules").symlink_to(node / "node_modules")
        wanted = dict.fromkeys(json.loads(tree).get("dependencies", {}), "^1.0.0")
        wanted["left-pad"] = "^1.3.0"
        doc = {"name": "project", "version": "1.0.0", "dependencies": wanted}
        (project / "package.json").write_text(json.dumps(doc), encoding="utf-8")
        broken = _run(["npm", "ls", "--all", "--json", "--prefix", str(project)])
        pick = _grep(r"left-pad")
        out.append(("npm ls --all --json (invalid and missing)", "json", broken, pick))
    return out


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


def log_payloads(tmp: Path, mirrors: Path) -> list[Payload]:
    out: list[Payload] = []
    git_dir = mirrors / "psf+requests" / "repo"
    if git_dir.is_dir():
        copy = tmp / "requests"
        copy.mkdir()
        archive = subprocess.run(
            ["git", "--git-dir", str(git_dir), "archive", "HEAD"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(copy)], input=archive, check=True)
        for name, old, new in _BUGS:
            path = copy / name
            text = path.read_text(encoding="utf-8")
            if old not in text:
                raise SystemExit(f"the requests checkout changed: cannot break {name}")
            path.write_text(text.replace(old, new), encoding="utf-8")
        python = shutil.which("python3") or sys.executable  # its environment has requests' deps
        for files in (["tests/test_utils.py"], ["tests/test_utils.py", "tests/test_structures.py",
                                                "tests/test_hooks.py"]):  # fmt: skip
            log = _run(
                [python, "-m", "pytest", "-v", "-p", "no:cacheprovider", *files],
                cwd=copy, env={"PYTHONPATH": str(copy / "src")},
            )  # fmt: skip
            pick = _first_failure
            out.append((f"pytest -v psf/requests {' '.join(files)}", "log", log, pick))
    uv = mirrors / "libuv+libuv" / "repo"
    if shutil.which("gcc") and uv.is_dir():
        copy = tmp / "libuv"
        copy.mkdir()
        archive = subprocess.run(
            ["git", "--git-dir", str(uv), "archive", "HEAD"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(copy)], input=archive, check=True)
        sources = sorted(str(p.relative_to(copy)) for g in _UV_FILES for p in copy.glob(g))
        for flags in (["-Wall", "-Wextra"], ["-Wall", "-Wextra", "-Wshadow", "-Wconversion"]):
            log = b""
            for src in sources:
                argv = ["gcc", *flags, "-D_GNU_SOURCE", "-Iinclude", "-Isrc", "-fsyntax-only", src]
                log += f"$ {' '.join(argv)}\n".encode() + _run(argv, cwd=copy)
            name = f"gcc {' '.join(flags)} libuv ({len(sources)} files)"
            out.append((name, "log", log, _grep("warning:")))
    return out


def _first_failure(data: bytes) -> dict[str, str]:
    """The first failing test's section of a pytest run, else its warnings summary."""
    for start in (r"_{3,} \S.* _{3,}$", r"={3,} warnings summary ={3,}$"):
        pick = _lines_between(start, r"(_{3,} \S.* _{3,}$|={3,})")
        if re.search(start.encode(), data, re.M):
            return pick(data)
    return {"lines": "1-40"}


def diff_payloads(mirrors: Path) -> list[Payload]:
    out: list[Payload] = []
    commit = _lines_between(r"commit [0-9a-f]{40}", r"commit [0-9a-f]{40}", nth=9)
    one_file = _lines_between(r"diff --git ", r"diff --git ", nth=0)
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
            out.append((f"git {' '.join(argv)} ({repo.split('+')[1]})", "diff", data, pick))
    return out


# ------------------------------------------------------------------------------ measuring


def measure(payload: Payload, store: Store) -> dict[str, Any]:
    name, kind, data, pick = payload
    done = compact(data, store=store, kind=kind)
    view = done.text.encode("utf-8", "surrogateescape")
    text = data.decode("utf-8", "replace")
    if kind == "json":
        wanted = [ln.strip().rstrip(",") for ln in text.split("\n") if _JSON_SIGNAL.search(ln)]
        wanted = [m.group() for ln in wanted for m in [re.search(r'"[^"]+":.*', ln)] if m]
    else:
        wanted = [ln for ln in text.split("\n") if _LOG_SIGNAL.search(ln)]
        if kind == "diff":
            wanted += [ln for ln in text.split("\n") if ln[:1] in "+-"]
    shown = view.decode("utf-8", "replace")
    kept = sum(1 for w in wanted if w in shown)
    selector = pick(data)
    # a payload returned unchanged needs no expansion: the agent has all of it already
    part = b"" if done.unchanged else expand(done.id, store=store, **selector).data
    call = f"excerpt expand {done.id} " + " ".join(f"--{k} {v}" for k, v in selector.items())
    chars = len(text)
    return {
        "payload": name,
        "kind": kind,
        "original_bytes": len(data),
        "original_tokens": done.original_tokens,
        "compacted_bytes": done.compacted_bytes,
        "compacted_tokens": done.compacted_tokens,
        "saved_share": round(1 - done.compacted_bytes / len(data), 4) if data else 0.0,
        "saved_tokens_share": round(1 - done.compacted_tokens / max(1, done.original_tokens), 4),
        "unchanged": done.unchanged,
        "elisions": len(done.elisions),
        "signal_lines": len(wanted),
        "signal_lines_kept": kept,
        "part": call,
        "part_bytes": len(part),
        "view_plus_part_bytes": done.compacted_bytes + len(part),
        "view_plus_part_tokens": done.compacted_tokens
        + o200k_count(part.decode("utf-8", "replace")),
        "claude_code_spill": chars > 30_000,
        "codex_cut": len(data) > CODEX_CUT,
    }


def _quantiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) == 1:
        return values[0], values[0], values[0]
    deciles = statistics.quantiles(values, n=10, method="inclusive")
    return statistics.median(values), deciles[0], deciles[-1]


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| payload | kind | original B | o200k | compacted B | o200k | saved | signal kept |"
        " view + part B | of original | CC spill | Codex cut |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        share = r["view_plus_part_bytes"] / max(1, r["original_bytes"])
        saved = f"{r['saved_share']:.1%}" + (" (unchanged)" if r["unchanged"] else "")
        cells = [
            r["payload"], r["kind"], f"{r['original_bytes']:,}", f"{r['original_tokens']:,}",
            f"{r['compacted_bytes']:,}", f"{r['compacted_tokens']:,}", saved,
            f"{r['signal_lines_kept']}/{r['signal_lines']}", f"{r['view_plus_part_bytes']:,}",
            f"{share:.1%}", "yes" if r["claude_code_spill"] else "no",
            "yes" if r["codex_cut"] else "no",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "| kind | payloads | median saved | p10 | p90 | signal lines kept |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for kind in ("json", "log", "diff"):
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            continue
        med, p10, p90 = _quantiles([r["saved_share"] for r in mine])
        wanted = sum(r["signal_lines"] for r in mine)
        kept = sum(r["signal_lines_kept"] for r in mine)
        lines.append(
            f"| {kind} | {len(mine)} | {med:.1%} | {p10:.1%} | {p90:.1%} |"
            f" {kept}/{wanted} ({kept / max(1, wanted):.1%}) |"
        )
    lines += ["", "Parts expanded:"]
    lines += [f"- {r['payload']}: `{r['part']}` ({r['part_bytes']:,} B)" for r in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--node", type=Path, default=ROOT / ".ci" / "node")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.node.is_dir() and Path("/work/main/.ci/node").is_dir():
        args.node = Path("/work/main/.ci/node")
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(root=Path(tmp) / "store")
        payloads = json_payloads(args.node, Path(tmp)) + log_payloads(Path(tmp), args.mirrors)
        payloads += diff_payloads(args.mirrors)
        rows = [measure(p, store) for p in payloads if p[2]]
    sys.stdout.write((json.dumps(rows, indent=2) if args.json else report(rows)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
