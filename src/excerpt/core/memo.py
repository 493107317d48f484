"""Memos: what a long-lived process (the MCP server) remembers between calls, in one shape.

A ``Memo`` is a map of at most ``max_entries`` entries, the least recently used dropped
first, safe to use from several threads (the server answers calls on worker threads), that
counts its hits, misses and evictions. A module keeps one as a global, ``register``ed by name
so that ``memo_stats`` (and the ``index_status`` tool) can report every memo of the process.

A memo only ever saves work: what it answers is what computing again would give, so a
value dropped (by the bound, or by ``clear``) is computed again, never missed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["Memo", "MemoStats", "memo_stats", "register"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
M = TypeVar("M", bound="Memo[Any, Any]")


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoStats:
    """A memo's figures: how full it is, and how often it answered since the process began."""

    name: str
    entries: int
    max_entries: int
    hits: int
    misses: int
    evictions: int

    def to_dict(self) -> dict[str, int]:
        """The figures (the name is the key they are reported under)."""
        return {
            "entries": self.entries,
            "max_entries": self.max_entries,
            "hits": self.hits,
            "misses": self.misses,
            "evictions": self.evictions,
        }


class Memo(Generic[K, V]):
    """At most ``max_entries`` values by key, the least recently used out first; every
    method holds the memo's lock, none while a value is computed. Values are never None
    (``get`` answers None for a key it does not hold)."""

    def __init__(self, name: str, *, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError("a memo holds at least one entry")
        self.name = name
        self.max_entries = max_entries
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = self._evictions = 0

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None; counted as a
        hit or a miss."""
        with self._lock:
            value = self._entries.get(key)
            if value is None:
                self._misses += 1
                return None
            self._hits += 1
            self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key`` as the most recently used, dropping the least recently
        used entries past the bound."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
                self._evictions += 1

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for ``key``, else ``make()``'s, kept. ``make`` runs outside the
        lock: two threads missing the same key at once both make it (the same value)."""
        found = self.get(key)
        if found is not None:
            return found
        made = make()
        self.put(key, made)
        return made

    def newest(self) -> V | None:
        """The most recently used value (None when empty), neither counted nor moved."""
        with self._lock:
            if not self._entries:
                return None
            return next(reversed(self._entries.values()))

    def clear(self) -> None:
        """Forget every entry (the figures are kept: they count the process's calls)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def stats(self) -> MemoStats:
        with self._lock:
            return MemoStats(
                name=self.name, entries=len(self._entries), max_entries=self.max_entries,
                hits=self._hits, misses=self._misses, evictions=self._evictions,
            )  # fmt: skip


_registry: dict[str, Memo[Any, Any]] = {}
_registry_lock = threading.Lock()


def register(memo: M) -> M:
    """Report ``memo`` in ``memo_stats``; returns it (``_x = register(Memo(...))``).

    Raises:
        ValueError: another memo is registered under its name.
    """
    with _registry_lock:
        if memo.name in _registry:
            raise ValueError(f"a memo named {memo.name!r} is registered already")
        _registry[memo.name] = memo
    return memo


def memo_stats() -> tuple[MemoStats, ...]:
    """The figures of every registered memo, by name."""
    with _registry_lock:
        memos = sorted(_registry.items())
    return tuple(memo.stats() for _, memo in memos)
