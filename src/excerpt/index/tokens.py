"""Identifier-aware terms for lexical ranking: split, lower-cased, accent- and plural-folded.

``getUserName``, ``get_user_name`` and ``GetUserNames`` all yield ``get``, ``user``, ``name``
plus the joined form ``getusername``. The same ``terms`` function serves documents and
queries, so both sides fold identically. Pure.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

__all__ = [
    "MAX_TERM_CHARS",
    "TF_CAP",
    "fold",
    "lexicon_text",
    "split_identifier",
    "term_counts",
    "terms",
]

MAX_TERM_CHARS = 32
TF_CAP = 8
_WORD = re.compile(r"\w+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])")


@lru_cache(maxsize=1 << 16)
def fold(piece: str) -> str:
    """Lower-case, strip accents, and fold a regular English plural to its singular."""
    word = piece.lower()
    if not word.isascii():
        decomposed = unicodedata.normalize("NFKD", word)
        word = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=1 << 17)
def split_identifier(word: str) -> tuple[str, ...]:
    """Folded terms of one identifier: its pieces, plus the joined form when it has several."""
    if word.isalpha() and (word.islower() or word.istitle()):  # a plain word: one piece
        return (fold(word),) if 1 < len(word) <= MAX_TERM_CHARS else ()
    pieces = [p for part in word.split("_") for p in _CAMEL.split(part) if p]
    folded = [fold(p) for p in pieces if len(p) > 1 or p.isdigit()]
    folded = [p for p in folded if len(p) <= MAX_TERM_CHARS and not (p.isdigit() and len(p) > 6)]
    if len(pieces) > 1:
        joined = "".join(fold(p) for p in pieces)
        if len(joined) <= MAX_TERM_CHARS:
            folded.append(joined)
    return tuple(folded)


def terms(text: str) -> list[str]:
    """Every term of ``text`` in order, repeats kept."""
    return [t for word in _WORD.findall(text) for t in split_identifier(word)]


def term_counts(text: str) -> Counter[str]:
    """Term frequencies of ``text`` (counts identifiers first: far fewer distinct than total)."""
    counts: Counter[str] = Counter()
    for word, n in Counter(_WORD.findall(text)).items():
        for term in split_identifier(word):
            counts[term] += n
    return counts


_JOINED: dict[str, str] = {}  # identifier -> its terms, space-terminated (bounded below)
_JOINED_LIMIT = 1 << 18


def _joined_terms(words: Iterable[str]) -> list[str]:
    cache = _JOINED
    out = list(map(cache.get, words))
    if None in out:
        if len(cache) > _JOINED_LIMIT:
            cache.clear()
        for i, (word, hit) in enumerate(zip(words, out, strict=True)):
            if hit is None:
                out[i] = cache[word] = "".join(f"{t} " for t in split_identifier(word))
    return out  # type: ignore[return-value]  # no None is left


def lexicon_text(text: str) -> str:
    """The terms of ``text`` as one space-separated string for the full-text index.

    Each identifier's terms appear as often as the identifier does, grouped by identifier in
    order of first occurrence (positions are not meaningful; frequencies are).
    """
    counts = Counter(_WORD.findall(text))
    # map() keeps the per-identifier loop in C: this runs over every file's every identifier.
    # Frequencies are capped: BM25's term-frequency curve is nearly flat past a few
    # occurrences, and repeating "self" 400 times would only cost index time and space.
    capped = [n if n < TF_CAP else TF_CAP for n in counts.values()]
    return "".join(map(operator.mul, _joined_terms(counts.keys()), capped))
