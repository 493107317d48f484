"""``excerpt hook EVENT``: the command a client's hook runs (its options and help; the
command itself starts in ``excerpt.launch`` without loading the CLI)."""

from __future__ import annotations

import argparse
from typing import Any

from excerpt.cli.common import command, complete_as

__all__ = ["register"]


def register(sub: Any) -> None:
    from excerpt.hooks.options import DEFAULT_MIN_BYTES, DEFAULT_TIMEOUT_S, EVENTS

    p = command(
        sub,
        "hook",
        help="answer a Claude Code or Codex hook (installed by excerpt setup)",
        description="Read a client's hook JSON on stdin and answer in its format. "
        "UserPromptSubmit: a context seed for a prompt that reads as a task on the served "
        "repository (a few exact regions, or a map of where to read when the ranking is "
        "unsure), within --seed-tokens o200k tokens and --timeout seconds; never for a "
        "follow-up, never the same regions twice in a session. PostToolUse (Claude Code): "
        "an output of at least --min-bytes bytes replaced by its reversible compacted view "
        "when that saves 10%%. SessionStart after a compaction or resume: the session's "
        "seeded handles still fresh. Whatever fails, it exits 0 with nothing on stdout "
        "(the prompt and the output go on untouched) and logs one line to hooks.log under "
        "the cache.",
        examples=[
            (
                'echo \'{"prompt": "fix the refund retry", "cwd": ".", "session_id": '
                '"s1"}\' | excerpt hook UserPromptSubmit',
                "the seed a prompt would get",
            ),
            (
                "excerpt hook UserPromptSubmit --repo ~/src/shop --seed-tokens 800 < event.json",
                "a smaller seed, only for prompts in ~/src/shop",
            ),
        ],
    )
    p.add_argument("event", choices=EVENTS, help="the client's hook event")
    p.add_argument(
        "--client",
        choices=("claude", "codex"),
        default="claude",
        help="whose answer format (default claude)",
    )
    for flag, what in (
        ("--repo", "serve only this repository (default: the session's git work tree)"),
        ("--cache-dir", "the cache directory (as EXCERPT_CACHE_DIR)"),
    ):
        complete_as(p.add_argument(flag, default=None, metavar="DIR", help=what), "directory")
    p.add_argument(
        "--seed-tokens", type=int, default=2000, metavar="N",
        help="a seed's cap in o200k tokens (default 2000)",
    )  # fmt: skip
    p.add_argument(
        "--seed-shape", choices=("auto", "pack", "map"), default="auto",
        help="source regions (pack), a map of where to read (map), or chosen by the ranking's"
        " confidence (auto, the default)",
    )  # fmt: skip
    p.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
        help=f"seconds before a note replaces the seed (default {DEFAULT_TIMEOUT_S})",
    )  # fmt: skip
    p.add_argument(
        "--min-bytes", type=int, default=DEFAULT_MIN_BYTES, metavar="N",
        help=f"smallest output compacted (default {DEFAULT_MIN_BYTES:,})",
    )  # fmt: skip
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.hooks.main import main

    argv = [args.event, "--client", args.client, "--seed-tokens", str(args.seed_tokens),
            "--seed-shape", args.seed_shape, "--timeout", str(args.timeout),
            "--min-bytes", str(args.min_bytes)]  # fmt: skip
    if args.repo is not None:
        argv += ["--repo", args.repo]
    if args.cache_dir is not None:
        argv += ["--cache-dir", args.cache_dir]
    return main(argv)
