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


# Unicode's format characters (category Cf, as of Unicode 15.1): invisible, they hide text
# (zero-width spaces and joiners, U+2060 word joiner, U+FEFF, tag characters) or reorder it
# (the bidi marks, embeddings, overrides and isolates); a test checks that every character
# the running Python calls Cf is here
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)
# What a terminal would act on rather than show: C0 controls but tab and newline (ESC starts
# OSC title and clipboard writes, screen clears, cursor moves), DEL, C1 controls, and every
# format character (the bidi controls that reorder what is shown, Trojan Source, and the
# invisible ones that hide text from the reader)
_TERMINAL_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_FORMAT}]")


def for_terminal(text: str) -> str:
    """``text`` with every character a terminal would act on shown as an escape (``\\x1b``,
    ``\\u202e``): repository text printed to a terminal cannot retitle it, write the
    clipboard, clear the screen or reorder what the reader sees."""
    return _TERMINAL_UNSAFE.sub(lambda m: _escape(m.group()), text)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
