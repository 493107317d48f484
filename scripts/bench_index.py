"""Cold index and no-change refresh of a repository, beside the raw read+hash cost.

Usage: python scripts/bench_index.py REPO [--runs N]

Prints one table; every figure is measured in this run on this machine. The baseline reads
and SHA-256-hashes every regular file under REPO (``.git`` excluded) with plain Python.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from excerpt.index.build import index_repository


def read_and_hash(root: Path) -> tuple[int, int, float]:
    started = time.perf_counter()
    files = total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            with open(path, "rb") as fh:
                data = fh.read()
            hashlib.sha256(data).hexdigest()
            files += 1
            total += len(data)
    return files, total, time.perf_counter() - started


def parse_only(root: Path) -> float:
    """Floor: tree-sitter parsing alone of every file excerpt parses (one core, no queries)."""
    import tree_sitter

    from excerpt.index.languages import PARSED_LANGUAGES, grammar, language_of

    started = time.perf_counter()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            language = language_of(name)
            path = os.path.join(dirpath, name)
            if language in PARSED_LANGUAGES and os.path.isfile(path):
                with open(path, "rb") as fh:
                    tree_sitter.Parser(grammar(language).language).parse(fh.read())
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    raw = [read_and_hash(args.repo) for _ in range(args.runs)]
    files, total, _ = raw[0]
    raw_s = statistics.median(r[2] for r in raw)
    parse_s = statistics.median(parse_only(args.repo) for _ in range(args.runs))
    cold, cold_one, warm = [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as cache:
            cold_one.append(index_repository(args.repo, cache_dir=Path(cache), jobs=1).seconds)
        with tempfile.TemporaryDirectory() as cache:
            report = index_repository(args.repo, cache_dir=Path(cache))
            cold.append(report.seconds)
            warm.append(index_repository(args.repo, cache_dir=Path(cache)).seconds)
    cold_s, warm_s = statistics.median(cold), statistics.median(warm)
    one_s = statistics.median(cold_one)
    print(f"repository: {args.repo} ({files} files, {total / 1e6:.1f} MB; cores {os.cpu_count()})")
    print(f"indexed: {report.files_indexed} files, {report.symbols} symbols, {report.edges} edges")
    print(f"{'measure':<34}{'seconds':>10}{'x raw':>9}")
    print(f"{'baseline: read+hash every file':<34}{raw_s:>10.3f}{1:>9.1f}")
    print(f"{'floor: tree-sitter parse, 1 core':<34}{parse_s:>10.3f}{parse_s / raw_s:>9.1f}")
    print(f"{'excerpt cold index, 1 process':<34}{one_s:>10.3f}{one_s / raw_s:>9.1f}")
    print(f"{'excerpt cold index, all cores':<34}{cold_s:>10.3f}{cold_s / raw_s:>9.1f}")
    print(f"{'excerpt no-change refresh':<34}{warm_s:>10.3f}{warm_s / raw_s:>9.1f}")
    print(f"(median of {args.runs} runs; cold: empty cache; refresh: nothing changed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
