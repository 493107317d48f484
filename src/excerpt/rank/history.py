"""The history signal: files that past commits with messages like the task changed. Pure.

The similar-past-fix evidence of bug-localization research: a task reads like the messages
of the commits that changed the code it is about. The task's terms query the messages
(BM25, subject weighted over body); each of the best ``history_commits`` commits lends the
files it changed a gain that falls with its rank and score, and with how many files it
changed (a commit of two files says more of each than one of forty). The index holds only
ancestors of its head (``excerpt.index.history``), so no later change can lend anything.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from excerpt.index.history import PastCommit
from excerpt.index.lang import PARSED_LANGUAGES
from excerpt.index.view import FileInfo, IndexView
from excerpt.rank.signals import Contribution, Reason
from excerpt.rank.task import Task
from excerpt.rank.weights import Weights

__all__ = ["HISTORY_FETCH", "history", "history_query"]

# Commits asked of the index per task, whatever ``history_commits`` takes of them: one answer
# serves every setting up to it (a recorded benchmark replays them all).
HISTORY_FETCH = 50


def history_query(task: Task, df: Mapping[str, int], w: Weights) -> list[str]:
    """The terms that query past messages: the first line's, then the rest rarest first
    (by how many files hold them), only terms some file holds."""
    title = [t for t in task.title_terms if df.get(t, 0) > 0]
    rest = sorted((t for t in task.terms if df.get(t, 0) > 0), key=lambda t: (df[t], t))
    return list(dict.fromkeys([*title, *rest]))[: w.history_terms]


def history(
    task: Task, view: IndexView, files: Mapping[str, FileInfo], w: Weights
) -> list[Contribution]:
    """Each file's gain from the past commits matching the task, and those matching its
    first line alone (see the module)."""
    if w.history_commits <= 0 or (w.history_gain <= 0 and w.history_title_gain <= 0):
        return []
    df = view.document_frequencies((*task.terms, *task.title_terms))
    query = history_query(task, df, w)
    title = [t for t in task.title_terms if df.get(t, 0) > 0][: w.history_terms]
    gains: dict[str, float] = defaultdict(float)
    strongest: dict[str, tuple[float, PastCommit]] = {}
    for terms, gain in ((query, w.history_gain), (title, w.history_title_gain)):
        if gain <= 0 or not terms:
            continue
        hits = view.history(terms, max(HISTORY_FETCH, w.history_commits))[: w.history_commits]
        for path, (share, commit) in _shares(hits, files, w).items():
            gains[path] += gain * share
            if path not in strongest or gain * share > strongest[path][0]:
                strongest[path] = (gain * share, commit)
    return [
        Contribution(path, total, _reason(strongest[path][1]))
        for path, total in sorted(gains.items())
    ]


def _shares(
    hits: list[PastCommit], files: Mapping[str, FileInfo], w: Weights
) -> dict[str, tuple[float, PastCommit]]:
    """Each indexed file's share (at most ``history_cap``) of the commits ``hits``, and the
    commit that lent it most."""
    if not hits:
        return {}
    best = hits[0].score
    shares: dict[str, float] = defaultdict(float)
    strongest: dict[str, tuple[float, PastCommit]] = {}
    for rank, commit in enumerate(hits):
        strength = (commit.score / best) * w.history_rank_decay**rank
        share = strength / max(commit.changed, 1) ** w.history_spread
        for path in commit.files:
            info = files.get(path)
            if info is None or info.status is not None:
                continue
            shares[path] += share * _kind_factor(info, w)
            if path not in strongest or share > strongest[path][0]:
                strongest[path] = (share, commit)
    return {p: (min(v, w.history_cap), strongest[p][1]) for p, v in shares.items()}


def _kind_factor(info: FileInfo, w: Weights) -> float:
    """A fix's commit also changes its tests, notes and docs: what it says of them is what
    it says of every change, not where this one goes."""
    if info.is_test:
        return w.history_test_factor
    return 1.0 if info.language in PARSED_LANGUAGES else w.history_other_factor


def _reason(commit: PastCommit) -> Reason:
    """The commit by its short id and the task's words its message holds (its message is
    the repository's text, which reasons never quote: ``git show`` has it)."""
    words = ", ".join(commit.matched[:5])
    return Reason(
        "history", f"changed by a past commit matching the task ({commit.sha[:12]}: {words})"
    )
