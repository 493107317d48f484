"""Bytes to text for scanning: a file in any common encoding is scanned, never skipped.

A byte-order mark decides (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE); else strict UTF-8; else
UTF-16 without a mark when the NUL bytes fall on every other position (ASCII text in
UTF-16); else latin-1, which decodes any bytes (an ASCII secret keeps its characters).
Bytes with a NUL in their first 8 KiB that are none of these are binary.
"""

from __future__ import annotations

import codecs

__all__ = ["decode_for_scan"]

_SNIFF = 8192
_BOMS = (  # UTF-32 first: its LE mark begins with UTF-16 LE's
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _utf16_without_bom(head: bytes) -> str | None:
    """``utf-16-le``/``-be`` when NULs sit on one parity of positions only and make up
    most of it (mostly-ASCII UTF-16 text), else None."""
    even = head[0::2]
    odd = head[1::2]
    if len(odd) < 2:
        return None
    even_nul, odd_nul = even.count(0), odd.count(0)
    if odd_nul >= 0.4 * len(odd) and even_nul <= 0.05 * len(even):
        return "utf-16-le"
    if even_nul >= 0.4 * len(even) and odd_nul <= 0.05 * len(odd):
        return "utf-16-be"
    return None


def decode_for_scan(data: bytes) -> str | None:
    """The text of ``data`` for the secret scan, or None for binary data."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(codec, "replace")
    head = data[:_SNIFF]
    if b"\0" in head:
        wide = _utf16_without_bom(head)
        return None if wide is None else data.decode(wide, "replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")
