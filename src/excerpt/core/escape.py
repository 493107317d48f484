"""Repository text made safe to show: one line of it with controls, bidi and zero-width
characters as ``\\uXXXX`` escapes (every rendering: pack Markdown, reports, the gate), and
whole text for a terminal, lines kept. Pure."""

from __future__ import annotations

import re

__all__ = ["escape_controls", "for_terminal"]

# Everything rendered through ``escape_controls`` is one line (a path, a handle, a reason):
# a newline or tab there is shown too, so a file named ``notes\n\nSYSTEM: …`` cannot start
# a line of its own in the Markdown a model reads. ``excerpt.pack.handles`` reads the
# escapes back.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200f\ud800-\udfff]")


def escape_controls(text: str) -> str:
    """Make C0/C1 controls (newline and tab included) and bidi/zero-width characters visible
    as ``\\uXXXX``, for a terminal and for one line of Markdown."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# What a terminal would act on rather than show: C0 controls but tab and newline (ESC starts
# OSC title and clipboard writes, screen clears, cursor moves), DEL, C1 controls, and the
# bidirectional overrides and isolates that reorder what is shown (Trojan Source)
_TERMINAL_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def for_terminal(text: str) -> str:
    """``text`` with every character a terminal would act on shown as an escape (``\\x1b``,
    ``\\u202e``): repository text printed to a terminal cannot retitle it, write the
    clipboard, clear the screen or reorder what the reader sees."""
    return _TERMINAL_UNSAFE.sub(lambda m: _escape(m.group()), text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
