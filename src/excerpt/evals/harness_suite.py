"""The harness suite (SPEC §10 ``--harness``): inferred commands against the expected ones, and
the shipped executable fixtures actually run.

Each case's fixture is materialised in a temporary directory and read by harness inference.
For ``execute`` cases the *expected* commands of the shipped corpus (never an inferred command,
never another repository's) run in a fresh copy of it; see ``harness_exec`` for the allowlist
and the environment. A missing toolchain skips the case with its reason instead of failing it.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

from excerpt.errors import UsageError
from excerpt.evals.corpus import (
    HarnessCase,
    HarnessCorpus,
    HarnessExpected,
    load_corpus,
    materialise,
)
from excerpt.evals.harness_exec import (
    RUN_ERRORS,
    TIMEOUT_S,
    CommandRun,
    allowlisted,
    command_env,
    hardened,
    make_venv,
    missing_tools,
    run_argv,
)
from excerpt.evals.suites import SuiteResult
from excerpt.harness import Command, Harness, infer_harness

__all__ = ["Infer", "execute_case", "run_harness"]

Infer = Callable[[Path], Harness]


def _identity(c: Command | HarnessExpected) -> tuple[str, str, str, str]:
    return (c.command, c.group, c.kind, c.directory)


def _key(c: Command | HarnessExpected) -> str:
    return f"{c.directory}: {c.command} ({c.group}/{c.kind})"


def _matches(e: HarnessExpected, c: Command) -> bool:
    cited = {ev.rsplit(":", 1)[0] for ev in c.evidence}
    return _identity(c) == _identity(e) and set(e.evidence) <= cited


def _score_inference(case: HarnessCase, harness: Harness) -> dict[str, Any]:
    inferred = harness.commands
    missing = [e for e in case.expected if not any(_matches(e, c) for c in inferred)]
    present = [u for u in case.unexpected if any(_identity(u) == _identity(c) for c in inferred)]
    expected = {_identity(e) for e in case.expected}
    doc: dict[str, Any] = {
        "expected": len(case.expected),
        "found": len(case.expected) - len(missing),
        "missing": [_key(e) for e in missing],
        "unexpected_present": [_key(u) for u in present],
        "extra": [_key(c) for c in inferred if _identity(c) not in expected],
    }
    # the command was inferred but without the expected evidence: say what it cited
    cited = {
        _key(e): list(c.evidence) for e in missing for c in inferred if _identity(c) == _identity(e)
    }
    if cited:
        doc["evidence_cited_instead"] = cited
    return doc


def _shipped(name: str) -> bool:
    return resources.files("excerpt.evals").joinpath("data", "fixtures", f"{name}.json").is_file()


def _plan(case: HarnessCase) -> list[tuple[HarnessExpected, tuple[str, ...] | None]]:
    ordered = [e for e in case.expected if e.group == "setup"]
    ordered += [e for e in case.expected if e.group == "validate"]
    return [(e, allowlisted(e.command)) for e in ordered]


def _workdir(root: Path, directory: str) -> Path | None:
    rel = PurePosixPath(directory)
    if rel.is_absolute() or ".." in rel.parts:
        return None
    return root.joinpath(*rel.parts)


def execute_case(case: HarnessCase, source: Path, scratch: Path) -> dict[str, Any]:
    """Run the case's expected setup then validate commands in a copy of ``source`` made under
    ``scratch``; ``source`` itself is never written. Stops at the first failure.

    Returns ``{"runs": [...], "refused": [...], "skipped": reason}`` (the last only when a
    toolchain is missing, in which case nothing runs).
    """
    plan = _plan(case)
    refused = [e.command for e, argv in plan if argv is None]
    if refused:  # one refusal and nothing of the case runs
        return {"runs": [], "refused": refused}
    steps = [(e, argv) for e, argv in plan if argv is not None]
    argvs = [argv for _, argv in steps]
    missing = missing_tools(argvs)
    if missing:
        return {"runs": [], "refused": [], "skipped": "; ".join(missing)}
    try:
        venv_bin = make_venv(scratch) if any(a[0] == "python" for a in argvs) else None
    except RUN_ERRORS as exc:
        return {"runs": [], "refused": [], "skipped": f"python: no venv ({exc})"}
    work = scratch / "run"
    shutil.copytree(source, work, symlinks=True)
    env = command_env(scratch, venv_bin)
    runs: list[CommandRun] = []
    for expected, argv in steps:
        runs.append(_run_one(expected, argv, work, env))
        if not runs[-1].ok:
            break
    return {"runs": [r.to_dict() for r in runs], "refused": []}


def _run_one(
    expected: HarnessExpected, argv: tuple[str, ...], work: Path, env: dict[str, str]
) -> CommandRun:
    final, notes = hardened(argv)
    cwd = _workdir(work, expected.directory)
    if cwd is None or not cwd.is_dir():
        reason = f"directory {expected.directory!r} is not inside the fixture"
        return CommandRun(command=expected.command, directory=expected.directory, reason=reason)
    code, seconds, reason, tail = run_argv(final, cwd=cwd, env=env, timeout=TIMEOUT_S)
    return CommandRun(
        command=expected.command, directory=expected.directory, argv=final, exit_code=code,
        seconds=seconds, reason=reason, notes=notes, tail=tail,
    )  # fmt: skip


def _run_case(case: HarnessCase, infer: Infer) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="excerpt-harness-") as tmp:
        source = materialise(case.repo_fixtures, Path(tmp) / "source")
        doc: dict[str, Any] = {"id": case.id, **_score_inference(case, infer(source))}
        if case.execute:
            start = time.monotonic()
            doc.update(execute_case(case, source, Path(tmp) / "scratch"))
            doc["seconds"] = round(time.monotonic() - start, 2)
    executed_ok = not doc.get("refused") and all(r["exit_code"] == 0 for r in doc.get("runs", []))
    doc["status"] = (
        "skipped" if "skipped" in doc
        else "refused" if doc.get("refused")
        else "executed" if case.execute
        else "inferred"
    )  # fmt: skip
    doc["pass"] = doc["found"] == doc["expected"] and not doc["unexpected_present"] and executed_ok
    return doc


def run_harness(corpus: HarnessCorpus | None = None, infer: Infer | None = None) -> SuiteResult:
    """The harness corpus: expected commands found, and the executable fixtures run.

    Only corpus cases are taken (there is no repository argument), and every fixture must be
    one shipped with excerpt.

    Raises:
        UsageError: the corpus is malformed or names a fixture excerpt does not ship.
    """
    corpus = corpus or load_corpus("harness.json", HarnessCorpus)
    for case in corpus.cases:
        unknown = [name for name in case.repo_fixtures if not _shipped(name)]
        if unknown:
            raise UsageError(f"harness case {case.id}: fixture {unknown[0]} is not shipped")
    details = [_run_case(case, infer or infer_harness) for case in corpus.cases]
    return SuiteResult(
        name="harness", cases=len(details), passed=sum(d["pass"] for d in details),
        metrics=_metrics(details), thresholds=dict(corpus.thresholds), details=details,
        tables=_tables(details),
    )  # fmt: skip


def _metrics(details: Sequence[dict[str, Any]]) -> dict[str, float]:
    expected = sum(d["expected"] for d in details)
    runs = [r for d in details for r in d.get("runs", [])]
    refused = sum(len(d.get("refused", [])) for d in details)
    attempted = len(runs) + refused  # a refused expected command counts as a failed one
    succeeded = sum(r["exit_code"] == 0 for r in runs)
    return {
        "commands_found": sum(d["found"] for d in details) / expected if expected else 1.0,
        "cases_passed": float(sum(d["pass"] for d in details)),
        "executed_pass_rate": succeeded / attempted if attempted else 1.0,
        "executed": float(len(runs)),
        "refused": float(refused),
        "skipped": float(sum(d["status"] == "skipped" for d in details)),
    }


def _tables(details: Sequence[dict[str, Any]]) -> dict[str, Any]:
    skipped = {d["id"]: d["skipped"] for d in details if d["status"] == "skipped"}
    seconds = {d["id"]: d["seconds"] for d in details if "seconds" in d}
    return {k: v for k, v in (("skipped", skipped), ("seconds", seconds)) if v}
