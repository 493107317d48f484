"""``excerpt config``: the effective settings of a repository and where each came from.

``--json`` prints ``excerpt.config/v1`` (part of the machine contract)::

    {"schema": "excerpt.config/v1",
     "settings": {"budget":  {"value": 32000, "source": "default"},
                  "exclude": {"value": ["vendor/**"], "source": "excerpt.toml"},
                  "include": {"value": [], "source": "default"}},
     "files": ["excerpt.toml", "pyproject.toml"],
     "excerptignore": ["build/", "*.log"]}

``source`` is one of ``cli``, ``excerpt.toml``, ``pyproject.toml``, ``default``; ``files``
lists the settings files that hold settings, highest precedence first; ``excerptignore`` is
the patterns of ``.excerptignore`` (blank and comment lines dropped), or null without one.
"""

from __future__ import annotations

import argparse
from typing import Any

from excerpt.cli.common import add_filters, add_output, add_repo, command, effective_settings
from excerpt.cli.output import emit
from excerpt.core.limits import DEFAULT_BUDGET

__all__ = ["register"]

SCHEMA = "excerpt.config/v1"


def register(sub: Any) -> None:
    p = command(
        sub,
        "config",
        help="the effective settings and where each came from",
        description="Print the settings excerpt uses on a repository (budget, include, exclude)"
        " and where each came from. Precedence: a command-line flag > excerpt.toml >"
        " [tool.excerpt] in pyproject.toml > the built-in default. .excerptignore (gitignore"
        " syntax) always applies besides.",
        examples=[
            ("excerpt config", "the settings of the current directory and their sources"),
            (
                "excerpt config --repo ~/src/shop --exclude 'docs/**' --json",
                "what a run with that flag would use, as JSON",
            ),
        ],
    )
    add_repo(p)
    p.add_argument(
        "--budget",
        type=int,
        metavar="BYTES",
        help=f"as for pack and plan: shows its effect (built-in default: {DEFAULT_BUDGET})",
    )
    add_filters(p)
    add_output(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from excerpt.discover.config import read_excerptignore
    from excerpt.discover.walk import resolve_root
    from excerpt.render.text import to_json

    settings = effective_settings(args)
    ignore = read_excerptignore(resolve_root(args.repo))
    doc = {
        "schema": SCHEMA,
        "settings": settings.to_dict(),
        "files": list(settings.files),
        "excerptignore": None if ignore is None else _patterns(ignore),
    }
    emit(args, to_json(doc) if args.json else _text(doc))
    return 0


def _patterns(lines: tuple[str, ...]) -> list[str]:
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _text(doc: dict[str, Any]) -> str:
    from excerpt.discover.config import EXCERPTIGNORE

    empty = {"include": "(every path)", "exclude": "(none)"}
    lines = ["| setting | value | from |", "| --- | --- | --- |"]
    for key, entry in doc["settings"].items():
        value = entry["value"]
        shown = ", ".join(value) or empty[key] if isinstance(value, list) else str(value)
        lines.append(f"| {key} | {shown} | {entry['source']} |")
    ignore = doc["excerptignore"]
    lines.append("")
    if ignore is None:
        lines.append(f"{EXCERPTIGNORE}: none")
    else:
        lines.append(f"{EXCERPTIGNORE}: {len(ignore)} pattern(s): {', '.join(ignore) or '-'}")
    files = ", ".join(doc["files"]) or "none (built-in defaults)"
    lines.append(f"Settings files: {files}")
    lines.append("Precedence: flag > excerpt.toml > [tool.excerpt] in pyproject.toml > default.")
    return "\n".join(lines) + "\n"
