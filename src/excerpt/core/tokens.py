"""Exact o200k_base token counts, offline (``bpe-openai`` ships the vocabulary).

What a model is charged for a text is its token count; every model-facing rendering
reports it beside its byte size.
"""

from __future__ import annotations

import functools
import re
import warnings
from typing import Any

__all__ = ["o200k_count"]

_CHUNK_CHARS = 100_000
_BOUNDARY = re.compile(r"\n(?=[^\s/])")  # a punctuation run takes "\n" and "/" with it
_WORD_GAP = re.compile(r"(?<=\S)(?= \S)")  # a single space before a word: " word" stays whole
_SURROGATE = re.compile("[\ud800-\udfff]")


@functools.cache
def _encoding() -> Any:
    with warnings.catch_warnings():  # it loads its vocabulary with a deprecated resources API
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        encoding = bpe_openai.get_encoding("o200k_base")
        encoding.encode("warm", disallowed_special=())
    return encoding


def o200k_count(text: str) -> int:
    """The exact number of o200k_base tokens of ``text`` (special tokens counted as text).

    A lone surrogate (an undecodable byte of a file name) cannot be encoded as UTF-8; it is
    counted as the ``\\uXXXX`` escape every rendering writes in its place.
    """
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    encoding = _encoding()
    return sum(len(encoding.encode(c, disallowed_special=())) for c in _chunks(text))


def _chunks(text: str) -> list[str]:
    """Pieces of at most about ``_CHUNK_CHARS``, cut only after a newline that precedes a
    character other than a space or ``/``: o200k's pre-tokenizer never joins across such a
    point (a punctuation run swallows the newlines and slashes after it: ``.\\n//``), so the
    sum of the pieces' counts is the count of the whole (the encoder caps one call's input)."""
    out: list[str] = []
    start = 0
    while len(text) - start > _CHUNK_CHARS:
        cut = None
        for match in _BOUNDARY.finditer(text, start + _CHUNK_CHARS // 2, start + _CHUNK_CHARS):
            cut = match.end()
        if cut is None:  # no line boundary (a minified line): cut before a word instead
            gaps = list(_WORD_GAP.finditer(text, start + _CHUNK_CHARS // 2, start + _CHUNK_CHARS))
            cut = gaps[-1].start() if gaps else start + _CHUNK_CHARS
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out
