"""``excerpt gate --staged``: is the staged change (or a commit range) safe to propose?
(SPEC §8). Exit 0 on PASS or WARN, 1 on FAIL."""

from __future__ import annotations

import argparse
from typing import Any

from excerpt.cli.common import add_output, add_repo, command, progress_for
from excerpt.cli.output import emit
from excerpt.errors import UsageError

__all__ = ["register"]


def _share(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a share: {text!r} (0..1, or a percentage)") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def register(sub: Any) -> None:
    p = command(
        sub,
        "gate",
        help="check the staged change (or a commit range) before review: exit 1 on FAIL",
        description="Check the staged change against the base commit: Secret safety, Schema\n"
        "controls, Version and changelog, Validation policy, Ownership, Convergence. Each\n"
        "check is PASS, WARN or FAIL; any FAIL exits 1. The change is read from git's\n"
        "index, never the work tree; the policy ([gate] in excerpt.toml, or\n"
        "[tool.excerpt.gate] in pyproject.toml) from the base commit, never from the\n"
        "change. --explain prints the policy and where it came from.",
        examples=[
            ("excerpt gate --staged", "the staged change against HEAD"),
            (
                "excerpt gate --range origin/main...HEAD --json",
                "a branch's commits from where it left main, as CI would check them, as JSON",
            ),
        ],
    )
    add_repo(p)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--staged", action="store_true", help="the staged change (the default)")
    what.add_argument("--range", metavar="A..B", help="a commit range (A...B: from the merge base)")
    p.add_argument("--base", metavar="REF", help="with --staged: the base commit (default HEAD)")
    p.add_argument(
        "--min-convergence", type=_share, metavar="X",
        help="share of changed source files with a test (0..1; default from the policy, 0.5)",
    )  # fmt: skip
    p.add_argument(
        "--validate", action="append", default=[], metavar="CMD",
        help="a validation command this change asks to be checked with; it must be in the "
        "base commit's policy (repeatable; excerpt never runs it)",
    )  # fmt: skip
    p.add_argument("--explain", action="store_true", help="print the effective policy and exit")
    add_output(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.gate import GateRequest, explain_policy, render_text, run_gate
    from excerpt.render.text import to_json

    if args.range is not None and args.base is not None:
        raise UsageError("give --base or --range, not both (a range names its own base)")
    request = GateRequest(
        repo=args.repo, base=args.base, range=args.range,
        min_convergence=args.min_convergence, validate=tuple(args.validate),
    )  # fmt: skip
    if args.explain:
        policy = explain_policy(request).to_dict()
        emit(args, to_json(policy) if args.json else _explained(policy))
        return 0
    bar = progress_for(args)
    try:
        report = run_gate(request, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    emit(args, report.to_json() if args.json else render_text(report))
    return 1 if report.status == "FAIL" else 0


def _explained(policy: dict[str, Any]) -> str:
    lines = [f"gate policy: {policy['described']}", ""]
    for key, value in policy.items():
        if key in ("source", "described"):
            continue
        if isinstance(value, dict):
            for sub, item in value.items():
                lines.append(f"{key}.{sub} = {item!r}")
        else:
            lines.append(f"{key} = {value!r}")
    return "\n".join(lines) + "\n"
