"""``excerpt bench localize``: file localization and line coverage on real issues, beside a
plain BM25 file ranker measured in the same run (SPEC §10, §11).

Each task's tree is exported from a local git directory at its base commit into one working
directory per repository, writing only files whose bytes changed, so the index refreshes
incrementally between tasks. The query is the problem statement alone.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from excerpt.errors import UsageError
from excerpt.tooling import (
    PARSED_LANGUAGES,
    SIGNALS,
    Delivered,
    FileSource,
    HistorySource,
    IndexReport,
    IndexStore,
    IndexView,
    PackRequest,
    Prepared,
    RecordingView,
    ReplayMiss,
    TokenCounter,
    Weights,
    WorkspaceFiles,
    analyze_task,
    default_weights,
    index_repository,
    line_coverage,
    mean,
    mrr,
    pack_prepared,
    prepare_ranked,
    rank_files,
    repo_cache_dir,
    resolve_root,
    run_git,
    sha256_hex,
    terms,
)
from excerpt_bench.primary import (
    calibration_rows,
    primary_metrics,
    primary_summary,
    primary_table,
    region_calibration_rows,
)
from excerpt_bench.reach import (
    REACH_BUDGET,
    Shown,
    bm25_pack,
    outside_shares,
    reach_cause,
    reach_summary,
    reach_table,
    reach_tokens,
    shown_of,
    task_language,
)
from excerpt_bench.recording import (
    RecordingSource,
    ReplaySource,
    TaskRecording,
    read_task_recording,
    write_task_recording,
)

__all__ = [
    "BenchTask",
    "ProgressFn",
    "bm25_ranking",
    "export_tree",
    "load_tasks",
    "serial_rows",
    "summarise",
]

KS = (1, 3, 5, 10)
TOP = 50
ALL_SIGNALS = "all signals (ranking alone)"


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchTask:
    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    gold_files: tuple[str, ...]
    gold_changed_lines: dict[str, list[list[int]]] = field(default_factory=dict)
    repo_dir: str | None = None


def load_tasks(path: Path, limit: int | None = None) -> list[BenchTask]:
    """Tasks from JSON lines.

    Raises:
        UsageError: unreadable file or a task without its required fields.
    """
    tasks: list[BenchTask] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read dataset {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read dataset {path}: not UTF-8 text") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
            tasks.append(
                BenchTask(
                    instance_id=str(doc["instance_id"]),
                    repo=str(doc.get("repo", "")),
                    base_commit=str(doc.get("base_commit", "")),
                    problem_statement=str(doc["problem_statement"]),
                    gold_files=tuple(doc["gold_files"]),
                    gold_changed_lines=dict(doc.get("gold_changed_lines") or {}),
                    repo_dir=doc.get("repo_dir"),
                )
            )
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise UsageError(f"{path}:{number}: malformed task ({type(exc).__name__})") from None
        if limit is not None and len(tasks) >= limit:
            break
    return tasks


def export_tree(git_dir: Path, commit: str, workdir: Path) -> int:
    """Make ``workdir`` hold the tree of ``commit``, rewriting only files whose bytes changed.

    Reads objects (``ls-tree`` + ``cat-file --batch``), so a blob missing from a partial
    clone (a large data file) is skipped instead of failing the export. Returns how many
    blobs were missing.

    Raises:
        GitFault: git cannot read the commit.
    """
    listing = run_git(
        workdir.parent, "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "--full-tree", commit
    )
    entries = []
    for entry in listing.stdout.split(b"\0"):
        meta, _, raw_path = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob":
            path = raw_path.decode("utf-8", "surrogateescape")
            if not path.startswith("/") and ".." not in path.split("/"):
                entries.append((fields[0], fields[2].decode(), path))
    batch = run_git(
        workdir.parent, "--git-dir", str(git_dir), "cat-file", "--batch",
        input="".join(f"{sha}\n" for _, sha, _ in entries).encode(),
    ).stdout  # fmt: skip
    # stale entries go first, so a path that turned from a file into a directory (or back)
    # has room before the new tree is written
    _remove_others(workdir, {p for _, _, p in entries})
    missing = 0
    offset = 0
    for mode, _sha, path in entries:
        header_end = batch.index(b"\n", offset)
        header = batch[offset:header_end].split()
        offset = header_end + 1
        if len(header) < 3 or header[1] != b"blob":
            missing += 1
            continue
        size = int(header[2])
        data = batch[offset : offset + size]
        offset += size + 1
        _sync(workdir / path, data, symlink=mode == b"120000")
    return missing


def _sync(target: Path, data: bytes, *, symlink: bool) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if symlink:
        link = data.decode("utf-8", "surrogateescape")
        if target.is_symlink() and os.readlink(target) == link:
            return
        if target.exists() or target.is_symlink():
            target.unlink()
        target.symlink_to(link)
        return
    if target.is_symlink():
        target.unlink()
    elif target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
        return  # same bytes: keep the mtime, so the index reuses the file
    target.write_bytes(data)


def _remove_others(workdir: Path, wanted: set[str]) -> None:
    for dirpath, dirnames, filenames in os.walk(workdir, topdown=False):
        for name in filenames:
            path = Path(dirpath) / name
            if path.relative_to(workdir).as_posix() not in wanted:
                path.unlink()
        for name in dirnames:
            path = Path(dirpath) / name
            if path.is_symlink():
                if path.relative_to(workdir).as_posix() not in wanted:
                    path.unlink()
            elif not any(path.iterdir()):
                path.rmdir()


def bm25_ranking(view: IndexView, text: str) -> list[str]:
    """The baseline: plain BM25 over source files (path, symbol names and content, equal
    weights), query = every identifier-split term of the issue text."""
    query = list(dict.fromkeys(terms(text)))[:256]
    files = view.files()
    hits = view.lexical(query, 400, field_weights=(1.0, 1.0, 1.0))
    return [p for p, _ in hits if files[p].language in PARSED_LANGUAGES][:TOP]


def _file_metrics(ranked: Sequence[str], gold: set[str]) -> dict[str, float]:
    out = {f"acc@{k}": float(bool(gold) and gold <= set(ranked[:k])) for k in KS}
    out["hit@5"] = float(bool(gold & set(ranked[:5])))
    out["mrr"] = mrr(ranked, gold)
    return out


ProgressFn = Callable[[int, int], None]


def serial_rows(
    tasks: Sequence[BenchTask],
    git_dirs: dict[str, Path],
    out: Path,
    budgets: Sequence[int],
    ablate: bool,
    record: Path | None,
    replay: Path | None,
    jobs: int,
    weights: Weights | None,
    lenient: bool = False,
) -> Iterator[dict[str, Any]]:
    """The rows of ``tasks`` in this process (or ``jobs`` processes for a replay), in order:
    what ``excerpt_bench.localize.run_localize`` writes when it does not fan out."""
    w = weights or default_weights()
    if replay is None:
        for task in tasks:
            yield _run_one(task, git_dirs, out, out / "cache", budgets, ablate, record, w)
        return
    if jobs <= 1 or len(tasks) < 2:
        for task in tasks:
            yield _replay_one(task, replay, out / "cache", budgets, ablate, w, lenient)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        yield from pool.map(
            _replay_in_worker,
            tasks,
            [replay] * len(tasks),
            [out / "cache"] * len(tasks),
            [budgets] * len(tasks),
            [ablate] * len(tasks),
            [w] * len(tasks),
            [lenient] * len(tasks),
            chunksize=4,
        )


def _workdir(task: BenchTask, git_dirs: dict[str, Path], out: Path) -> Path:
    if task.repo_dir:
        return Path(task.repo_dir)
    if task.repo not in git_dirs:
        raise UsageError(f"no --git-dir given for repository {task.repo}")
    workdir = out / "work" / task.repo.replace("/", "__")
    workdir.mkdir(parents=True, exist_ok=True)
    export_tree(git_dirs[task.repo], task.base_commit, workdir)
    return workdir


def _history_source(
    task: BenchTask, git_dirs: dict[str, Path]
) -> HistorySource | Literal["repository"]:
    """The exported tree has no ``.git``: its history is the base commit's ancestors in the
    task's git directory (a task in a live ``repo_dir`` has that repository's own)."""
    if task.repo_dir:
        return "repository"
    git_dir = git_dirs[task.repo]
    head = run_git(
        git_dir, "--git-dir", str(git_dir), "rev-parse", "--verify", "--end-of-options",
        f"{task.base_commit}^{{commit}}",
    ).stdout.decode("ascii").strip()  # fmt: skip
    return HistorySource(git_dir=git_dir, head=head)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Inputs:
    """What scoring a task reads: live from a tree and its index, or from a recording."""

    view: IndexView
    source: FileSource
    raw: Callable[[str], bytes | None]
    root: Path
    cache: Path
    report: IndexReport
    gold_present: frozenset[str]
    weights: Weights


def _run_one(
    task: BenchTask,
    git_dirs: dict[str, Path],
    out: Path,
    cache: Path,
    budgets: Sequence[int],
    ablate: bool = False,
    record: Path | None = None,
    weights: Weights | None = None,
    *,
    workdir: Path | None = None,
    index_jobs: int | None = None,
) -> dict[str, Any]:
    """One task, live: its tree exported (or ``workdir``, already holding it), indexed into
    ``cache`` with ``index_jobs`` parser processes (None: every core), ranked, packed, scored."""
    root = resolve_root(workdir or _workdir(task, git_dirs, out))
    started = time.perf_counter()
    report = index_repository(
        root, cache_dir=cache, history=_history_source(task, git_dirs), jobs=index_jobs
    )
    repo_cache = repo_cache_dir(root, cache)
    raw: dict[str, bytes | None] = {}

    def read_raw(path: str) -> bytes | None:
        try:
            raw[path] = (root / path).read_bytes()
        except OSError:
            raw[path] = None
        return raw[path]

    with IndexStore.open(repo_cache) as store:
        view = RecordingView(store.view())
        source = RecordingSource(WorkspaceFiles(root))
        present = set(view.files())
        # gold files the tree holds, indexed or not: one the index left out counts as missed
        gold = frozenset(g for g in task.gold_files if g in present or (root / g).is_file())
        inputs = _Inputs(
            view=view, source=source, raw=read_raw, root=root, cache=repo_cache,
            report=report, gold_present=gold, weights=weights or default_weights(),
        )  # fmt: skip
        row = _score(task, inputs, budgets, ablate, started)
        candidates = row.pop("candidates")
        if record is not None:
            _widen(view, source, candidates)
            write_task_recording(
                record,
                TaskRecording(
                    instance_id=task.instance_id, task_sha256=_task_digest(task),
                    root=str(root), view=view.replay(), files=source.seen, raw=raw,
                    gold_present=tuple(sorted(gold)), report=report,
                ),
            )  # fmt: skip
    return row


# how many files of each recorded lexical answer a recording also keeps whole
_WIDEN_LEXICAL = 60
# how many of the first candidates a recording also keeps the graph neighbours of
_WIDEN_NEIGHBOURS = 12


def _widen(view: RecordingView, source: RecordingSource, ranked: Sequence[str]) -> None:
    """Record what a changed ranking or selection may ask next, beside what this one asked:
    the definitions and bytes of the first files of every recorded lexical answer, of every
    file defining a name the task gave, of every candidate, and of the import-graph
    neighbours and tests of the first candidates. A replay with other weights or demotions
    then finds them instead of stopping at a file it never saw."""
    paths = {p for answer in view.lexical_answers.values() for p, _ in answer[:_WIDEN_LEXICAL]}
    paths |= {s.path for s in view.symbols.values()}
    first = set(ranked[:_WIDEN_NEIGHBOURS])
    for src, dst, kind in view.edges():
        if dst in first or (src in first and kind == "imports"):
            paths |= {src, dst}
    paths |= set(ranked)
    files = view.files()
    wanted = sorted(p for p in paths if p in files and files[p].status is None)
    view.symbols_in(wanted)
    for path in wanted:
        if path not in source.seen:
            source.read(path)


def _replay_one(
    task: BenchTask,
    replay: Path,
    cache: Path,
    budgets: Sequence[int],
    ablate: bool,
    weights: Weights | None = None,
    lenient: bool = False,
) -> dict[str, Any]:
    rec = read_task_recording(replay, task.instance_id)
    unrecorded: set[str] | None = set() if lenient else None
    if rec.task_sha256 != _task_digest(task):
        raise UsageError(f"--replay: {task.instance_id} was recorded with another task text")

    def read_raw(path: str) -> bytes | None:
        if path not in rec.raw:
            raise ReplayMiss(f"no recorded read of {path}")
        return rec.raw[path]

    # a lenient view is a copy (its tables sorted again): only when asked for
    view = rec.view if unrecorded is None else dataclasses.replace(rec.view, unrecorded=unrecorded)
    inputs = _Inputs(
        view=view, source=ReplaySource(rec.files, unrecorded), raw=read_raw, root=Path(rec.root),
        cache=cache / "repos" / "replay", report=rec.report,
        gold_present=frozenset(rec.gold_present), weights=weights or default_weights(),
    )  # fmt: skip
    try:
        row = _score(task, inputs, budgets, ablate, time.perf_counter())
    except ReplayMiss as e:
        raise ReplayMiss(
            f"--replay: {task.instance_id}: {e} (record again with this code)"
        ) from None
    del row["candidates"]
    if unrecorded is not None:
        row["replay_unrecorded"] = sorted(unrecorded)
    return row


def _replay_in_worker(
    task: BenchTask,
    replay: Path,
    cache: Path,
    budgets: Sequence[int],
    ablate: bool,
    weights: Weights | None = None,
    lenient: bool = False,
) -> dict[str, Any]:
    """``_replay_one`` in a pool worker, with a cache root of its own process, so two
    workers never share one cache."""
    cache = cache / f"worker-{os.getpid()}"
    return _replay_one(task, replay, cache, budgets, ablate, weights, lenient)


def _task_digest(task: BenchTask) -> str:
    return sha256_hex(task.problem_statement.encode("utf-8", "surrogatepass"))


def _score(
    task: BenchTask, inputs: _Inputs, budgets: Sequence[int], ablate: bool, started: float
) -> dict[str, Any]:
    """Rank and pack one task from its inputs, and score both systems."""
    prep = prepare_ranked(
        analyze_task(task.problem_statement), inputs.view, inputs.source,
        root=inputs.root, cache=inputs.cache, report=inputs.report, weights=inputs.weights,
    )  # fmt: skip
    delivered = {b: pack_prepared(prep, task.problem_statement, b) for b in budgets}
    packs = [delivered[b].pack for b in budgets]
    latency = time.perf_counter() - started
    short = [pack_prepared(prep, task.problem_statement, b, fill=False).pack for b in budgets]
    ranked = list(dict.fromkeys(c.path for c in prep.candidates))[:TOP]
    started = time.perf_counter()
    baseline = bm25_ranking(inputs.view, task.problem_statement)
    bm25_latency = time.perf_counter() - started
    gold = set(inputs.gold_present)
    ablations = _ablations(task, inputs.view, gold, inputs.weights) if ablate else {}
    lines = {p: r for p, r in task.gold_changed_lines.items() if p in gold}
    coverage, coverage_short = (
        {
            str(b): line_coverage(lines, [(i.path, i.start_line, i.end_line) for i in pack.items])
            for b, pack in zip(budgets, chosen, strict=True)
        }
        for chosen in (packs, short)
    )
    baseline_packs = {b: bm25_pack(inputs.raw, baseline, b) for b in {*budgets, REACH_BUDGET}}
    baseline_cov = {str(b): line_coverage(lines, _ranges(baseline_packs[b][1])) for b in budgets}
    reach = _reach(task, inputs, prep, delivered, baseline_packs, lines, budgets)
    return {
        "instance_id": task.instance_id,
        "repo": task.repo,
        "files": ranked,
        "candidates": [c.path for c in prep.candidates],  # for a recording's widening
        "gold": sorted(gold),
        "excerpt": {
            **_file_metrics(ranked, gold),
            "line_coverage": coverage,
            "latency_s": latency,
            **primary_metrics(prep, packs, short, budgets, gold),
            "line_coverage_short": coverage_short,
            "reach": reach["excerpt"],
            "default": reach["default"],
            # each budget's pack as the model reads it, so two runs compare byte for byte
            "pack_sha256": {
                str(b): sha256_hex(delivered[b].text.encode("utf-8", "surrogatepass"))
                for b in budgets
            },
        },
        "calibration": calibration_rows(prep, gold),
        "region_calibration": region_calibration_rows(prep, gold, lines),
        "bm25": {
            **_file_metrics(baseline, gold),
            "line_coverage": baseline_cov,
            "latency_s": bm25_latency,
            "reach": reach["bm25"],
        },
        "language": task_language(sorted(gold)),
        "reach_cause": reach["cause"],
        "ablations": ablations,
    }


def _ablations(
    task: BenchTask, view: IndexView, gold: set[str], w: Weights
) -> dict[str, dict[str, float]]:
    """File metrics with each ranking signal left out in turn (same index, same task), beside
    the ranking with every signal measured the same way: the engine's own figures come from the
    pack's candidates, which leave out files it cannot serve (empty, binary, all secret)."""
    analysed = analyze_task(task.problem_statement)
    ranked = [c.path for c in rank_files(analysed, view, weights=w)]
    out = {ALL_SIGNALS: _file_metrics(ranked[:TOP], gold)}
    for signal in SIGNALS:
        without = frozenset({signal})
        ranked = [c.path for c in rank_files(analysed, view, without=without, weights=w)]
        out[f"without {signal}"] = _file_metrics(ranked[:TOP], gold)
    return out


def _ranges(shown: Sequence[Shown]) -> list[tuple[str, int, int]]:
    return [(i.path, i.start_line, i.start_line + i.text.count("\n") - 1) for i in shown]


def _reach(
    task: BenchTask,
    inputs: _Inputs,
    prep: Prepared,
    delivered: dict[int, Delivered],
    baseline_packs: dict[int, tuple[str, list[Shown]]],
    lines: dict[str, list[list[int]]],
    budgets: Sequence[int],
) -> dict[str, Any]:
    """Gold reach of the ``REACH_BUDGET`` pack and of the default one, BM25's beside, and
    the irrelevant shares (``excerpt_bench.reach``)."""
    count = TokenCounter()
    text = task.problem_statement
    if REACH_BUDGET not in delivered:
        delivered = {**delivered, REACH_BUDGET: pack_prepared(prep, text, REACH_BUDGET)}
    default = PackRequest(repo=inputs.root, task=text)
    chosen = delivered[REACH_BUDGET]
    if (default.budget, default.fill) != (REACH_BUDGET, True):
        chosen_default = pack_prepared(prep, text, default.budget, fill=default.fill)
    else:
        chosen_default = chosen
    gold = set(inputs.gold_present)
    served = {i.path for i in chosen.pack.items} & gold
    spans = _gold_spans(inputs.view, served, lines)
    reached = reach_tokens(chosen.text, shown_of(chosen.pack), lines, count)
    first = prep.candidates[0].path if prep.candidates else None
    out: dict[str, Any] = {
        "excerpt": {
            "tokens": reached,
            "pack_tokens": count(chosen.text),
            "all_lines": {
                str(b): bool(lines) and line_coverage(lines, _ranges(shown_of(d.pack))) == 1.0
                for b, d in delivered.items()
            },
            **dict(
                zip(
                    ("outside_gold_files", "outside_gold_functions"),
                    outside_shares(shown_of(chosen.pack), gold, spans),
                    strict=True,
                )
            ),
        },
        "default": {
            "tokens": reach_tokens(
                chosen_default.text, shown_of(chosen_default.pack), lines, count
            ),
            "pack_tokens": count(chosen_default.text),
        },
        "cause": reach_cause(chosen.pack, lines, first, gold, reached),
    }
    rendered, shown = baseline_packs[REACH_BUDGET]
    out["bm25"] = {
        "tokens": reach_tokens(rendered, shown, lines, count),
        "pack_tokens": count(rendered),
        "all_lines": {
            str(b): bool(lines) and line_coverage(lines, _ranges(baseline_packs[b][1])) == 1.0
            for b in budgets
        },
        **dict(
            zip(
                ("outside_gold_files", "outside_gold_functions"),
                outside_shares(shown, gold, spans),
                strict=True,
            )
        ),
    }
    return out


def _gold_spans(
    view: IndexView, served: set[str], lines: dict[str, list[list[int]]]
) -> dict[str, list[tuple[int, int]]]:
    """Per served gold file, the innermost definition holding each changed line (the line
    itself outside any): the gold functions."""
    try:
        symbols = view.symbols_in(sorted(served))
    except ReplayMiss:
        symbols = []
    out: dict[str, list[tuple[int, int]]] = {}
    for path in served:
        mine = [(s.start_line, s.end_line) for s in symbols if s.path == path]
        for start, end in lines.get(path, ()):
            for n in range(start, end + 1):
                holding = [(s, e) for s, e in mine if s <= n <= e]
                out.setdefault(path, []).append(
                    min(holding, key=lambda se: se[1] - se[0]) if holding else (n, n)
                )
    return out


def summarise(rows: Sequence[dict[str, Any]], budgets: Sequence[int]) -> dict[str, Any]:
    """``report.json``: excerpt and BM25 side by side (SPEC §11)."""
    report: dict[str, Any] = {"n": len(rows)}
    for system in ("excerpt", "bm25"):
        runs = [r[system] for r in rows]
        latencies = sorted(r["latency_s"] * 1000 for r in runs)
        p95 = latencies[max(0, math.ceil(0.95 * len(latencies)) - 1)] if latencies else 0.0
        report[system] = {
            **{
                m: round(mean(r[m] for r in runs), 4)
                for m in ("acc@1", "acc@3", "acc@5", "acc@10", "hit@5", "mrr")
            },
            "line_coverage": {
                str(b): round(mean(r["line_coverage"][str(b)] for r in runs), 4) for b in budgets
            },
            "latency_ms": {
                "p50": round(statistics.median(latencies), 1) if latencies else 0.0,
                "p95": round(p95, 1),
            },
        }
    report["excerpt"].update(primary_summary(rows, budgets))
    report["reach"] = reach_summary(rows, budgets)
    if any("replay_unrecorded" in r for r in rows):
        # a lenient replay: files the ranking reached that the recording never held
        missed = [len(r.get("replay_unrecorded", ())) for r in rows]
        report["replay_unrecorded"] = {"files": sum(missed), "tasks": sum(1 for m in missed if m)}
    variants = sorted({v for r in rows for v in r.get("ablations", {})})
    if variants:
        report["ablations"] = {
            v: {
                m: round(mean(r["ablations"][v][m] for r in rows), 4)
                for m in ("acc@1", "acc@5", "mrr")
            }
            for v in variants
        }
    repos = sorted({r["repo"] for r in rows})
    report["per_repo"] = {
        repo: {
            "n": sum(r["repo"] == repo for r in rows),
            "excerpt_acc@5": round(
                mean(r["excerpt"]["acc@5"] for r in rows if r["repo"] == repo), 4
            ),
            "bm25_acc@5": round(mean(r["bm25"]["acc@5"] for r in rows if r["repo"] == repo), 4),
        }
        for repo in repos
    }
    return report


def render_report(report: dict[str, Any], budgets: Sequence[int]) -> str:
    metrics = ["acc@1", "acc@3", "acc@5", "acc@10", "hit@5", "mrr"]
    lines = [
        f"# Localization benchmark ({report['n']} tasks)",
        "",
        "| metric | excerpt | BM25 |",
        "| --- | --- | --- |",
    ]
    for m in metrics:
        lines.append(f"| {m} | {report['excerpt'][m] * 100:.1f} | {report['bm25'][m] * 100:.1f} |")
    for b in budgets:
        lines.append(
            f"| line coverage @ {b} B | {report['excerpt']['line_coverage'][str(b)] * 100:.1f}"
            f" | {report['bm25']['line_coverage'][str(b)] * 100:.1f} |"
        )
    for q in ("p50", "p95"):
        ours, theirs = report["excerpt"]["latency_ms"][q], report["bm25"]["latency_ms"][q]
        lines.append(f"| latency {q} (ms) | {ours} | {theirs} |")
    lines += reach_table(report["reach"])
    lines += primary_table(report["excerpt"], budgets)
    lines += [
        "",
        "| repository | tasks | excerpt Acc@5 | BM25 Acc@5 |",
        "| --- | --- | --- | --- |",
    ]
    for repo, r in report["per_repo"].items():
        lines.append(
            f"| {repo} | {r['n']} | {r['excerpt_acc@5'] * 100:.1f} | {r['bm25_acc@5'] * 100:.1f} |"
        )
    if report.get("ablations"):
        lines += ["", "| ranking | Acc@1 | Acc@5 | MRR |", "| --- | --- | --- | --- |"]
        rows = [("full engine (pack candidates)", report["excerpt"]), *report["ablations"].items()]
        for name, m in rows:
            cells = " | ".join(f"{m[k] * 100:.1f}" for k in ("acc@1", "acc@5", "mrr"))
            lines.append(f"| {name} | {cells} |")
    return "\n".join(lines) + "\n"
