"""Gate time on a staged change in a large repository, beside ``git diff --cached`` in the
same run.

Usage: python scripts/bench_gate.py (--git-dir BARE | --repo DIR) [--files 50]
       [--lines 40] [--runs 5] [--json]

The repository is cloned into a temporary directory (``git clone --shared``: objects are
borrowed, nothing is written to the source). ``--files`` tracked source files, chosen
deterministically, each get ``--lines`` new lines, and the change is staged. Then, each as a
fresh process, ``--runs`` times: ``git diff --cached`` (the full patch), ``git diff --cached
--raw``, and ``excerpt gate --staged --json`` with a cold cache (the first gate of a
repository indexes it for the convergence check) and warm (the index refreshed, no change).
Medians are printed with the baseline beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_SOURCE = (".py", ".js", ".ts", ".go", ".rs", ".java", ".c", ".rb")
_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
}


def _git(cwd: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **_ENV}, check=True, capture_output=True
    ).stdout


def _clone(source: Path, into: Path, bare: bool) -> Path:
    work = into / "repo"
    _git(into, "clone", "-q", "--shared", "--no-checkout", str(source), str(work))
    _git(work, "checkout", "-q", "HEAD")
    return work


def _stage(work: Path, files: int, lines: int) -> list[str]:
    tracked = _git(work, "ls-files", "-z").decode("utf-8", "surrogateescape").split("\0")
    sources = sorted(p for p in tracked if p.endswith(_SOURCE) and "/" in p)
    step = max(1, len(sources) // files)
    chosen = sources[::step][:files]
    for n, path in enumerate(chosen):
        comment = "#" if path.endswith((".py", ".rb")) else "//"
        added = "".join(
            f"{comment} change {n} line {k}: adjust the retry budget\n" for k in range(lines)
        )
        with open(work / path, "a", encoding="utf-8") as out:
            out.write("\n" + added)
    _git(work, "add", "--", *chosen)
    return chosen


def _time(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, bytes]:
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    return time.perf_counter() - started, proc.returncode, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--git-dir", type=Path, help="a bare repository (e.g. a mirror)")
    where.add_argument("--repo", type=Path, help="a work tree")
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--lines", type=int, default=40)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    source = args.git_dir or args.repo
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        tmpdir = Path(tmp)
        print(f"cloning {source} …", file=sys.stderr)
        work = _clone(source.resolve(), tmpdir, bare=args.git_dir is not None)
        chosen = _stage(work, args.files, args.lines)
        tracked = len(_git(work, "ls-files", "-z").split(b"\0")) - 1
        env = {**os.environ, **_ENV}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        gate = [sys.executable, "-m", "excerpt", "gate", "--staged", "--json"]
        names = ("git diff --cached", "git diff --cached --raw", "excerpt gate (cold)",
                 "excerpt gate (warm)")  # fmt: skip
        results: dict[str, list[float]] = {name: [] for name in names}
        statuses: list[str] = []
        for run in range(args.runs):
            print(f"run {run + 1}/{args.runs}", file=sys.stderr)
            results["git diff --cached"].append(_time(["git", "diff", "--cached"], work, env)[0])
            raw = ["git", "diff", "--cached", "--raw"]
            results["git diff --cached --raw"].append(_time(raw, work, env)[0])
            cache = tmpdir / f"cache-{run}"
            gate_env = {**env, "EXCERPT_CACHE_DIR": str(cache)}
            seconds, _code, out = _time(gate, work, gate_env)
            results["excerpt gate (cold)"].append(seconds)
            seconds, _code, out = _time(gate, work, gate_env)
            results["excerpt gate (warm)"].append(seconds)
            doc = json.loads(out)
            statuses = [f"{c['id']}={c['status']}" for c in doc["checks"]]
        medians = {k: statistics.median(v) for k, v in results.items()}
        base = medians["git diff --cached"]
        summary = {
            "repository": str(source),
            "tracked_files": tracked,
            "staged_files": len(chosen),
            "added_lines": len(chosen) * args.lines,
            "runs": args.runs,
            "median_s": {k: round(v, 4) for k, v in medians.items()},
            "ratio_to_git_diff_cached": {k: round(v / base, 2) for k, v in medians.items()},
            "checks": statuses,
        }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"{summary['repository']}: {tracked} tracked files; staged {len(chosen)} files, "
          f"{summary['added_lines']} added lines; median of {args.runs} runs")  # fmt: skip
    for name, value in medians.items():
        print(f"  {name:<26} {value * 1000:8.1f} ms   {value / base:6.1f} x git diff --cached")
    print("  checks: " + ", ".join(statuses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
