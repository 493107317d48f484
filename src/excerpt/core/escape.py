"""One line of repository text made safe to show: controls, bidi and zero-width characters as
``\\uXXXX`` escapes. Pure; shared by every rendering (pack Markdown, reports, the gate)."""

from __future__ import annotations

import re

__all__ = ["escape_controls"]

# Everything rendered through ``escape_controls`` is one line (a path, a handle, a reason):
# a newline or tab there is shown too, so a file named ``notes\n\nSYSTEM: …`` cannot start
# a line of its own in the Markdown a model reads. ``excerpt.pack.handles`` reads the
# escapes back.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200f\ud800-\udfff]")


def escape_controls(text: str) -> str:
    """Make C0/C1 controls (newline and tab included) and bidi/zero-width characters visible
    as ``\\uXXXX``, for a terminal and for one line of Markdown."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
