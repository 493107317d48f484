"""Argument helpers shared by the CLI commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from excerpt.errors import UsageError
from excerpt.render.progress import ProgressBar

__all__ = ["add_repo", "progress_for", "read_task"]

_MAX_TASK_BYTES = 4 * 1024 * 1024


def add_repo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", default=".", help="repository directory (default: .)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def read_task(args: argparse.Namespace) -> str:
    """The task from the argument, ``--task-file F``, or stdin when the argument is ``-``.

    Raises:
        UsageError: no task, two tasks, or an unreadable task file.
    """
    if args.task_file is not None and args.task is not None:
        raise UsageError("give the task as an argument or with --task-file, not both")
    if args.task_file is not None:
        try:
            data = Path(args.task_file).read_bytes()[: _MAX_TASK_BYTES + 1]
        except OSError as exc:
            raise UsageError(f"cannot read task file: {exc.strerror}") from None
    elif args.task == "-":
        data = sys.stdin.buffer.read(_MAX_TASK_BYTES + 1)
    elif args.task is not None:
        return str(args.task)
    else:
        raise UsageError("a task is required (argument, --task-file F, or - for stdin)")
    if len(data) > _MAX_TASK_BYTES:
        raise UsageError("the task is larger than 4 MiB")
    return data.decode("utf-8", "replace")


def progress_for(args: argparse.Namespace) -> ProgressBar | None:
    machine = getattr(args, "json", False) or getattr(args, "format", "md") == "json"
    return ProgressBar(sys.stderr, "indexing") if sys.stderr.isatty() and not machine else None
