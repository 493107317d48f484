"""Argument helpers shared by the CLI commands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from excerpt.core.capped import read_capped
from excerpt.errors import UsageError

if TYPE_CHECKING:
    from excerpt.core.settings import Settings
    from excerpt.render.progress import ProgressBar

__all__ = [
    "HelpFormatter",
    "add_filters",
    "add_output",
    "add_repo",
    "command",
    "complete_as",
    "effective_settings",
    "filters_of",
    "progress_for",
    "read_task",
]

_MAX_TASK_BYTES = 4 * 1024 * 1024


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Descriptions and examples kept as written; an option's default shown where it has one
    (not for flags, nor where the default is decided later, e.g. by a settings file)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if default is None or default is False or default == [] or "%(default)" in text:
            return text
        return str(super()._get_help_string(action))


# The page of the documentation (docs/, built by mkdocs) that tells each command in full
DOCS_PAGES = {
    "index": "indexing", "plan": "pack", "pack": "pack", "get": "pack", "graph": "pack",
    "export": "pack", "risk": "risk-harness", "harness": "risk-harness", "gate": "gate",
    "handoff": "handoff", "create": "handoff", "show": "handoff", "validate": "handoff",
    "compact": "compact", "expand": "compact", "mcp": "mcp", "setup": "mcp", "hook": "hooks",
    "eval": "evaluation", "bench": "evaluation", "localize": "evaluation",
    "session": "evaluation", "perf": "benchmarks", "soak": "benchmarks", "config": "cli",
    "completion": "cli",
}  # fmt: skip


def command(
    sub: Any,
    name: str,
    *,
    help: str,
    examples: Sequence[tuple[str, str]],
    description: str | None = None,
) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` shows defaults and ``examples`` (``(command, what)``),
    and ends with the page of the documentation that tells it in full."""
    lines = ["examples:"]
    for line, what in examples:
        lines += [f"  # {what}", f"  {line}"]
    lines += ["", f"docs: docs/{DOCS_PAGES[name]}.md (the site: mkdocs build)"]
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=description or help[0].upper() + help[1:] + ".",
        epilog="\n".join(lines),
        formatter_class=HelpFormatter,
    )
    return parser


def complete_as(action: argparse.Action, kind: Literal["file", "directory"]) -> argparse.Action:
    """Mark ``action`` to complete file or directory names (``excerpt completion`` turns the
    mark into shtab's, so ordinary runs never import shtab)."""
    action.excerpt_complete = kind  # type: ignore[attr-defined]
    return action


def add_repo(parser: argparse.ArgumentParser) -> None:
    complete_as(
        parser.add_argument("--repo", default=".", metavar="DIR", help="repository directory"),
        "directory",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def add_output(parser: argparse.ArgumentParser) -> None:
    complete_as(
        parser.add_argument(
            "-o",
            "--output",
            type=Path,
            metavar="FILE",
            help="write the output to FILE instead of stdout, atomically (a temporary file"
            " renamed over it); - is stdout. excerpt writes nothing inside a repository by"
            " itself: a FILE you name is written wherever it is",
        ),
        "file",
    )


def add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--include",
        action="append",
        metavar="GLOB",
        help="consider only paths matching GLOB (gitignore-style, relative to the repository"
        " root); repeatable; replaces the include setting for this run",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="leave out paths matching GLOB (omitted as excluded); repeatable; replaces the"
        " exclude setting for this run (.excerptignore still applies)",
    )


# The library loads inside the helpers, not with the parser: building the parser for one
# command must not load what the others need.


def _globs(flag: str, patterns: Sequence[str] | None) -> Sequence[str] | None:
    from excerpt.core.globs import glob_problem

    for pattern in patterns or ():
        problem = glob_problem(pattern)
        if problem:
            raise UsageError(f"{flag}: {problem}")
    return patterns


def filters_of(args: argparse.Namespace) -> AbstractContextManager[None]:
    """A block in which discovery uses this run's ``--include``/``--exclude``.

    Raises:
        UsageError: a glob is empty, a comment or malformed.
    """
    from excerpt.discover.filters import overriding_filters

    return overriding_filters(
        include=_globs("--include", getattr(args, "include", None)),
        exclude=_globs("--exclude", getattr(args, "exclude", None)),
    )


def effective_settings(args: argparse.Namespace) -> Settings:
    """The repository's settings with this run's flags over them.

    Raises:
        NotADirectoryFault: ``--repo`` is not a readable directory.
        UsageError: a settings file or a flag's glob is invalid.
    """
    from excerpt.discover.config import read_settings
    from excerpt.discover.walk import resolve_root

    return read_settings(resolve_root(args.repo)).layered(
        "cli",
        budget=getattr(args, "budget", None),
        include=_globs("--include", getattr(args, "include", None)),
        exclude=_globs("--exclude", getattr(args, "exclude", None)),
    )


def read_task(args: argparse.Namespace) -> str:
    """The task from the argument, ``--task-file F``, or stdin when the argument is ``-``.

    Raises:
        UsageError: no task, two tasks, or an unreadable task file.
    """
    if args.task_file is not None and args.task is not None:
        raise UsageError("give the task as an argument or with --task-file, not both")
    if args.task_file is not None:
        # a task file named "-" is that file, not stdin
        name = "./-" if str(args.task_file) == "-" else str(args.task_file)
        reading = f"task file {args.task_file}"
    elif args.task == "-":
        name, reading = "-", "the task from stdin"
    elif args.task is not None:
        return str(args.task)
    else:
        raise UsageError("a task is required (argument, --task-file F, or - for stdin)")
    data = read_capped(name, _MAX_TASK_BYTES, reading=reading, what="task")
    return data.decode("utf-8", "replace")


def progress_for(args: argparse.Namespace) -> ProgressBar | None:
    from excerpt.render.progress import ProgressBar

    machine = getattr(args, "json", False) or getattr(args, "format", "md") == "json"
    return ProgressBar(sys.stderr, "indexing") if sys.stderr.isatty() and not machine else None


def git_dirs(specs: list[str]) -> dict[str, Path]:
    """``--git-dir OWNER/NAME=GITDIR`` flags as a map of repositories to git directories.

    Raises:
        UsageError: a flag without ``=``, a name without ``/``, or no such directory.
    """
    out = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or "/" not in name or not Path(path).is_dir():
            raise UsageError(
                f"--git-dir wants OWNER/NAME=GITDIR with an existing directory: {spec}"
            )
        out[name] = Path(path).resolve()
    return out
