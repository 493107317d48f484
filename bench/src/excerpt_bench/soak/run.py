"""``run_soak``: the copy, the actors started and stopped, the kill, the figures per minute,
the verdicts and the targets; ``render_soak`` as text."""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt.errors import EnvironmentFault, UsageError
from excerpt_bench.soak.actors import Hooks, Record, Sampler, Session
from excerpt_bench.soak.writer import SWITCH_EVERY_S, Writer

__all__ = ["SoakRun", "render_soak", "run_soak"]

Progress = Callable[[str], None]

_SOURCE_EXT = (".py", ".js", ".ts", ".go", ".rs", ".java", ".c", ".h", ".rb", ".md", ".txt")


@dataclass(frozen=True, slots=True, kw_only=True)
class SoakRun:
    """What ``bench soak`` runs: ``repo`` copied (or ``synthetic`` files generated)."""

    repo: Path | None
    minutes: float = 10.0
    sessions: int = 4
    budget: int = 8000
    synthetic: int | None = None
    seed: int = 0
    kill: bool = True
    keep: Path | None = None  # where to leave the copy, the cache and the servers' logs
    hook_pause_s: float = 0.0  # between two pairs of hook processes (0: back to back)


def _p(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def per_minute(
    record: Record, samples: Sequence[dict[str, Any]], minutes: int
) -> list[dict[str, Any]]:
    rows = []
    for m in range(minutes):
        took = [t for at, _, t in record.calls if m * 60 <= at < (m + 1) * 60]
        mine = [s for s in samples if m * 60 <= s["at_s"] < (m + 1) * 60]
        last = mine[-1] if mine else None
        rss: dict[str, float] = {}
        fds: dict[str, int] = {}
        for s in mine:  # the largest each process reached in the minute
            for name, mb in s["rss_mb"].items():
                rss[name] = max(rss.get(name, 0.0), mb)
            # the fewest descriptors: a leak raises the floor, a call in flight does not
            for name, n in s["open_fds"].items():
                fds[name] = min(fds.get(name, n), n)
        rows.append({
            "minute": m + 1,
            "calls": len(took),
            "p50_ms": round(statistics.median(took) * 1000, 1) if took else None,
            "p95_ms": round(_p(took, 0.95) * 1000, 1) if took else None,
            "rss_mb": rss,
            "open_fds": fds,
            "cache_bytes": last["cache_bytes"] if last else None,
            "compact_store_bytes": last["compact_store_bytes"] if last else None,
        })  # fmt: skip
    return rows


def _verdicts(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if len(rows) < 3:
        return {"latency_drift": None, "rss_growth_mb": None, "fd_growth": None,
                "cache_growth_bytes": None}  # fmt: skip
    second, last = rows[1], rows[-1]
    drift = (
        round(last["p95_ms"] / second["p95_ms"], 2)
        if last["p95_ms"] and second["p95_ms"] else None
    )  # fmt: skip
    growth = [last["rss_mb"][k] - v for k, v in second["rss_mb"].items() if k in last["rss_mb"]]
    fds = [last["open_fds"][k] - v for k, v in second["open_fds"].items() if k in last["open_fds"]]
    cache = (
        last["cache_bytes"] - second["cache_bytes"]
        if last["cache_bytes"] is not None and second["cache_bytes"] is not None else None
    )  # fmt: skip
    return {
        "latency_drift": drift,
        "rss_growth_mb": round(max(growth), 1) if growth else None,
        "fd_growth": max(fds) if fds else None,
        "cache_growth_bytes": cache,
    }


def _packs(server: Any, tasks: Sequence[str], budget: int) -> list[Any]:
    """The items of ``server``'s pack of each task (path, lines, file digest, text)."""
    out = []
    for task in tasks:
        arguments = {"task": task, "budget": budget, "format": "json"}
        result = server.request("tools/call", {"name": "context_pack", "arguments": arguments})
        doc = json.loads(result["content"][0]["text"])
        out.append([(i["path"], i["start_line"], i["end_line"], i["source_sha256"], i["text"])
                    for i in doc.get("items", [])])  # fmt: skip
    return out


def _after_kill(repo: Path, tmp: Path, session: Session, tasks: Sequence[str],
                budget: int) -> dict[str, Any]:  # fmt: skip
    """With the tree quiet: a session's server killed in the middle of a pack and started
    again, its next packs beside a fresh server's on an empty cache."""
    from excerpt_bench.perf_mcp import McpProcess

    with session.busy:  # between two of its rounds
        session.kill_mid_call()
        restarted = _packs(session.server, tasks, budget)
    from excerpt.tooling import index_repository

    # indexed whole before it starts, as the soaked cache was: a server's first answers on
    # an empty cache come before the lazily built parts of its index (the import graph)
    index_repository(repo, cache_dir=tmp / "fresh-cache")
    fresh = McpProcess(repo, tmp / "fresh-cache")
    try:
        fresh.start()
        expected = _packs(fresh, tasks, budget)
    finally:
        fresh.close()
    differing = [n for n, (a, b) in enumerate(zip(restarted, expected, strict=True)) if a != b]
    return {"tasks": len(tasks), "differing_tasks": differing}


def run_soak(run: SoakRun, progress: Progress | None = None) -> dict[str, Any]:
    """The soak's figures and verdicts (see the module's text).

    Raises:
        UsageError: no tree, bad numbers, or a tree with nothing to pack.
    """
    from excerpt.tooling import derived_tasks, index_repository
    from excerpt_bench.synthetic import write_tree

    say = progress or (lambda _: None)
    if run.synthetic is None and (run.repo is None or not run.repo.is_dir()):
        raise UsageError(f"--repo must be a directory: {run.repo}")
    if not 0 < run.minutes <= 24 * 60 or not 1 <= run.sessions <= 32:
        raise UsageError("--minutes must be above 0 (at most a day), --sessions from 1 to 32")
    if run.keep is not None and run.keep.exists():
        raise UsageError(f"--keep {run.keep} exists: give a new directory")
    with tempfile.TemporaryDirectory(prefix="excerpt-soak-") as name:
        tmp = Path(name) if run.keep is None else run.keep
        tmp.mkdir(parents=True, exist_ok=True)
        repo, cache, logs = tmp / "repo", tmp / "cache", tmp / "logs"
        logs.mkdir()
        if run.synthetic is not None:
            say(f"writing a synthetic tree of {run.synthetic:,} files")
            write_tree(repo, run.synthetic)
        else:
            say("copying the tree")
            assert run.repo is not None
            shutil.copytree(run.repo, repo, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        say("indexing the copy")
        index_repository(repo, cache_dir=cache)
        tasks = [t.task for t in derived_tasks(repo, cache, count=12)]
        if not tasks:
            raise UsageError("no task to pack: the tree has no definitions")
        files = sorted(
            str(p.relative_to(repo)) for p in repo.rglob("*")
            if p.is_file() and not p.is_symlink() and p.suffix in _SOURCE_EXT
        )  # fmt: skip
        stop = threading.Event()
        # a run shorter than the interval still sees one switch, before its kill
        every = min(SWITCH_EVERY_S, run.minutes * 60 * 0.8)
        writer = Writer(repo, files, run.seed, stop, switch_every_s=every)
        started = time.monotonic()
        record = Record(started=started)
        sessions = [Session(n, repo, cache, logs, tasks, run.budget, writer, record, stop)
                    for n in range(run.sessions)]  # fmt: skip
        hooks = Hooks(repo, cache, tasks, record, stop, run.hook_pause_s)
        sampler = Sampler(sessions, cache, started, stop)
        for thread in (*sessions, hooks, writer, sampler):
            thread.start()
        deadline = started + run.minutes * 60
        killed_at = started + run.minutes * 30 if run.kill else None
        while time.monotonic() < deadline:
            left = deadline - time.monotonic()
            say(f"soaking: {left / 60:.1f} min left, {len(record.calls):,} calls,"
                f" {len(record.errors)} errors, {len(record.stale)} stale")  # fmt: skip
            if killed_at is not None and time.monotonic() >= killed_at:
                sessions[0].kill_now.set()
                killed_at = None
            time.sleep(min(1.0, max(0.0, left)))
        writer.paused.set()  # the tree goes quiet for the comparison
        say("a server killed mid-call and restarted, beside a fresh one")
        time.sleep(2.0)
        try:
            comparison = _after_kill(repo, tmp, sessions[0], tasks[:3], run.budget)
        except EnvironmentFault as exc:
            comparison = {"error": str(exc)}
        stop.set()
        for thread in (*sessions, hooks, writer, sampler):
            thread.join(timeout=120)
        from excerpt_bench.perf_mcp import HookProcesses

        HookProcesses(repo, cache).wait_background()
        leftover = [t.name for t in (*sessions, hooks, writer, sampler) if t.is_alive()]
        leftover += [f"server {s.n}" for s in sessions if s.server is not None
                     and s.server.proc.poll() is None]  # fmt: skip
        minutes = max(1, round(run.minutes))
        rows = per_minute(record, sampler.samples, minutes)
        crashes = _crash_lines(logs)
    doc: dict[str, Any] = {
        "repo": str(run.repo) if run.synthetic is None else None,
        "synthetic_files": run.synthetic,
        "files": len(files),
        "minutes": run.minutes,
        "sessions": run.sessions,
        "calls": len(record.calls),
        "calls_by_kind": _by_kind(record),
        "errors": record.errors,
        "served": record.served,
        "stale_served": len(record.stale),
        "stale_serves": record.stale,
        "stale_refused": record.stale_answers,
        "writes": writer.writes,
        "switches": writer.switches,
        "writer_failure": writer.failure,
        "killed_mid_call": sessions[0].killed,
        "after_kill": comparison,
        "server_log_errors": crashes,
        "leftover": leftover,
        "per_minute": rows,
        **_verdicts(rows),
    }
    doc["targets"] = targets(doc)
    return doc


def _by_kind(record: Record) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, kind, _ in record.calls:
        out[kind] = out.get(kind, 0) + 1
    return dict(sorted(out.items()))


def _crash_lines(logs: Path) -> list[str]:
    """Tracebacks and errors the servers wrote on stderr."""
    out = []
    for log in sorted(logs.glob("*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if "Traceback" in line or "Error" in line:
                out.append(f"{log.stem}: {line[:300]}")
    return out[:50]


def targets(doc: dict[str, Any]) -> dict[str, bool | None]:
    """Each target: met, missed, or None when the run was too short to tell."""
    after = doc["after_kill"]
    return {
        "no_errors": not doc["errors"] and not doc["server_log_errors"],
        "no_stale_serve": doc["stale_served"] == 0,
        "everything_stopped": not doc["leftover"],
        "after_kill_equal_to_fresh": "error" not in after and not after["differing_tasks"],
        "latency_drift_at_most_1.3": (
            None if doc["latency_drift"] is None else doc["latency_drift"] <= 1.3
        ),
        "rss_growth_at_most_20_mb": (
            None if doc["rss_growth_mb"] is None else doc["rss_growth_mb"] <= 20
        ),
        "open_fds_flat": None if doc["fd_growth"] is None else doc["fd_growth"] <= 2,
    }


def render_soak(doc: dict[str, Any]) -> str:
    what = doc["repo"] or f"a synthetic tree of {doc['synthetic_files']:,} files"
    kinds = ", ".join(f"{k} {v:,}" for k, v in doc["calls_by_kind"].items())
    lines = [
        f"excerpt bench soak: {what} ({doc['files']:,} source files), {doc['minutes']:g} min,"
        f" {doc['sessions']} sessions",
        f"{doc['calls']:,} calls ({kinds});"
        f" {len(doc['errors'])} errors; {doc['served']:,} excerpts served, {doc['stale_served']}"
        f" stale serves, {doc['stale_refused']:,} stale handles refused; {doc['writes']:,}"
        f" writes, {doc['switches']} switches of 50 files",
        "",
        "| minute | calls | p50 ms | p95 ms | RSS MB (max per process) | open fds (fewest) |"
        " cache B | compaction store B |",
        "| ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |",
    ]
    for r in doc["per_minute"]:
        rss = ", ".join(f"{k} {v:g}" for k, v in r["rss_mb"].items())
        fds = ", ".join(f"{k} {v}" for k, v in r["open_fds"].items())
        lines.append(
            f"| {r['minute']} | {r['calls']:,} | {r['p50_ms']} | {r['p95_ms']} | {rss} | {fds} |"
            f" {r['cache_bytes'] or 0:,} | {r['compact_store_bytes'] or 0:,} |"
        )
    lines += [
        "",
        f"latency drift (p95, last minute / second): {doc['latency_drift']}; RSS growth:"
        f" {doc['rss_growth_mb']} MB; open fds growth: {doc['fd_growth']}; cache growth:"
        f" {doc['cache_growth_bytes']} B",
        f"killed mid-call and restarted: {doc['killed_mid_call']}; after: {doc['after_kill']}",
    ]
    for e in doc["errors"][:20]:
        lines.append(f"error at {e['at_s']} s in {e['call']}: {e['reason']}")
    for s in doc["stale_serves"][:20]:
        lines.append(f"stale serve at {s['at_s']} s in {s['call']}: {', '.join(s['handles'])}")
    for line in doc["server_log_errors"][:20]:
        lines.append(f"server log: {line}")
    if doc["leftover"]:
        lines.append(f"still running at the end: {', '.join(doc['leftover'])}")
    met = ", ".join(f"{k} {'yes' if v else 'NO' if v is False else '-'}"
                    for k, v in doc["targets"].items())  # fmt: skip
    lines.append(f"targets: {met}")
    return "\n".join(lines)
