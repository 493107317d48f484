"""A one-line progress display on a terminal's stderr (never on pipes, never with --json).

It names the phase it is in (discover, parse, graph, rank, …) with counts, draws at once when
a phase begins and then at most ten times a second, and clears its line when closed.
"""

from __future__ import annotations

import time
from typing import TextIO

__all__ = ["ProgressBar"]


class ProgressBar:
    """Callable ``(done, total, phase)``: a bar when the total is known, a count otherwise
    (``total`` 0). ``label`` is the phase of a caller that names none."""

    def __init__(self, stream: TextIO, label: str, width: int = 30) -> None:
        self.stream = stream
        self.label = label
        self.width = width
        self._last = 0.0
        self._phase = ""
        self._drawn = False

    def __call__(self, done: int, total: int, phase: str | None = None) -> None:
        phase = phase or self.label
        now = time.monotonic()
        fresh = phase != self._phase
        if not fresh and done < total and now - self._last < 0.1:
            return
        self._last, self._phase = now, phase
        if total > 0:
            filled = self.width * min(done, total) // total
            bar = "#" * filled + "." * (self.width - filled)
            line = f"{phase} [{bar}] {done:,}/{total:,}"
        else:
            line = f"{phase} {done:,}" if done else f"{phase} …"
        self.stream.write(f"\r\x1b[2K{line}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
