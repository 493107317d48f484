"""Memos: bounded, thread-safe, counted, and every process-wide one reported by name."""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable

import pytest

# the modules that keep a process-wide memo (imported: each registers its own)
import excerpt.compact.store
import excerpt.core.tokens
import excerpt.index.view
import excerpt.pack.prepare
import excerpt.rank.score  # noqa: F401
from excerpt.core.memo import Memo, MemoStats, memo_stats, register

THREADS = 16


def _figures(memo: Memo[str, int]) -> tuple[int, int, int, int]:
    s = memo.stats()
    return s.entries, s.hits, s.misses, s.evictions


def _together(work: Callable[[int], None]) -> None:
    """Run ``work(n)`` on ``THREADS`` threads started at once."""
    start = threading.Barrier(THREADS)

    def run(n: int) -> None:
        start.wait()
        work(n)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(THREADS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often: an unguarded update would be lost
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)


def test_the_least_recently_used_entry_is_evicted_past_the_bound() -> None:
    memo: Memo[str, int] = Memo("t", max_entries=3)
    for n, key in enumerate("abc"):
        memo.put(key, n)
    assert memo.get("a") == 0  # now the most recently used: "b" is the oldest
    memo.put("d", 3)
    assert [memo.get(k) for k in "abcd"] == [0, None, 2, 3]
    assert _figures(memo) == (3, 4, 1, 1)


def test_putting_a_kept_key_again_replaces_it_without_an_eviction() -> None:
    memo: Memo[str, int] = Memo("t", max_entries=2)
    memo.put("a", 1)
    memo.put("b", 2)
    memo.put("a", 10)  # "a" is now the newest: "b" goes first
    memo.put("c", 3)
    assert (memo.get("a"), memo.get("b"), memo.newest()) == (10, None, 10)
    assert memo.stats().evictions == 1


def test_counters_count_every_hit_miss_and_eviction() -> None:
    memo: Memo[str, int] = Memo("t", max_entries=2)
    made: list[str] = []

    def make(key: str) -> int:
        made.append(key)
        return len(key)

    for key in ["x", "x", "yy", "x", "zzz", "yy", "yy"]:
        assert memo.get_or_make(key, functools.partial(make, key)) == len(key)
    # x miss, x hit, yy miss, x hit, zzz miss (yy out), yy miss (x out), yy hit
    assert made == ["x", "yy", "zzz", "yy"]
    assert memo.stats() == MemoStats(
        name="t", entries=2, max_entries=2, hits=3, misses=4, evictions=2
    )


def test_a_value_of_zero_or_empty_is_a_hit_not_a_miss() -> None:
    memo: Memo[str, object] = Memo("t", max_entries=4)
    memo.put("zero", 0)
    memo.put("empty", ())
    assert memo.get("zero") == 0 and memo.get("empty") == ()
    assert (memo.stats().hits, memo.stats().misses) == (2, 0)


def test_clear_forgets_the_entries_and_keeps_the_figures() -> None:
    memo: Memo[str, int] = Memo("t", max_entries=2)
    memo.put("a", 1)
    memo.get("a")
    memo.clear()
    assert (len(memo), memo.get("a"), memo.newest()) == (0, None, None)
    assert _figures(memo) == (0, 1, 1, 0)


def test_a_memo_holds_at_least_one_entry() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Memo("t", max_entries=0)


def test_many_threads_putting_lose_and_duplicate_no_entry() -> None:
    per_thread = 2000
    memo: Memo[str, int] = Memo("t", max_entries=THREADS * per_thread)

    def work(n: int) -> None:
        for i in range(per_thread):
            memo.put(f"{n}-{i}", i)
            assert memo.get(f"{n}-{i}") == i

    _together(work)
    assert _figures(memo) == (THREADS * per_thread, THREADS * per_thread, 0, 0)
    assert all(memo.get(f"{n}-{i}") == i for n in range(THREADS) for i in range(per_thread))


def test_many_threads_over_a_small_bound_keep_it_and_count_every_call() -> None:
    per_thread, bound = 2000, 50
    memo: Memo[str, int] = Memo("t", max_entries=bound)

    def work(n: int) -> None:
        for i in range(per_thread):
            key = str((n * 7 + i) % 120)  # threads share keys, and more of them than fit
            assert memo.get_or_make(key, functools.partial(int, key)) == int(key)

    _together(work)
    s = memo.stats()
    assert s.entries == bound
    assert s.hits + s.misses == THREADS * per_thread
    # every miss put its entry (two threads missing one key at once put it twice, the
    # second replacing the first): all but the last 50 new ones went out
    assert 0 < s.evictions <= s.misses - bound


def test_a_name_is_registered_once_and_reported_in_order() -> None:
    names = [s.name for s in memo_stats()]
    assert names == sorted(names)
    taken = names[0]
    with pytest.raises(ValueError, match="registered already"):
        register(Memo(taken, max_entries=1))


@pytest.mark.parametrize(
    ("name", "bound"),
    [
        pytest.param("compact_store_sizes", 256, id="compact-store"),
        pytest.param("file_tables", 4, id="index-view"),
        pytest.param("indexed_files", 1, id="rank-score"),
        pytest.param("secret_lines", 8192, id="pack-prepare"),
        pytest.param("token_counts", 1024, id="core-tokens"),
    ],
)
def test_every_process_wide_cache_is_a_registered_memo_with_its_bound(
    name: str, bound: int
) -> None:
    stats = {s.name: s for s in memo_stats()}
    assert stats[name].max_entries == bound
