"""Command-line adapter: parse → one library call → render → exit code.

``main`` is the only place an error becomes ``Error: …`` on stderr (or, under ``--json``, a
JSON error line) and an exit code; ``excerpt.cli.errors_out`` says how.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import importlib.util
import io
import logging
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from excerpt import __version__
from excerpt.cli.common import HelpFormatter, command
from excerpt.cli.errors_out import ArgumentsRejected, failure_of, report, wants_json
from excerpt.errors import ExcerptError, UsageError

__all__ = ["main"]

log = logging.getLogger("excerpt")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ArgumentsRejected(message, self.format_usage())


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="excerpt",
        description="The exact lines an agent should read first.\n"
        "`excerpt COMMAND --help` shows each command's options, defaults and examples.",
        epilog="examples:\n"
        "  # a context pack for a task, on the repository in the current directory\n"
        '  excerpt pack "fix the refund webhook retry"\n'
        "  # the settings in use and where each came from\n"
        "  excerpt config",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"excerpt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    # the command modules (and the library they call) load with the parser, not with the
    # package: ``excerpt --version`` needs none of them
    from excerpt.cli import (
        compact_cmd,
        completion_cmd,
        config_cmd,
        eval_cmd,
        gate_cmd,
        get_cmd,
        graph_cmd,
        handoff_cmd,
        harness_cmd,
        hook_cmd,
        index_cmd,
        mcp_cmd,
        pack_cmd,
        risk_cmd,
        setup_cmd,
    )

    index_cmd.register(sub)
    pack_cmd.register(sub)
    get_cmd.register(sub)
    graph_cmd.register(sub)
    risk_cmd.register(sub)
    harness_cmd.register(sub)
    gate_cmd.register(sub)
    handoff_cmd.register(sub)
    compact_cmd.register(sub)
    mcp_cmd.register(sub)
    setup_cmd.register(sub)
    hook_cmd.register(sub)
    eval_cmd.register(sub)
    _mount_bench(sub)
    config_cmd.register(sub)
    completion_cmd.register(sub)
    parser.set_defaults(make_parser=build_parser)  # (completion: the whole parser)
    return parser


BENCH_PACKAGE = "excerpt_bench"  # the benchmarks' distribution, excerpt-bench


def _mount_bench(sub: Any) -> None:
    """``excerpt bench``: the commands of the benchmarks' own distribution when it is
    installed; when it is not, a command that says which package to install."""
    if importlib.util.find_spec(BENCH_PACKAGE) is not None:
        importlib.import_module(f"{BENCH_PACKAGE}.cli").register(sub)
        return
    p = command(sub, "bench", help="benchmarks (the excerpt-bench package)", examples=[])
    p.add_argument("words", nargs=argparse.REMAINDER, action=_Words, help=argparse.SUPPRESS)
    p.set_defaults(handler=_bench_missing)


class _Words(argparse.Action):
    """The words of a command that is not installed, kept; ``--json`` among them still asks
    for the error as JSON."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.json = wants_json(values)


def _bench_missing(args: argparse.Namespace) -> int:
    raise UsageError(
        "excerpt bench is in the excerpt-bench package, which is not installed: "
        "pip install -e bench (from a clone of excerpt's repository, beside excerpt)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code.

    Errors are one line on stderr; under ``--json``/``--format json`` also a JSON line on
    stdout (SPEC §11). An ``OSError`` no library call turned into a fault is an environment
    error (exit 3); anything else unexpected is an internal error (exit 70), never a traceback.
    """
    for name in ("stdout", "stderr"):  # started with the descriptor closed: Python gives None
        if getattr(sys, name) is None:
            setattr(sys, name, _Closed(name))
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="excerpt: %(message)s")
    words = list(sys.argv[1:] if argv is None else argv)
    if words == ["--version"]:  # answered before the commands and the library are loaded
        sys.stdout.write(f"excerpt {__version__}\n")
        return 0
    machine = wants_json(words)  # argparse may reject the words before there are args
    parser = build_parser()
    try:
        args = parser.parse_args(words)
        machine = bool(getattr(args, "json", False)) or getattr(args, "format", None) == "json"
        return int(args.handler(args))
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 2
    except BrokenPipeError:
        return 1
    except (ExcerptError, OSError, KeyboardInterrupt) as exc:
        return report(failure_of(exc), machine=machine, stdout=sys.stdout, stderr=sys.stderr)
    except Exception as exc:  # the one top-level net: never a traceback
        log.debug("internal error", exc_info=True)
        return report(failure_of(exc), machine=machine, stdout=sys.stdout, stderr=sys.stderr)


class _Closed(io.TextIOBase):
    """A standard stream the process was started without: writing to it is an environment
    error (exit 3) naming the stream, where Python's ``None`` would be a crash."""

    def __init__(self, name: str) -> None:
        self.stream = name

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, f"standard {self.stream[3:]}put is closed")

    def isatty(self) -> bool:
        return False
