"""Start-up and small-repository pack times, beside ``python -c pass`` in the same run.

Usage: python scripts/bench_startup.py [--repo DIR] [--task TEXT] [--runs N]

Without ``--repo`` a repository of 100 Python files (about 120 lines each, classes,
functions and imports between them) is generated in a temporary directory. Each command runs
``--runs`` times as a fresh process, the way a user or an agent's shell runs it; the index is
built once first, so every ``pack`` is warm (a no-change refresh, then ranking and delivery).
The cache lives in a temporary directory; nothing is written to the repository. The
commands run with bytecode writing on (``PYTHONDONTWRITEBYTECODE`` removed), as an installed
package has its modules compiled: a first untimed run of each compiles what is missing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_MODULES = ("billing", "refund", "webhook", "ledger", "invoice", "session", "retry", "audit")


def generate(root: Path, files: int = 100) -> None:
    """``files`` Python modules in ``pkg/<area>/``, deterministic."""
    for n in range(files):
        area = _MODULES[n % len(_MODULES)]
        other = _MODULES[(n * 3 + 1) % len(_MODULES)]
        path = root / "pkg" / area / f"{area}_{n:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            f'"""The {area} part number {n}: helpers used with {other}."""',
            "",
            "from __future__ import annotations",
            "",
            f"from pkg.{other}.{other}_{(n * 7) % files:03d} import {other.title()}Handler",
            "",
            "",
        ]
        for k in range(6):
            lines += [
                f"class {area.title()}Step{k}:",
                f'    """Step {k} of the {area} flow."""',
                "",
                "    def __init__(self, amount: int, attempts: int = 3) -> None:",
                "        self.amount = amount",
                "        self.attempts = attempts",
                "",
                f"    def run_{area}(self, handler: {other.title()}Handler) -> int:",
                "        total = 0",
                "        for attempt in range(self.attempts):",
                "            total += handler.apply(self.amount, attempt)",
                "            if total > self.amount:",
                f'                raise ValueError("{area} step {k} overflow")',
                "        return total",
                "",
                "",
            ]
        lines += [
            f"def {area}_entry_{n}(amount: int) -> int:",
            f"    return {area.title()}Step0(amount).amount",
            "",
        ]
        path.write_text("\n".join(lines), encoding="utf-8")


def timed(argv: list[str], env: dict[str, str], runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (user + system) seconds of each run."""
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
        wall.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return wall, cpu


def line(label: str, samples: tuple[list[float], list[float]]) -> str:
    wall, cpu = samples
    best, median = min(wall) * 1000, statistics.median(wall) * 1000
    return f"{label:<40} wall best {best:5.0f} ms, median {median:5.0f} ms;" + (
        f" cpu median {statistics.median(cpu) * 1000:5.0f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="a repository (default: 100 generated files)")
    parser.add_argument("--task", default="refund webhook retry raises ValueError on overflow")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("excerpt"))
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.repo
        if repo is None:
            repo = Path(tmp) / "repo"
            generate(repo)
        env = {**os.environ, "EXCERPT_CACHE_DIR": str(Path(tmp) / "cache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        files = sum(1 for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
        subprocess.run([exe, "index", "--repo", str(repo)], env=env, check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        rows = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("python -c 'import excerpt'", [sys.executable, "-c", "import excerpt"]),
            ("excerpt --version", [exe, "--version"]),
            ("excerpt pack (warm, default budget)", [exe, "pack", "--repo", str(repo), args.task]),
        ]
        print(f"repository: {args.repo or 'generated'} ({files} files); {args.runs} runs each")
        for label, argv in rows:
            timed(argv, env, 1)  # compiles what is not compiled yet
            print(line(label, timed(argv, env, args.runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
