"""Command-line adapter: parse → one library call → render → exit code.

The only place an ``ExcerptError`` becomes ``Error: …`` on stderr and an exit code.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from excerpt import __version__
from excerpt.cli import (
    bench_cmd,
    eval_cmd,
    get_cmd,
    graph_cmd,
    harness_cmd,
    index_cmd,
    mcp_cmd,
    pack_cmd,
    risk_cmd,
)
from excerpt.errors import ExcerptError

__all__ = ["main"]

log = logging.getLogger("excerpt")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"Error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="excerpt", description="The exact lines an agent should read first.")
    parser.add_argument("--version", action="version", version=f"excerpt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    index_cmd.register(sub)
    pack_cmd.register(sub)
    get_cmd.register(sub)
    graph_cmd.register(sub)
    risk_cmd.register(sub)
    harness_cmd.register(sub)
    mcp_cmd.register(sub)
    eval_cmd.register(sub)
    bench_cmd.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="excerpt: %(message)s")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.handler(args))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    except ExcerptError as exc:
        sys.stderr.write(f"Error: {exc.message}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("Error: interrupted\n")
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # the one top-level net: never a traceback
        log.debug("internal error", exc_info=True)
        sys.stderr.write(f"Error: internal error: {type(exc).__name__}: {exc}\n")
        return 70
