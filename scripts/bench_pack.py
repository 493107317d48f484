"""Warm pack latency and edit-then-pack latency, beside git ls-files + stat of every file.

Usage: python scripts/bench_pack.py REPO TASKS.jsonl [--tasks N] [--budget BYTES]

TASKS.jsonl holds one JSON object a line with a ``problem_statement`` (or ``task``) field.
REPO is copied to a temporary directory first (the edit runs change files), so the original
is never touched. Every figure is measured in this run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from excerpt.index.build import index_repository
from excerpt.pack import PackRequest
from excerpt.pipeline import build_pack


def ls_files_and_stat(repo: Path) -> float:
    started = time.perf_counter()
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo, capture_output=True, check=True,
    ).stdout  # fmt: skip
    for name in out.split(b"\0"):
        if name:
            with contextlib.suppress(OSError):
                os.lstat(repo / os.fsdecode(name))
    return time.perf_counter() - started


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:7.1f} ms   p95 {p95 * 1000:7.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--tasks", dest="count", type=int, default=24)
    parser.add_argument("--budget", type=int, default=32000)
    args = parser.parse_args()
    tasks = []
    for line in args.tasks.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        tasks.append(doc.get("problem_statement") or doc["task"])
    tasks = tasks[: args.count]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(args.repo, repo, symlinks=True)
        cache = Path(tmp) / "cache"
        index_repository(repo, cache_dir=cache)
        baseline = [ls_files_and_stat(repo) for _ in tasks]
        warm: list[float] = []
        for task in tasks:
            started = time.perf_counter()
            build_pack(PackRequest(repo=repo, task=task, budget=args.budget, cache_dir=cache))
            warm.append(time.perf_counter() - started)
        edited: list[float] = []
        sources = sorted(p for p in repo.rglob("*.py") if ".git" not in p.parts)
        for i, task in enumerate(tasks):
            target = sources[(i * 7919) % len(sources)]
            with target.open("a", encoding="utf-8") as fh:
                fh.write(f"\n# edit {i}\n")
            started = time.perf_counter()
            build_pack(PackRequest(repo=repo, task=task, budget=args.budget, cache_dir=cache))
            edited.append(time.perf_counter() - started)
    print(f"repository: {args.repo}; {len(tasks)} tasks; budget {args.budget} bytes")
    print(f"{'git ls-files + lstat of every file':<38}{percentiles(baseline)}")
    print(f"{'excerpt pack, warm (refresh + pack)':<38}{percentiles(warm)}")
    print(f"{'excerpt pack after a one-file edit':<38}{percentiles(edited)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
