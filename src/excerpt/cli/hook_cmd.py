"""``excerpt hook EVENT``: the command a client's hook runs (its options and help; the
command itself starts in ``excerpt.launch`` without loading the CLI)."""

from __future__ import annotations

import argparse
from typing import Any

from excerpt.cli.common import command, complete_as

__all__ = ["register"]


def register(sub: Any) -> None:
    from excerpt.hooks.options import EVENTS, add_options

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
        "when that saves 10 percent. SessionStart after a compaction or resume: the session's "
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
    actions = add_options(p)
    for flag in ("--repo", "--cache-dir"):
        complete_as(actions[flag], "directory")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.hooks.main import main
    from excerpt.hooks.options import add_options

    argv = [args.event]
    for flag in add_options(argparse.ArgumentParser()):  # every option of the hook
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None:
            argv += [flag, str(value)]
    return main(argv)
