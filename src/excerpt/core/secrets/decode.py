"""Bytes to text for scanning: a file in any common encoding is scanned, never skipped.

A byte-order mark decides (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE); else strict UTF-8; else
UTF-32 or UTF-16 without a mark when the NUL bytes fall in the pattern ASCII text makes in
them; else latin-1, which decodes any bytes (an ASCII secret keeps its characters).
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


def _wide_without_bom(head: bytes) -> str | None:
    """UTF-32 or UTF-16 (LE or BE) when NULs fill all but one byte position of each code
    unit and that position is never NUL (mostly-ASCII text in a wide encoding), else None."""
    for width, little, big in ((4, "utf-32-le", "utf-32-be"), (2, "utf-16-le", "utf-16-be")):
        usable = len(head) - len(head) % width
        if usable < 2 * width:
            continue
        columns = [head[i:usable:width] for i in range(width)]
        units = len(columns[0])
        nul = [column.count(0) for column in columns]
        for text_at, codec in ((0, little), (width - 1, big)):
            rest = [nul[i] for i in range(width) if i != text_at]
            floor = 0.95 if width == 4 else 0.4  # UTF-32: three NULs in each ASCII unit
            if nul[text_at] <= 0.05 * units and min(rest) >= floor * units:
                return codec
    return None


def decode_for_scan(data: bytes) -> str | None:
    """The text of ``data`` for the secret scan, or None for binary data."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(codec, "replace")
    head = data[:_SNIFF]
    if b"\0" in head:
        wide = _wide_without_bom(head)
        return None if wide is None else data.decode(wide, "replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")
