"""``bench perf --surface hook``: ``excerpt hook`` processes timed as a client runs them.

In: the copy ``bench perf`` measures, the cache holding its index, the tasks. Out: the
``hook`` figures, each a whole process from spawn to exit, the client's JSON on stdin and its
answer read from stdout (the command ``excerpt setup`` installs, ``--client claude --repo
COPY``, the cache in ``EXCERPT_CACHE_DIR``; run without the shell the client wraps it in):

- the seed (``UserPromptSubmit``) cold: in an empty cache the first task prompt gets a note
  and starts the background index; then a task prompt a second after each answer (a new
  session each) until one is seeded, or three after the index was built got a note: the
  first prompt's time, the time until a prompt is seeded, the background index's own, and
  what the prompts in between got;
- the seed warm: each task once, in a new session, on the built index (a note, not a seed,
  when over the hook's 1.5 s bound: counted, and the prompt sent again without the bound);
  then again with an ``excerpt mcp`` running on the copy, whose socket serves the seeds;
- ``PostToolUse`` on a Bash result: a small output (answered before the library loads: the
  cost added to every tool call) and a 200 KB build log (compacted);
- beside them, interleaved with the small ``PostToolUse`` runs: ``python -c pass`` and
  ``excerpt --version``.

A background index a hook starts (cold, or after a late seed) is waited for, untimed.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from excerpt.errors import EnvironmentFault
from excerpt.tooling import nearest_rank
from excerpt_bench.perf_mcp import (
    HookProcesses,
    Outcome,
    hook_command,
    running_server,
    timed_process,
)

__all__ = ["LARGE_BYTES", "HookBench", "hook_figures", "hook_rows", "large_log"]

HOOK_TIMEOUT_S = 1.5  # the seed's latency bound: the hook's own default (not passed)
SMALL_TARGET_MS = 50.0  # PostToolUse on a small output, p50: it runs after every tool call
LARGE_BYTES = 200_000
_POLL_S = 1.0  # between a cold prompt's answer and the next prompt
_COLD_LIMIT_S = 3600.0  # the background index of the largest tree, at most
_AFTER_INDEX = 3  # notes for task prompts once the index is built: the seed is over its bound
_UNBOUNDED = ("--timeout", "600")  # a late warm seed again: how long the seed itself takes
_WATCH_S = 0.05

Say = Callable[[str], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class HookBench:
    repo: Path  # the copy
    cache: Path  # the cache root holding the copy's index (the warm runs)
    scratch: Path  # where the cold runs' empty caches are made (and removed)
    tasks: tuple[str, ...]
    cold_runs: int = 3
    samples: int = 24  # small PostToolUse runs, and runs of each floor
    large_runs: int = 12


def percentiles_ms(samples: Sequence[float]) -> dict[str, float]:
    """p50 and p95 in milliseconds, as ``excerpt_bench.perf``'s (which imports this module,
    so this one cannot import it back)."""
    if not samples:
        return {"p50": 0.0, "p95": 0.0}
    p95 = nearest_rank(samples, 0.95)
    return {"p50": round(statistics.median(samples) * 1000, 1), "p95": round(p95 * 1000, 1)}


def _seconds(samples: Sequence[float]) -> dict[str, float | None]:
    if not samples:
        return {"p50": None, "p95": None}
    return {
        "p50": round(statistics.median(samples), 3),
        "p95": round(nearest_rank(samples, 0.95), 3),
    }


class _IndexWatch(threading.Thread):
    """When the background index a cold prompt started ends, from ``started``."""

    def __init__(self, hooks: HookProcesses, started: float) -> None:
        super().__init__(daemon=True)
        self.hooks, self.started = hooks, started
        self.ended: float | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        seen = False  # a prompt not read as a task starts no index: wait for one that does
        while not self.stop.is_set():
            running = self.hooks.background_running()
            if seen and not running:
                self.ended = time.perf_counter() - self.started
                return
            seen = seen or running
            self.stop.wait(_WATCH_S)


def _cold_run(bench: HookBench, n: int) -> dict[str, Any]:
    """One cold run: an empty cache, task prompts until one is seeded, or until a few after
    the index was built got a note (the seed does not fit the bound on this tree)."""
    cache = bench.scratch / f"hook-cold{n}"
    hooks = HookProcesses(bench.repo, cache)
    tasks = bench.tasks
    outcomes: list[Outcome] = []
    late = 0  # notes once the index was built
    try:
        started = time.perf_counter()
        first, outcome, _ = hooks.prompt(f"cold{n}-0", tasks[n % len(tasks)])
        outcomes.append(outcome)
        watch = _IndexWatch(hooks, started)
        watch.start()
        while outcome != "seed" and late < _AFTER_INDEX:
            if time.perf_counter() - started > _COLD_LIMIT_S:
                raise EnvironmentFault(f"no seed {_COLD_LIMIT_S:.0f} s after the first prompt")
            time.sleep(_POLL_S)
            built = watch.ended is not None
            if built:  # as warm: no refresh a late note started is still running
                hooks.wait_background()
            k = len(outcomes)
            _, outcome, _ = hooks.prompt(f"cold{n}-{k}", tasks[(n + k) % len(tasks)])
            outcomes.append(outcome)
            late += built and outcome == "note"
        seeded = time.perf_counter() - started if outcome == "seed" else None
        hooks.wait_background()
        time.sleep(2 * _WATCH_S)  # the watch sees the end it may not have seen yet
        watch.stop.set()
        watch.join()
    finally:
        hooks.wait_background()
        shutil.rmtree(cache, ignore_errors=True)
    return {"first": first, "seeded": seeded, "index": watch.ended, "outcomes": outcomes}


def _cold(bench: HookBench, say: Say) -> dict[str, Any]:
    runs = []
    for n in range(bench.cold_runs):
        say(f"hook: cold seed {n + 1}/{bench.cold_runs} (the index built in the background)")
        runs.append(_cold_run(bench, n))
    outcomes = [o for r in runs for o in r["outcomes"]]
    seeded = [r["seeded"] for r in runs if r["seeded"] is not None]
    return {
        "runs": len(runs),
        "first_prompt_ms": percentiles_ms([r["first"] for r in runs]),
        "first_prompt_notes": sum(r["outcomes"][0] == "note" for r in runs),
        "seeded_runs": len(seeded),  # the others: no task prompt seeded within the bound
        "until_seeded_s": _seconds(seeded),
        "background_index_s": _seconds([r["index"] for r in runs if r["index"] is not None]),
        "prompts": len(outcomes),
        "notes": outcomes.count("note"),
        "nothing": outcomes.count("nothing"),
        "poll_s": _POLL_S,
    }


def _warm(
    bench: HookBench, say: Say, *, server: bool = False, session: str = "warm"
) -> dict[str, Any]:
    """Each task once, a new session each; with ``server``, an ``excerpt mcp`` on the copy
    runs (as in a client's session) and the hooks ask it for their seeds."""
    if server:
        with running_server(bench.repo, bench.cache):
            time.sleep(_POLL_S)  # the session started a moment before the first prompt
            sockets = sum(1 for _ in (bench.cache / "sock").glob("*"))
            return {**_warm(bench, say, session="served"), "server_sockets": sockets}
    from excerpt.tooling import o200k_count

    hooks = HookProcesses(bench.repo, bench.cache)
    hooks.wait_background()
    times: list[float] = []
    outcomes: list[Outcome] = []
    tokens: list[float] = []
    unbounded: list[float] = []
    late_seeded = 0
    for n, task in enumerate(bench.tasks):
        say(f"hook: warm seed ({session}) {n + 1}/{len(bench.tasks)}")
        took, outcome, context = hooks.prompt(f"{session}-{n}", task)
        times.append(took)
        outcomes.append(outcome)
        if outcome == "seed":
            tokens.append(o200k_count(context))
        hooks.wait_background()  # a late seed's refresh: before the next prompt is timed
        if outcome == "note":  # the same prompt without the bound: how late the seed is
            took, outcome, _ = hooks.prompt(f"{session}-late-{n}", task, *_UNBOUNDED)
            unbounded.append(took)
            late_seeded += outcome == "seed"
            hooks.wait_background()
    by = {k: [t for t, o in zip(times, outcomes, strict=True) if (o == "nothing") == k]
          for k in (False, True)}  # fmt: skip
    return {
        "prompts": len(times),
        "seed_ms": percentiles_ms(by[False]),  # the prompts read as tasks: a seed or a note
        "nothing_ms": percentiles_ms(by[True]),
        "seeded": outcomes.count("seed"),
        "notes": outcomes.count("note"),
        "nothing": outcomes.count("nothing"),
        "over_bound": sum(t > HOOK_TIMEOUT_S for t in times),
        "unbounded_seed_ms": percentiles_ms(unbounded),  # the noted prompts, no bound
        "unbounded_seeded": late_seeded,
        "seed_tokens": {
            "p50": round(statistics.median(tokens)) if tokens else 0,
            "max": round(max(tokens)) if tokens else 0,
        },
    }


_SMALL = (
    "".join(f" M src/app/module_{n}.py\n" for n in range(6)) + "?? notes.txt\n"
)  # a `git status --short`: far under the hook's 8,000-byte threshold


def large_log(n: int, size: int = LARGE_BYTES) -> str:
    """A build log of about ``size`` bytes (the same for the same ``n``, another for
    another): progress lines repeating with counters, a few warnings, one failure with its
    traceback two thirds in."""
    lines = [f"$ make -j4 build  # run {n}"]
    total, k = 0, 0
    while total < size:
        if k % 400 == 399:
            line = (f"WARNING pkg{k % 31}/module_{k % 17}.py:{k % 300 + 1}: DeprecationWarning:"
                    f" call_later() is deprecated, use schedule() (build {n})")  # fmt: skip
        else:
            line = (f"2025-03-{k % 28 + 1:02d}T10:{k // 60 % 60:02d}:{k % 60:02d} INFO "
                    f"[worker-{k % 4}] compiled pkg{k % 31}/module_{k % 17}.py"
                    f" ({(k * 37) % 900 + 12} ms, cache {'hit' if k % 3 else 'miss'})")  # fmt: skip
        lines.append(line)
        total += len(line) + 1
        k += 1
    at = len(lines) * 2 // 3
    lines[at:at] = [
        f"ERROR build step 'link' failed in run {n}:",
        "Traceback (most recent call last):",
        '  File "tools/link.py", line 41, in link',
        "LinkError: undefined symbol: settle_invoice",
    ]
    return "\n".join(lines) + "\n"


def _post_tool_use(bench: HookBench, say: Say) -> dict[str, Any]:
    hooks = HookProcesses(bench.repo, bench.cache)
    python = [sys.executable, "-c", "pass"]
    version = [*hook_command(), "--version"]
    small: list[float] = []
    floor_pass: list[float] = []
    floor_version: list[float] = []
    replaced_small = 0
    for n in range(bench.samples):  # interleaved: each measure meets the machine's same moments
        say(f"hook: PostToolUse on a small output, and the floor {n + 1}/{bench.samples}")
        floor_pass.append(timed_process(python, b"", hooks.env)[0])
        floor_version.append(timed_process(version, b"", hooks.env)[0])
        took, answer = hooks.tool("git status --short", _SMALL, n)
        small.append(took)
        replaced_small += bool(answer)
    large: list[float] = []
    compacted: list[int] = []
    log_bytes: list[int] = []
    for n in range(bench.large_runs):
        say(f"hook: PostToolUse on a 200 KB log {n + 1}/{bench.large_runs}")
        log = large_log(n)
        log_bytes.append(len(log.encode("utf-8")))
        took, answer = hooks.tool("make -j4 build 2>&1", log, 1000 + n)
        large.append(took)
        out = answer.get("updatedToolOutput")
        if isinstance(out, dict) and isinstance(out.get("stdout"), str):
            compacted.append(len(out["stdout"].encode("utf-8")))
    small_ms = percentiles_ms(small)
    return {
        "post_tool_use": {
            "small_ms": small_ms,
            "small_bytes": len(_SMALL.encode("utf-8")),
            "small_runs": len(small),
            "small_replaced": replaced_small,
            "small_target_ms": SMALL_TARGET_MS,
            "small_target_met": small_ms["p50"] < SMALL_TARGET_MS,
            "large_ms": percentiles_ms(large),
            "large_bytes": round(statistics.median(log_bytes)) if log_bytes else 0,
            "large_runs": len(large),
            "large_replaced": len(compacted),
            "large_compacted_bytes": round(statistics.median(compacted)) if compacted else None,
        },
        "floor": {
            "python_pass_ms": percentiles_ms(floor_pass),
            "excerpt_version_ms": percentiles_ms(floor_version),
            "runs": len(floor_pass),
        },
    }


def hook_figures(bench: HookBench, say: Say | None = None) -> dict[str, Any]:
    """The ``hook`` figures of ``bench perf --surface hook`` (see the module's docstring).

    Raises:
        EnvironmentFault: a hook process failed, wrote no JSON, or no prompt was seeded
            within an hour of the first.
    """
    tell = say or (lambda _: None)
    if not bench.tasks:
        raise EnvironmentFault("no task prompt for the hook")
    warm = _warm(bench, tell)  # first: the warm index as the other surfaces left it
    served = _warm(bench, tell, server=True)
    tool = _post_tool_use(bench, tell)
    cold = _cold(bench, tell)
    name = Path(hook_command()[-1]).name
    return {
        "command": f"{name} hook EVENT --client claude --repo COPY",
        "timeout_s": HOOK_TIMEOUT_S,
        "seed_cold": cold,
        "seed_warm": warm,
        "seed_warm_server": served,
        **tool,
    }


def hook_rows(doc: dict[str, Any]) -> list[str]:
    """The hook figures as a table, beside the process floor measured in the same run."""
    h = doc["hook"]
    cold, warm, tool, floor = h["seed_cold"], h["seed_warm"], h["post_tool_use"], h["floor"]

    def ms(cell: dict[str, float]) -> tuple[str, str]:
        return f"{cell['p50']:,.0f} ms", f"{cell['p95']:,.0f} ms"

    def s(cell: dict[str, float | None]) -> tuple[str, str]:
        def one(v: float | None) -> str:
            return "—" if v is None else f"{v:,.2f} s"

        return one(cell["p50"]), one(cell["p95"])

    served = h["seed_warm_server"]
    met = "met" if tool["small_target_met"] else "not met"
    over_pass = tool["small_ms"]["p50"] - floor["python_pass_ms"]["p50"]
    compacted = tool["large_compacted_bytes"]
    rows = [
        ("seed, cold: the first prompt", *ms(cold["first_prompt_ms"]),
         f"{cold['first_prompt_notes']} of {cold['runs']} a note (the index starts in the"
         " background)"),
        ("seed, cold: until a prompt is seeded", *s(cold["until_seeded_s"]),
         f"in {cold['seeded_runs']} of {cold['runs']} runs"
         + (f" (the others: {_AFTER_INDEX} notes after the index was built)"
            if cold["seeded_runs"] < cold["runs"] else "")
         + f"; background index {s(cold['background_index_s'])[0]}"
         f" p50; of {cold['prompts']} prompts {cold['notes']} got a note, {cold['nothing']}"
         f" nothing (one every {cold['poll_s']:g} s after an answer)"),
        (f"seed, warm ({warm['prompts']} task prompts)", *ms(warm["seed_ms"]), _warm_cell(warm)),
        ("seed, warm, an `excerpt mcp` running (its seed socket)", *ms(served["seed_ms"]),
         _warm_cell(served)),
        (f"PostToolUse, small output ({tool['small_bytes']:,} B)", *ms(tool["small_ms"]),
         f"target < {tool['small_target_ms']:g} ms p50: {met}; {over_pass:+,.0f} ms over"
         " `python -c pass`"),
        (f"PostToolUse, {tool['large_bytes'] / 1000:,.0f} KB log", *ms(tool["large_ms"]),
         f"{tool['large_replaced']} of {tool['large_runs']} replaced"
         + (f", {compacted:,} B each (p50)" if compacted is not None else "")),
        ("floor: `python -c pass`", *ms(floor["python_pass_ms"]), f"{floor['runs']} runs"),
        ("floor: `excerpt --version`", *ms(floor["excerpt_version_ms"]), f"{floor['runs']} runs"),
    ]  # fmt: skip
    return [
        "",
        f"`{h['command']}` as whole processes, JSON on stdin, spawn to exit (the hook's bound"
        f" {HOOK_TIMEOUT_S:g} s), beside the process floor of the same run:",
        "",
        "| measure | p50 | p95 | |",
        "| --- | --- | --- | --- |",
        *(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows),
    ]


def _warm_cell(warm: dict[str, Any]) -> str:
    """What the warm prompts got, beside their times."""
    held = "held" if warm["notes"] == warm["over_bound"] == 0 else "missed"
    p50, p95 = warm["unbounded_seed_ms"]["p50"], warm["unbounded_seed_ms"]["p95"]
    cell = (
        f"bound {HOOK_TIMEOUT_S * 1000:,.0f} ms {held}: {warm['seeded']} seeded"
        f" ({warm['seed_tokens']['p50']:,} o200k tokens p50), {warm['notes']} a note,"
        f" {warm['nothing']} nothing"
    )
    if warm["nothing"]:
        cell += (f" (not read as a task, or no match: p50 {warm['nothing_ms']['p50']:,.0f} ms,"
                 " not in the row)")  # fmt: skip
    if warm["notes"]:
        cell += (f"; the noted prompts again without the bound: p50 {p50:,.0f} ms, p95"
                 f" {p95:,.0f} ms, {warm['unbounded_seeded']} seeded")  # fmt: skip
    return cell
