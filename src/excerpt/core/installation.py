"""This installation of excerpt: the command line that starts it again, by absolute path,
for what a client is told to run (the MCP server, the hooks) and what a model is told to
type (``excerpt expand``)."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["excerpt_command"]


def excerpt_command() -> tuple[str, ...]:
    """The ``excerpt`` script beside this interpreter, or the interpreter running the
    module when there is none (a checkout run with ``python -m excerpt``)."""
    script = Path(sys.executable).parent / "excerpt"
    return (str(script),) if script.is_file() else (sys.executable, "-m", "excerpt")
