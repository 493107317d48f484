"""Exact o200k_base token counts, offline (``bpe-openai`` ships the vocabulary).

What a model is charged for a text is its token count; every model-facing rendering
reports it beside its byte size.

The count of a text is the sum of the counts of its pieces: o200k splits text with a fixed
pattern and encodes each piece on its own, so the same split (``regex``, the pattern
tiktoken publishes) and a count per piece give the exact total. Loading the vocabulary takes
about a second, so counts are remembered: piece counts in the process and, given a file,
in a SQLite store there, which also receives the vocabulary's merge ranks the first time the
vocabulary is loaded for it. From then on a piece never seen before is counted from the
store by the same byte-pair merge tiktoken runs (leftmost lowest rank first), and the
vocabulary is not loaded again.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import warnings
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any

import regex

__all__ = ["TokenCounter", "o200k_count"]

# o200k_base's pre-tokenizer, as tiktoken defines it (tiktoken_ext/openai_public.py)
_PIECES = regex.compile(
    "|".join(
        [
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            r"\p{N}{1,3}",
            r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
            r"\s*[\r\n]+",
            r"\s+(?!\S)",
            r"\s+",
        ]
    )
)
_SURROGATE = re.compile("[\ud800-\udfff]")
_MEMO_LIMIT = 1_000_000  # pieces remembered in the process before the memo starts over
_memo: dict[str, int] = {}
# Whole texts counted lately: a pack's excerpts and its rendering are counted again as the
# figures settle and across budgets (bounded, oldest first out).
_TEXTS_KEPT = 1024
_texts: OrderedDict[str, int] = OrderedDict()


@functools.cache
def _ranks() -> dict[bytes, int]:
    """o200k's merge ranks, from the vocabulary ``bpe-openai`` ships."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from bpe_openai import registry

        ranks: dict[bytes, int] = registry.o200k_base()["mergeable_ranks"]
        return ranks


def _merge_count(piece: bytes, rank: Any) -> int:
    """Tokens of one piece by byte-pair merging: the adjacent pair whose joined bytes have
    the lowest rank merges first, the leftmost on a tie, until no joined pair is a token
    (tiktoken's ``_byte_pair_merge``). ``rank(bytes)`` is the rank, or None."""
    if len(piece) < 2 or rank(piece) is not None:
        return 1 if piece else 0
    bounds = list(range(len(piece) + 1))
    while len(bounds) > 2:
        best, at = None, -1
        for i in range(len(bounds) - 2):
            r = rank(piece[bounds[i] : bounds[i + 2]])
            if r is not None and (best is None or r < best):
                best, at = r, i
        if best is None:
            break
        del bounds[at + 1]
    return len(bounds) - 1


@functools.cache
def _encoding() -> Any:
    with warnings.catch_warnings():  # it loads its vocabulary with a deprecated resources API
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return bpe_openai.get_encoding("o200k_base")


def _count_piece(piece: str) -> int:
    return len(_encoding().encode(piece, disallowed_special=()))


class TokenCounter:
    """Exact o200k counts, remembering piece counts in ``store`` (a SQLite file) when given.

    A store that cannot be opened or written is left alone: the count is the same without it.
    """

    def __init__(self, store: Path | None = None) -> None:
        self.store = store

    def __call__(self, text: str) -> int:
        if text in _texts:
            _texts.move_to_end(text)
            return _texts[text]
        count = self._count(text)
        _texts[text] = count
        if len(_texts) > _TEXTS_KEPT:
            _texts.popitem(last=False)
        return count

    def _count(self, text: str) -> int:
        # a lone surrogate (an undecodable byte of a file name) is counted as the ``\\uXXXX``
        # escape every rendering writes in its place
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        pieces = Counter(_PIECES.findall(text))
        unknown = [p for p in pieces if p not in _memo]
        if unknown and self.store is not None:
            unknown = self._recall(unknown)
        if unknown:
            loaded = _encoding.cache_info().currsize > 0
            found = None if loaded else self._merged(unknown)
            if found is None:  # the vocabulary itself; a store is seeded the first time it
                found = {p: _count_piece(p) for p in unknown}  # is loaded in a process
                if not loaded:
                    self._seed()
            self._remember(found)
        return sum(_memo[p] * n for p, n in pieces.items())

    def _merged(self, unknown: list[str]) -> dict[str, int] | None:
        """Counts from the store's merge ranks, or None when it holds none."""
        if self.store is None:
            return None
        try:
            conn = self._connect()
            try:
                if not conn.execute("SELECT 1 FROM meta WHERE key = 'ranks'").fetchone():
                    return None
                seen: dict[bytes, int | None] = {}

                def rank(part: bytes) -> int | None:
                    if part not in seen:
                        row = conn.execute(
                            "SELECT rank FROM ranks WHERE token = ?", (part,)
                        ).fetchone()
                        seen[part] = None if row is None else int(row[0])
                    return seen[part]

                return {p: _merge_count(p.encode("utf-8"), rank) for p in unknown}
            finally:
                conn.close()
        except (sqlite3.Error, OSError):
            self.store = None
            return None

    def _seed(self) -> None:
        """Once per store: the vocabulary's merge ranks, and each entry that is text as a
        piece of one token (a piece that is a vocabulary entry encodes as that one token)."""
        if self.store is None:
            return
        try:
            conn = self._connect()
            try:
                if conn.execute("SELECT 1 FROM meta WHERE key = 'ranks'").fetchone():
                    return
                ranks = _ranks()
                words = []
                for raw in ranks:
                    try:
                        words.append((raw.decode("utf-8"), 1))
                    except UnicodeDecodeError:
                        continue  # part of a character: never a whole piece
                with conn:
                    conn.execute("BEGIN")
                    conn.executemany(
                        "INSERT OR IGNORE INTO ranks(token, rank) VALUES(?, ?)", ranks.items()
                    )
                    conn.executemany("INSERT OR IGNORE INTO pieces(piece, n) VALUES(?, ?)", words)
                    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('ranks', '1')")
            finally:
                conn.close()
        except (sqlite3.Error, OSError):
            self.store = None

    def _connect(self) -> sqlite3.Connection:
        assert self.store is not None
        conn = sqlite3.connect(self.store, timeout=1.0, isolation_level=None)
        conn.executescript(
            "CREATE TABLE IF NOT EXISTS pieces (piece TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;"
            "CREATE TABLE IF NOT EXISTS ranks (token BLOB PRIMARY KEY, rank INTEGER) WITHOUT ROWID;"
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);"
        )
        return conn

    def _recall(self, unknown: list[str]) -> list[str]:
        """The pieces the store does not know; those it knows join the memo."""
        try:
            conn = self._connect()
            try:
                for i in range(0, len(unknown), 500):
                    chunk = unknown[i : i + 500]
                    marks = ",".join("?" * len(chunk))
                    query = f"SELECT piece, n FROM pieces WHERE piece IN ({marks})"
                    _memo.update(conn.execute(query, chunk).fetchall())
            finally:
                conn.close()
        except (sqlite3.Error, OSError):
            self.store = None  # unusable: count without it from now on
        return [p for p in unknown if p not in _memo]

    def _remember(self, found: dict[str, int]) -> None:
        if len(_memo) + len(found) > _MEMO_LIMIT:
            _memo.clear()
        _memo.update(found)
        if self.store is None:
            return
        try:
            conn = self._connect()
            try:
                with conn:
                    conn.execute("BEGIN")
                    conn.executemany(
                        "INSERT OR IGNORE INTO pieces(piece, n) VALUES(?, ?)", found.items()
                    )
            finally:
                conn.close()
        except (sqlite3.Error, OSError):
            self.store = None


def o200k_count(text: str) -> int:
    """The exact number of o200k_base tokens of ``text`` (special tokens counted as text)."""
    return TokenCounter()(text)
