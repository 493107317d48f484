"""``excerpt compact`` and ``excerpt expand``: reversible compaction of tool output."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from excerpt.cli.common import command, complete_as

__all__ = ["register"]

MAX_PAYLOAD = 64 * 1024 * 1024


def register(sub: Any) -> None:
    p = command(
        sub,
        "compact",
        help="compact a JSON, log or diff payload; the original is kept for expand",
        examples=[
            ("excerpt compact --kind log build.log", "a build log, errors and warnings kept"),
            ("git log -p -n 50 | excerpt compact --json", "the view, its id and the savings"),
        ],
        description="Compact a payload: similar JSON items, repeated or uneventful log lines"
        " and unchanged diff context are replaced by markers, each naming the `excerpt expand`"
        " call that brings them back. Errors, warnings, stack traces, failing tests, headers"
        " and changed lines always stay. Under 10% saved, the payload comes back unchanged."
        " The original is stored (durably) in the cache directory under the id printed on"
        " stderr.",
    )
    p.add_argument("--kind", choices=["auto", "json", "log", "diff"], default="auto",
                   help="what the payload is (auto: detected)")  # fmt: skip
    complete_as(
        p.add_argument(
            "file",
            nargs="?",
            default="-",
            metavar="FILE",
            help="the payload; - (the default) reads stdin",
        ),
        "file",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run_compact)

    e = command(
        sub,
        "expand",
        help="the original of a compaction, whole or the part asked for, byte for byte",
        examples=[
            ("excerpt expand 3f2a9c0d11b7e845 --lines 120-180", "lines 120 to 180 of it"),
            ("excerpt expand 3f2a9c0d11b7e845 --path '$[12:40]'", "items 12 to 39 of a list"),
        ],
        description="Write the stored original of a compaction to stdout, byte for byte, or"
        " only the part selected. An original removed to keep the store under its cap is"
        " reported as evicted (exit 1), a damaged one as corrupt (exit 3): never other bytes.",
    )
    e.add_argument("id", metavar="ID", help="the id compact printed (16 hex digits)")
    pick = e.add_mutually_exclusive_group()
    pick.add_argument("--lines", metavar="A-B", help="lines A to B (1-based, inclusive)")
    pick.add_argument("--grep", metavar="RE", help="the lines matching a Python regex")
    pick.add_argument(
        "--path",
        metavar="PATH",
        help='a JSON path, or a file of a diff: on JSON $, .key, ["key"], [N], [A:B] (members'
        " A to B-1); on a diff a file's path, giving every section of that file in order",
    )
    e.add_argument("--json", action="store_true", help="machine-readable output")
    e.set_defaults(handler=run_expand)


def _store() -> Any:
    from excerpt.compact import Store
    from excerpt.core.settings import cache_root

    return Store.in_cache(cache_root())


def _read(name: str) -> bytes:
    from excerpt.core.capped import read_capped

    return read_capped(name, MAX_PAYLOAD, reading=name, what="payload")


def run_compact(args: argparse.Namespace) -> int:
    from excerpt.compact import compact
    from excerpt.render.text import to_json

    done = compact(_read(args.file), store=_store(), kind=args.kind)
    if args.json:
        sys.stdout.write(to_json(done.to_dict()))
        return 0
    _write_bytes(done.text.encode("utf-8", "surrogateescape"))
    sys.stderr.write(done.summary() + "\n")
    return 0


def run_expand(args: argparse.Namespace) -> int:
    from excerpt.compact import expand
    from excerpt.render.text import to_json

    got = expand(args.id, store=_store(), lines=args.lines, grep=args.grep, path=args.path)
    if args.json:
        sys.stdout.write(to_json(got.to_dict()))
    else:
        _write_bytes(got.data)
    return 0


def _write_bytes(data: bytes) -> None:
    """Exact bytes to stdout (a terminal gets its control characters escaped)."""
    from excerpt.core.escape import for_terminal

    sys.stdout.flush()
    if sys.stdout.isatty():
        sys.stdout.write(for_terminal(data.decode("utf-8", "replace")))
        return
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
