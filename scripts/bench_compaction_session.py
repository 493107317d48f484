"""What compaction in flight saves over a session: real tool outputs through the real hook.

Usage: python scripts/bench_compaction_session.py DIR [--generate [--git-dir GITDIR]]
       [--turns 10,30] [--json]

DIR holds the payloads, one Bash call each: ``NAME.stdout``, and optionally ``NAME.stderr``
and ``NAME.command`` (the command line; default NAME). ``--generate`` first makes them there,
in this run, by the real tools (DIR must lie outside this repository; the work happens in a
temporary directory): ``pytest -v`` of five of this repository's test files on a temporary
copy with three bugs put in its compaction code (tests fail, with hypothesis' reports);
``npm ls --all --json`` of a real ``npm install`` (express, eslint and jest, install scripts
off); ``pip install -v`` building psutil, MarkupSafe and simplejson from their source
distributions (C extensions: compiler lines, on stderr); ``git log -p -n 300`` of GITDIR
(default: the Django mirror under /work/.mirror, when there).

For each payload, as Claude Code's Bash result (``tool_response`` with ``stdout``,
``stderr``, ``interrupted``, ``isImage``, ``noOutputExpected``): the real ``excerpt hook
PostToolUse --client claude`` process (the script beside this interpreter, a temporary
cache), its wall time, and bytes and exact o200k tokens of what the model receives before and
after it (stdout, then stderr, the last newline dropped, as Claude Code shows a Bash result);
the tokens the model re-reads over the rest of a session of N later turns (every later model
request re-sends the result: N times its tokens), without and with the hook; and whether
``excerpt expand ID`` of every compacted field returns its original byte for byte. Savings
are against the whole original: past Claude Code's 30,000 characters the client would put
the output in a file with a 2 KB preview, and the agent that needs it reads the file (the
"CC spill" column names those payloads; see docs/compact.md). Nothing is written into the
repository.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from excerpt.core.tokens import o200k_count

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path("/work/.mirror/swe-bench+django__django/repo")
CLAUDE_BASH_CHARS = 30_000
_EXPAND = re.compile(r"expand ([0-9a-f]{16})\b")
# bugs for the pytest payload, each failing some of the compaction tests: a log's error
# lines are no longer kept, a JSON array needs 50 similar items to fold, a diff folds every
# Python file as if it were a lockfile
_BUGS = (
    (
        "src/excerpt/compact/logs.py",
        "or i >= n - TAIL or signal[i] else _ELIDABLE",
        "or i >= n - TAIL else _ELIDABLE",
    ),
    ("src/excerpt/compact/jsonview.py", "\nMIN_ITEMS = 5\n", "\nMIN_ITEMS = 50\n"),
    ("src/excerpt/compact/diffs.py", '_LOCK_SUFFIXES = (".lock", ".lockfile")',
     '_LOCK_SUFFIXES = (".lock", ".lockfile", ".py")'),
)  # fmt: skip
_TESTS = ("tests/test_compact.py", "tests/test_compact_properties.py", "tests/test_compact_mcp.py",
          "tests/test_get.py", "tests/test_cli.py")  # fmt: skip
_PIP = ("psutil==5.9.8", "markupsafe==2.1.5", "simplejson==3.19.3")  # C extensions


def _excerpt() -> list[str]:
    script = Path(sys.executable).parent / "excerpt"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "excerpt"]


# ------------------------------------------------------------------------------ payloads


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[bytes, bytes]:
    done = subprocess.run(
        argv, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, timeout=1800,
        check=False,
    )  # fmt: skip
    return done.stdout, done.stderr


def _pytest(work: Path) -> tuple[str, bytes, bytes]:
    copy = work / "excerpt-copy"
    copy.mkdir()
    shutil.copytree(ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", copy / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", copy / "pyproject.toml")
    for name, old, new in _BUGS:
        path = copy / name
        text = path.read_text(encoding="utf-8")
        if old not in text:
            raise SystemExit(f"the compaction code changed: cannot put the bug into {name}")
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    # the project's own options but one test process (xdist's interleaved lines are no
    # single agent's run)
    argv = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-o", "addopts=",
            *_TESTS]  # fmt: skip
    out, err = _run(argv, copy, {"PYTHONPATH": str(copy / "src")})
    return f"python -m pytest -v {' '.join(_TESTS)}", out, err


def _npm(work: Path) -> tuple[str, bytes, bytes] | None:
    if shutil.which("npm") is None:
        return None
    project = work / "npm-project"
    project.mkdir()
    _run(["npm", "init", "-y"], project)
    _run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "express@4",
          "eslint@8", "jest@29"], project)  # fmt: skip
    out, err = _run(["npm", "ls", "--all", "--json"], project)
    return "npm ls --all --json", out, err


def _pip(work: Path) -> tuple[str, bytes, bytes]:
    names = ",".join(p.split("==")[0] for p in _PIP)
    argv = [sys.executable, "-m", "pip", "install", "-v", "--no-cache-dir", "--no-deps",
            "--no-binary", names, "--target", str(work / "pip-target"), *_PIP]  # fmt: skip
    out, err = _run(argv, work)
    return f"pip install -v --no-binary {names} {' '.join(_PIP)}", out, err


def _git_log(git_dir: Path, work: Path) -> tuple[str, bytes, bytes] | None:
    if not git_dir.is_dir():
        return None
    argv = ["git", "--git-dir", str(git_dir), "--no-pager", "log", "-p", "-n", "300",
            "--no-color", "--no-ext-diff", "--no-textconv"]  # fmt: skip
    out, err = _run(argv, work)
    return "git log -p -n 300", out, err


def generate(folder: Path, git_dir: Path) -> list[str]:
    """Make the payloads in ``folder`` (outside the repository); their names."""
    folder = folder.resolve()
    if folder == ROOT or ROOT in folder.parents:
        raise SystemExit(f"--generate writes outside the repository, not in {folder}")
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    with tempfile.TemporaryDirectory(prefix="excerpt-session-payloads-") as tmp:
        work = Path(tmp)
        made = {
            "pytest-failing": _pytest(work),
            "npm-ls": _npm(work),
            "pip-install-build": _pip(work),
            "git-log-p": _git_log(git_dir, work),
        }
        for name, got in made.items():
            if got is None:
                continue
            command, out, err = got
            (folder / f"{name}.stdout").write_bytes(out)
            if err:
                (folder / f"{name}.stderr").write_bytes(err)
            (folder / f"{name}.command").write_text(command + "\n", encoding="utf-8")
            names.append(name)
    return names


# ------------------------------------------------------------------------------ measuring


def load(folder: Path) -> list[tuple[str, str, str, str]]:
    """``(name, command, stdout, stderr)`` of each payload in ``folder``, by name."""
    out = []
    for path in sorted(folder.glob("*.stdout")):
        name = path.name.removesuffix(".stdout")
        err, cmd = folder / f"{name}.stderr", folder / f"{name}.command"
        command = cmd.read_text(encoding="utf-8").strip() if cmd.is_file() else name
        stderr = err.read_bytes().decode("utf-8", "replace") if err.is_file() else ""
        out.append((name, command, path.read_bytes().decode("utf-8", "replace"), stderr))
    return out


def shown(result: dict[str, Any]) -> str:
    """A Bash result as the model reads it: stdout, then stderr, the last newline dropped."""
    parts = [str(result[k]).removesuffix("\n") for k in ("stdout", "stderr") if result.get(k)]
    return "\n".join(parts)


def _hook(response: dict[str, Any], command: str, env: dict[str, str]) -> tuple[float, Any]:
    """The PostToolUse hook on a Bash result: seconds, and the replaced result or None."""
    payload = {
        "session_id": "bench-compaction-session", "transcript_path": "/dev/null",
        "cwd": str(Path.cwd()), "permission_mode": "default", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": {"command": command, "description": command},
        "tool_response": response, "tool_use_id": "toolu_bench",
    }  # fmt: skip
    argv = [*_excerpt(), "hook", "PostToolUse", "--client", "claude"]
    started = time.perf_counter()
    done = subprocess.run(argv, input=json.dumps(payload).encode("utf-8"), capture_output=True,
                          env=env, timeout=600, check=False)  # fmt: skip
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"excerpt hook exited {done.returncode}: {done.stderr[-300:]!r}")
    answer = json.loads(done.stdout) if done.stdout.strip() else {}
    return took, answer.get("hookSpecificOutput", {}).get("updatedToolOutput")


def _expand_exact(original: dict[str, Any], updated: dict[str, Any], env: dict[str, str]) -> bool:
    """Whether ``excerpt expand ID`` of each compacted field gives back its original bytes."""
    for key in ("stdout", "stderr"):
        if updated.get(key) == original[key]:
            continue
        found = _EXPAND.search(str(updated.get(key, "")).split("\n", 1)[0])
        if found is None:
            return False
        done = subprocess.run([*_excerpt(), "expand", found.group(1)], capture_output=True,
                              env=env, timeout=600, check=False)  # fmt: skip
        if done.returncode != 0 or done.stdout != original[key].encode("utf-8", "surrogatepass"):
            return False
    return True


def measure(
    payload: tuple[str, str, str, str], env: dict[str, str], turns: list[int]
) -> dict[str, Any]:
    name, command, stdout, stderr = payload
    response = {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False,
                "noOutputExpected": False}  # fmt: skip
    took, updated = _hook(response, command, env)
    before, after = shown(response), shown(updated or response)
    tokens = o200k_count(before)
    tokens_after = o200k_count(after) if updated is not None else tokens
    return {
        "payload": name,
        "command": command,
        "compacted": updated is not None,
        "before_bytes": len(before.encode("utf-8")),
        "after_bytes": len(after.encode("utf-8")),
        "before_tokens": tokens,
        "after_tokens": tokens_after,
        "saved_tokens_share": round(1 - tokens_after / tokens, 4) if tokens else 0.0,
        "hook_ms": round(took * 1000, 1),
        "reread_tokens": {
            str(n): {"without_hook": tokens * n, "with_hook": tokens_after * n} for n in turns
        },
        "expand_exact": None if updated is None else _expand_exact(response, updated, env),
        "claude_code_spill": len(before) > CLAUDE_BASH_CHARS,
        "claude_code_spill_after": len(after) > CLAUDE_BASH_CHARS,
    }


def _total(rows: list[dict[str, Any]], turns: list[int]) -> dict[str, Any]:
    keys = ("before_bytes", "after_bytes", "before_tokens", "after_tokens")
    total: dict[str, Any] = {k: sum(r[k] for r in rows) for k in keys}
    total["reread_tokens"] = {
        str(n): {w: sum(r["reread_tokens"][str(n)][w] for r in rows)
                 for w in ("without_hook", "with_hook")}
        for n in turns
    }  # fmt: skip
    return total


def report(doc: dict[str, Any]) -> str:
    turns = doc["turns"]

    def arrow(a: int, b: int) -> str:
        return f"{a:,} → {b:,}"

    head = ["payload", "bytes", "o200k tokens", "saved", "hook"]
    head += [f"re-read over {n} turns (without → with hook)" for n in turns]
    head += ["expand byte-exact", "CC spill (without / with)"]
    lines = [
        "| " + " | ".join(head) + " |",
        "| --- |" + " ---: |" * (len(head) - 3) + " --- | --- |",
    ]
    totals = [{"payload": "**all**", **doc["total"]}]
    if doc["total_compacted"]["before_bytes"]:
        totals.append({"payload": "**the compacted ones**", **doc["total_compacted"]})
    for r in [*doc["rows"], *totals]:
        tokens = r["before_tokens"]
        saved = 1 - r["after_tokens"] / tokens if tokens else 0.0
        cells = [
            f"`{r['command']}`" if "command" in r else r["payload"],
            arrow(r["before_bytes"], r["after_bytes"]),
            arrow(r["before_tokens"], r["after_tokens"]),
            f"{saved:.1%}" + ("" if r.get("compacted", True) else " (unchanged)"),
            f"{r['hook_ms']:,.0f} ms" if "hook_ms" in r else "",
        ]
        for n in turns:
            cell = r["reread_tokens"][str(n)]
            cells.append(arrow(cell["without_hook"], cell["with_hook"]))
        exact = r.get("expand_exact")
        cells.append(
            "" if "command" not in r else "—" if exact is None else "yes" if exact else "NO"
        )
        spill = [r.get(k) for k in ("claude_code_spill", "claude_code_spill_after")]
        cells.append("" if "command" not in r else " / ".join("yes" if v else "no" for v in spill))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("dir", type=Path, help="the payloads: NAME.stdout [NAME.stderr] ...")
    parser.add_argument("--generate", action="store_true", help="make the payloads in DIR first")
    parser.add_argument("--git-dir", type=Path, default=MIRROR, help="for git log -p")
    parser.add_argument("--turns", default="10,30", help="later turns, comma-separated")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        turns = [int(t) for t in args.turns.split(",") if t.strip()]
    except ValueError:
        parser.error("--turns wants comma-separated counts")
    if args.generate:
        generate(args.dir, args.git_dir)
    payloads = load(args.dir) if args.dir.is_dir() else []
    if not payloads:
        parser.error(f"no NAME.stdout in {args.dir}")
    with tempfile.TemporaryDirectory(prefix="excerpt-session-cache-") as cache:
        env = {**os.environ, "EXCERPT_CACHE_DIR": cache}  # the originals stored, then dropped
        rows = [measure(p, env, turns) for p in payloads]
    doc = {
        "turns": turns,
        "rows": rows,
        "total": _total(rows, turns),
        "total_compacted": _total([r for r in rows if r["compacted"]], turns),
    }
    sys.stdout.write(json.dumps(doc, indent=2) + "\n" if args.json else report(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
