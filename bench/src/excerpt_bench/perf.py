"""``excerpt bench perf``: what indexing and packing cost on a tree, beside the raw floors.

In: a repository (copied to a temporary directory first: the edit runs change files, and the
user's tree is never written) and tasks. Out: the SPEC §11 figures, every one measured in this
run on this machine: cold index, no-change refresh, warm pack and pack after a one-file edit
(p50/p95), peak RSS, and beside them the floors: listing and ``lstat`` of every file, reading
and hashing every file, and tree-sitter parsing alone of every parsed file on all cores; with
``aider_python``, Aider's repo map cold and warm on the same copy and tasks
(excerpt_bench.aider_peer), measured last so that its process does not count in excerpt's
peak RSS; with ``surface`` "mcp" the packs through a real server (excerpt_bench.perf_mcp),
with "hook" ``excerpt hook`` processes as a client runs them (excerpt_bench.perf_hook).
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from excerpt.errors import UsageError
from excerpt.tooling import nearest_rank

if TYPE_CHECKING:
    from excerpt_bench.aider_peer import AiderFigures

__all__ = ["PerfRun", "run_perf"]

Progress = Callable[[str], None]
# what excerpt aims for beside Aider's repo map: cold index / cold map, warm pack p50 / warm
# map request p50
AIDER_COLD_TARGET = 0.3
AIDER_WARM_TARGET = 0.05
_AIDER_KEYS = (
    "aider_cold_s",
    "aider_warm_s",
    "aider_warm_p95_s",
    "aider_map_tokens",
    "aider_version",
    "aider_peak_rss_mb",
)
# the files an edit run appends a comment line to, by extension
_COMMENT = {
    ".py": "#",
    ".go": "//",
    ".rs": "//",
    ".ts": "//",
    ".js": "//",
    ".java": "//",
    ".c": "//",
}


@dataclass(frozen=True, slots=True)
class PerfRun:
    repo: Path
    tasks: tuple[str, ...] = ()  # empty: tasks derived from the tree's own definitions
    count: int = 12  # derived tasks, and at most this many given ones
    budget: int = 32000
    runs: int = 3  # cold index, refresh and the floors: the median of this many
    synthetic: int | None = None  # measure a generated tree of this many files instead
    aider_python: Path | None = None  # an interpreter with aider-chat: time its repo map too
    aider_map_tokens: int = 1024
    aider_timeout: float = 1800.0  # the whole Aider run, seconds
    surface: str = "cli"  # "mcp": the packs through a real excerpt mcp process too; "hook":
    # excerpt hook processes as a client runs them (excerpt_bench.perf_hook)


def _files(root: Path) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            yield os.path.join(dirpath, name)


def stat_all(root: Path) -> float:
    """Floor: list the tree and ``lstat`` every file (what a refresh cannot do without)."""
    started = time.perf_counter()
    for path in _files(root):
        os.lstat(path)
    return time.perf_counter() - started


def read_all(root: Path) -> float:
    """Floor: read and SHA-256 every regular file."""
    started = time.perf_counter()
    for path in _files(root):
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as fh:
                hashlib.sha256(fh.read()).digest()
    return time.perf_counter() - started


def _parse_batch(batch: Sequence[tuple[str, str]]) -> int:
    import tree_sitter as ts

    from excerpt.tooling import grammar

    for path, language in batch:
        with open(path, "rb") as fh:
            ts.Parser(grammar(language).language).parse(fh.read())
    return len(batch)


def parse_only(root: Path, workers: int) -> float:
    """Floor: tree-sitter parsing alone (no queries, no storage) of every file excerpt
    parses, on ``workers`` processes."""
    from excerpt.tooling import PARSED_LANGUAGES, language_of

    todo = [
        (path, language)
        for path in _files(root)
        if (language := language_of(os.path.basename(path))) in PARSED_LANGUAGES
        and os.path.isfile(path)
    ]
    batches = [todo[i::workers] for i in range(workers)]
    started = time.perf_counter()
    if workers == 1:
        _parse_batch(todo)
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            list(pool.map(_parse_batch, batches))
    return time.perf_counter() - started


def percentiles_ms(samples: Sequence[float]) -> dict[str, float]:
    if not samples:
        return {"p50": 0.0, "p95": 0.0}
    p95 = nearest_rank(samples, 0.95)
    return {"p50": round(statistics.median(samples) * 1000, 1), "p95": round(p95 * 1000, 1)}


def _peak_rss_mb() -> float:
    """The largest resident set of this process or of any worker it waited for, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return round(max(own, children) * scale / 1e6, 1)


def run_perf(run: PerfRun, progress: Progress | None = None) -> dict[str, Any]:
    """The SPEC §11 ``bench perf`` figures for ``run.repo``.

    Raises:
        UsageError: the repository is not a directory, or has no task to pack; the Aider
            interpreter is not one, or has no aider.
        EnvironmentFault: Aider's repo map crashed or timed out.
    """
    from excerpt.tooling import PackRequest, build_pack, derived_tasks, index_repository
    from excerpt_bench import aider_peer
    from excerpt_bench.synthetic import write_tree

    say = progress or (lambda _: None)
    if run.synthetic is None and not run.repo.is_dir():
        raise UsageError(f"--repo must be a directory: {run.repo}")
    if run.synthetic is not None and not 1 <= run.synthetic <= 1_000_000:
        raise UsageError("--synthetic must be between 1 and 1,000,000 files")
    if run.runs < 1 or run.count < 1:
        raise UsageError("--runs and --count must be 1 or more")
    if run.aider_map_tokens < 1 or run.aider_timeout <= 0:
        raise UsageError("--aider-map-tokens must be 1 or more and --aider-timeout above 0")
    if run.aider_python is not None:
        aider_peer.check_python(run.aider_python)  # before the long run
    workers = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="excerpt-perf-") as tmp:
        repo = Path(tmp) / "repo"
        if run.synthetic is not None:
            say(f"writing a synthetic tree of {run.synthetic:,} files")
            write_tree(repo, run.synthetic)
        else:
            say("copying the tree")
            shutil.copytree(run.repo, repo, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        say("floors")
        stat_s = statistics.median(stat_all(repo) for _ in range(run.runs))
        read_s = statistics.median(read_all(repo) for _ in range(run.runs))
        parse_s = statistics.median(parse_only(repo, workers) for _ in range(run.runs))
        cold: list[float] = []
        refresh: list[float] = []
        files = 0
        for n in range(run.runs):
            say(f"cold index {n + 1}/{run.runs}")
            cache = Path(tmp) / f"cache{n}"
            started = time.perf_counter()
            report = index_repository(repo, cache_dir=cache)
            cold.append(time.perf_counter() - started)
            files = report.files_indexed
            started = time.perf_counter()
            index_repository(repo, cache_dir=cache)
            refresh.append(time.perf_counter() - started)
        cache = Path(tmp) / "cache0"
        tasks = list(run.tasks[: run.count]) or [
            t.task for t in derived_tasks(repo, cache, count=run.count)
        ]
        if not tasks:
            raise UsageError("no task to pack: give --tasks, or a tree with definitions")
        warm: list[float] = []
        for n, task in enumerate(tasks):
            say(f"warm pack {n + 1}/{len(tasks)}")
            started = time.perf_counter()
            build_pack(PackRequest(repo=repo, task=task, budget=run.budget, cache_dir=cache))
            warm.append(time.perf_counter() - started)
        from excerpt_bench.perf_mcp import cli_pack_s

        say(f"warm pack, whole CLI process: {len(tasks)} runs")
        process = [cli_pack_s(repo, cache, task, run.budget) for task in tasks]
        edited: list[float] = []
        sources = sorted(p for p in _files(repo) if p.endswith(tuple(_COMMENT)))

        def edit(n: int, count: int) -> None:
            for k in range(count):  # a one-line comment appended below each file's code
                target = sources[((n + k) * 7919) % len(sources)]
                with open(target, "a", encoding="utf-8") as fh:
                    fh.write(f"\n{_COMMENT[os.path.splitext(target)[1]]} edit {n}\n")

        for n, task in enumerate(tasks[: len(sources) and len(tasks)]):
            say(f"pack after an edit {n + 1}/{len(tasks)}")
            edit(n, 1)
            started = time.perf_counter()
            build_pack(PackRequest(repo=repo, task=task, budget=run.budget, cache_dir=cache))
            edited.append(time.perf_counter() - started)
        peak_rss = _peak_rss_mb()  # before the server's or Aider's process is a waited child
        surface = _surface_figures(run, repo, cache, tasks, edit if sources else None, say)
        aider = None
        if run.aider_python is not None:
            say(f"Aider's repo map: {run.runs} cold, {len(tasks)} warm")
            aider = aider_peer.run_repo_map(
                run.aider_python, repo, tasks, runs=run.runs,
                map_tokens=run.aider_map_tokens, timeout=run.aider_timeout,
            )  # fmt: skip
    return {
        "files": files,
        "cold_index_s": round(statistics.median(cold), 6),
        "warm_refresh_s": round(statistics.median(refresh), 6),
        "pack_ms": percentiles_ms(warm),
        "cli_process_ms": percentiles_ms(process),
        "repack_after_edit_ms": percentiles_ms(edited),
        "peak_rss_mb": peak_rss,
        "baseline": {
            "stat_all_s": round(stat_s, 6),
            "read_all_s": round(read_s, 6),
            "parse_only_s": round(parse_s, 6),
            **_aider_keys(aider),
        },
        **surface,
        "tasks": len(tasks),
        "budget": run.budget,
        "runs": run.runs,
        "cores": workers,
        "synthetic": run.synthetic,
    }


def _surface_figures(
    run: PerfRun,
    repo: Path,
    cache: Path,
    tasks: Sequence[str],
    edit: Callable[[int, int], None] | None,
    say: Progress,
) -> dict[str, Any]:
    """``mcp`` or ``hook``: the same tasks through excerpt's server or its hook processes
    (``edit`` None: the tree has no file to edit, and the server is not timed)."""
    if run.surface == "mcp" and edit is not None:
        from excerpt_bench.perf_mcp import mcp_figures

        say(f"excerpt mcp: {len(tasks)} warm packs, {len(tasks)} after edits, 3 after switches")
        return {"mcp": mcp_figures(repo, cache, tasks, run.budget, edit, percentiles_ms)}
    if run.surface == "hook":
        from excerpt_bench.perf_hook import HookBench, hook_figures

        bench = HookBench(
            repo=repo, cache=cache, scratch=cache.parent, tasks=tuple(tasks),
            cold_runs=run.runs, samples=2 * len(tasks), large_runs=len(tasks),
        )  # fmt: skip
        return {"hook": hook_figures(bench, say)}
    return {}


def _aider_keys(aider: AiderFigures | None) -> dict[str, Any]:
    """The baseline's Aider keys (SPEC §11's two, then the added ones); all null when not run."""
    if aider is None:
        return dict.fromkeys(_AIDER_KEYS)
    return {
        "aider_cold_s": round(aider.cold_s, 6),
        "aider_warm_s": round(aider.warm_p50_s, 6),  # the warm map request's p50
        "aider_warm_p95_s": round(aider.warm_p95_s, 6),
        "aider_map_tokens": aider.map_tokens,
        "aider_version": aider.version,
        "aider_peak_rss_mb": aider.peak_rss_mb,
    }


def render_perf(doc: dict[str, Any]) -> str:
    """The figures as a Markdown table, each beside the floor it is compared with."""
    b = doc["baseline"]
    parse = b["parse_only_s"] or 0.0
    stat = b["stat_all_s"] or 0.0
    cold_x = f"{doc['cold_index_s'] / parse:.1f}x the parse floor" if parse else "—"
    refresh_x = f"{doc['warm_refresh_s'] / stat:.1f}x the stat floor" if stat else "—"
    rows = [
        f"# excerpt bench perf: {doc['files']:,} files indexed, {doc['tasks']} tasks,"
        f" budget {doc['budget']:,} B, {doc['cores']} cores (median of {doc['runs']} runs)",
        "",
        "| measure | excerpt | floor | ratio |",
        "| --- | --- | --- | --- |",
        f"| cold index | {doc['cold_index_s']:.3f} s | parse only, all cores {parse:.3f} s"
        f" | {cold_x} |",
        f"| no-change refresh | {doc['warm_refresh_s']:.3f} s | list + lstat {stat:.3f} s"
        f" | {refresh_x} |",
        f"| read + hash every file | — | {b['read_all_s']:.3f} s | — |",
        f"| warm pack | p50 {doc['pack_ms']['p50']:.0f} ms, p95 {doc['pack_ms']['p95']:.0f} ms"
        " | — | — |",
        f"| warm pack, whole `excerpt pack` process | p50 {doc['cli_process_ms']['p50']:.0f} ms,"
        f" p95 {doc['cli_process_ms']['p95']:.0f} ms | — | — |",
        f"| pack after a one-file edit | p50 {doc['repack_after_edit_ms']['p50']:.0f} ms,"
        f" p95 {doc['repack_after_edit_ms']['p95']:.0f} ms | — | — |",
        f"| peak RSS | {doc['peak_rss_mb']:.0f} MB | — | — |",
    ]
    if doc.get("mcp") is not None:
        rows += _mcp_rows(doc)
    if doc.get("hook") is not None:
        from excerpt_bench.perf_hook import hook_rows

        rows += hook_rows(doc)
    if b.get("aider_cold_s") is not None:
        rows += _aider_rows(doc)
    return "\n".join(rows) + "\n"


def _mcp_rows(doc: dict[str, Any]) -> list[str]:
    """The same packs through ``excerpt mcp`` (request written to answer read), beside the
    library call's."""
    m = doc["mcp"]

    def cell(key: str) -> str:
        return f"p50 {m[key]['p50']:.0f} ms, p95 {m[key]['p95']:.0f} ms"

    return [
        "",
        "The same tasks through one `excerpt mcp --tools core` process over stdio:",
        "",
        "| measure | excerpt mcp | library call |",
        "| --- | --- | --- |",
        f"| warm pack | {cell('pack_ms')} | p50 {doc['pack_ms']['p50']:.0f} ms |",
        f"| pack after a one-file edit | {cell('repack_after_edit_ms')}"
        f" | p50 {doc['repack_after_edit_ms']['p50']:.0f} ms |",
        f"| pack after {m['switch_files']} files changed at once | {cell('repack_after_switch_ms')}"
        " | — |",
    ]


def _ratio(ours: float, theirs: float, target: float) -> str:
    if theirs <= 0:
        return "—"
    ratio = ours / theirs
    verdict = "met" if ratio <= target else "not met"
    return f"{ratio:.3f} (target ≤ {target:g}: {verdict})"


def _aider_rows(doc: dict[str, Any]) -> list[str]:
    """Aider's repo map beside excerpt: cold index / cold map, warm pack p50 / warm map p50."""
    b = doc["baseline"]
    cold, warm, warm95 = b["aider_cold_s"], b["aider_warm_s"], b["aider_warm_p95_s"]
    pack = doc["pack_ms"]["p50"] / 1000
    return [
        "",
        f"Aider {b['aider_version']} repo map on the same copy and tasks (map_tokens"
        f" {b['aider_map_tokens']:,}, tokens counted as characters / 4, median of"
        f" {doc['runs']} cold runs):",
        "",
        "| measure | excerpt | Aider | excerpt / Aider |",
        "| --- | --- | --- | --- |",
        f"| cold index / cold repo map | {doc['cold_index_s']:.3f} s | {cold:.3f} s"
        f" | {_ratio(doc['cold_index_s'], cold, AIDER_COLD_TARGET)} |",
        f"| warm pack / warm repo map | p50 {pack * 1000:.0f} ms | p50 {warm * 1000:.0f} ms,"
        f" p95 {warm95 * 1000:.0f} ms | {_ratio(pack, warm, AIDER_WARM_TARGET)} |",
        f"| peak RSS | {doc['peak_rss_mb']:.0f} MB | {b['aider_peak_rss_mb']:.0f} MB | — |",
    ]
