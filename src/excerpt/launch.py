"""The ``excerpt`` command's entry point.

``excerpt hook EVENT`` runs after every tool call of a client with hooks installed, so it
starts with the standard library alone (``excerpt.hooks.main``) and loads the library only
when there is work; every other command, and ``excerpt hook --help``, goes to the CLI.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> int:
    words = sys.argv[1:]
    if words[:1] == ["hook"] and not {"-h", "--help"} & set(words):
        from excerpt.hooks.main import main as hook

        return hook(words[1:])
    from excerpt.cli import main as cli

    return cli(words)
