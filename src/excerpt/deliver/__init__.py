"""The packing API: packs and plans whose whole rendering fits the budget, the one way the
CLI, the MCP tools, the hooks and the benchmarks reach them.

In: a ``PackRequest`` (its ``budget`` bounds the rendered text, headers, handles, reasons
and the left-out summary included), a ranking prepared for one, or retrieved excerpts. Out:
the Markdown a client forwards, and the record it renders with its true size
(``rendered_bytes``) and exact o200k token count. The excerpts are selected with a smaller
text budget until the rendering fits; the figures the text states about itself are settled
until they are true. Writes only the handles of a final pack to the cache.

The calls, and who makes them:

- ``build_pack(request)`` → ``Delivered``: prepare, fit, remember the handles. ``excerpt
  pack``, the MCP tool ``context_pack``, the evaluation suites, ``bench perf`` and ``bench
  session``, and the library (``excerpt.build_pack``).
- ``build_plan(request)`` → ``DeliveredPlan``: the plan, and its Markdown within
  ``PLAN_SHARE`` of the budget. ``excerpt plan``, ``context_plan``, ``excerpt.build_plan``.
- ``prepare(request)`` → ``Prepared``: the ranked files, read (``excerpt.pipeline`` runs
  the steps), for a caller that fits one ranking more than once: the hooks' seed.
- ``pack_prepared(prep, task, budget)`` → ``Delivered``: one prepared ranking fitted to a
  budget, no handle remembered. The seed (fitted again until it fits its token cap) and
  ``bench localize`` (several budgets of one ranking, prepared from a recording).
- ``remember_pack(prep, pack)``: the handles of a ``pack_prepared`` pack that is served
  (the seed's).
- ``plan_prepared(prep)`` → ``Plan``: a prepared ranking's regions, no text (the seed's map).
- ``render_retrieved(results, budget)``: retrieved excerpts as Markdown
  (``context_retrieve``, ``bench session``).

Selection itself (``excerpt.pack.build``) is reached only from here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from excerpt.core.limits import MIN_BUDGET
from excerpt.core.tokens import TokenCounter
from excerpt.errors import UsageError
from excerpt.index.build import ProgressFn
from excerpt.pack.build import plan_of, remember, select
from excerpt.pack.handles import Handle
from excerpt.pack.model import Pack, Plan
from excerpt.pack.prepare import PackRequest, Prepared
from excerpt.pipeline import prepare
from excerpt.render.packs import (
    Figures,
    render_pack_md,
    render_plan_md,
    render_retrieved_md,
)

__all__ = [
    "MIN_BUDGET",
    "PLAN_SHARE",
    "Delivered",
    "DeliveredPlan",
    "build_pack",
    "build_plan",
    "pack_prepared",
    "plan_prepared",
    "prepare",
    "remember_pack",
    "render_retrieved",
]

PLAN_SHARE = 0.25  # a plan's text takes at most this share of the budget: it is the cheap call
_FIT_ROUNDS = 12
_BISECT_ROUNDS = 12
_WELL_USED = 0.9  # a rendering that fills this share of the room needs no bisection
_CLOSE_BYTES = 32  # text budgets this close select the same excerpts, near enough
_SETTLE_ROUNDS = 8
_NEAR = 0.02  # a rendering within 2% of the limit is full enough
# From this room on, excerpts make room for the legend and the next regions;
# below it those give way first (a 2,000-byte pack is better spent on source).
_FULL_FROM = 3000


@dataclass(frozen=True, slots=True)
class Delivered:
    """A pack and its Markdown, the text a client forwards to the model."""

    pack: Pack
    text: str


@dataclass(frozen=True, slots=True)
class DeliveredPlan:
    plan: Plan
    text: str


def build_pack(
    request: PackRequest,
    progress: ProgressFn | None = None,
    *,
    retrieve: str = "`excerpt get HANDLE`",
    notes: Sequence[str] = (),
    limit: int | None = None,
) -> Delivered:
    """A context pack whose whole Markdown rendering is at most ``request.budget`` bytes
    (or ``limit``, when a client's own framing needs room), and that rendering.

    Raises:
        UsageError: bad budget (below ``MIN_BUDGET``), empty task, bad changed path or graph.
        EnvironmentFault: the repository or cache cannot be used.
    """
    _check_budget(request.budget)
    prep = prepare(request, progress)
    notes = [*_task_notes(prep), *notes]
    delivered = pack_prepared(
        prep, request.task, request.budget, retrieve=retrieve, notes=notes, limit=limit,
        fill=request.fill, held=request.held_handles(),
    )  # fmt: skip
    remember_pack(prep, delivered.pack)
    return delivered


def pack_prepared(
    prep: Prepared,
    task: str,
    budget: int,
    *,
    retrieve: str = "`excerpt get HANDLE`",
    notes: Sequence[str] = (),
    limit: int | None = None,
    fill: bool = True,
    held: Sequence[Handle] = (),
) -> Delivered:
    """The pack of a prepared ranking whose whole rendering is at most ``budget`` bytes (or
    ``limit``), and that rendering: the most excerpt text that fits (without ``fill``, none
    of the files whose confidence says they are noise). ``task`` is the task's text as asked
    (the pack states its digest). No handle is remembered: ``remember_pack`` the pack that
    is served.

    Raises:
        UsageError: not even an empty pack's rendering fits.
    """
    room = budget if limit is None else min(limit, budget)

    def draft(pack: Pack, figures: Figures, trim: bool = True) -> str:
        return render_pack_md(
            pack.body(), figures, limit=room, retrieve=retrieve, notes=notes, trim=trim
        )

    # Fitting measures the full rendering (guide, legend, next regions): excerpts make room
    # for them. Figures as wide as the room are never narrower than the settled ones.
    widest = Figures(room, room)
    best: Pack | None = None
    best_size = 0

    def measure(text_budget: int) -> tuple[Pack, int]:
        pack = select(prep, task, text_budget, budget, fill=fill, held=held)
        return pack, len(draft(pack, widest, trim=room < _FULL_FROM).encode("utf-8"))

    # First, guesses from each overshoot or slack (few rounds; most packs end here). The
    # text budget that fits lies in [lo, hi).
    lo, hi, text_budget, tried = 0, room + 1, room, set()
    for _ in range(_FIT_ROUNDS):
        if text_budget in tried:
            break
        tried.add(text_budget)
        pack, size = measure(text_budget)
        if size > room:
            hi = min(hi, text_budget)
            text_budget = max(0, min(text_budget, pack.used_bytes) - (size - room))
            continue
        lo = max(lo, text_budget)
        if best is None or pack.used_bytes > best.used_bytes:
            best, best_size = pack, size
        if room - size <= room * _NEAR or text_budget >= room:
            break
        text_budget = min(room, text_budget + (room - size))
    # Then, when that left the room poorly used (each excerpt costing more in headers than
    # the slack it was cut by), bisect between what fitted and what did not.
    for _ in range(_BISECT_ROUNDS):
        if best_size >= room * _WELL_USED or hi - lo <= _CLOSE_BYTES:
            break
        text_budget = (lo + hi) // 2
        pack, size = measure(text_budget)
        if size > room:
            hi = text_budget
            continue
        lo = text_budget
        if best is None or pack.used_bytes > best.used_bytes:
            best, best_size = pack, size
    if best is None:  # a tight budget: no excerpt, and the optional parts give way
        best = select(prep, task, 0, budget, fill=fill, held=held)
        if len(draft(best, widest).encode("utf-8")) > room:
            raise UsageError(f"--budget must be at least {MIN_BUDGET} bytes")
    count = TokenCounter()
    final = replace(best, items=tuple(replace(i, tokens=count(i.text)) for i in best.items))
    text, figures = _settle(lambda f: draft(final, f), count)
    pack = replace(final, rendered_bytes=figures.rendered_bytes, tokens=figures.tokens)
    return Delivered(pack=pack, text=text)


def build_plan(
    request: PackRequest, progress: ProgressFn | None = None, *, notes: Sequence[str] = ()
) -> DeliveredPlan:
    """The plan, and its Markdown (``notes`` first) within ``PLAN_SHARE`` of the budget.

    Raises:
        UsageError, EnvironmentFault: as ``build_pack``.
    """
    _check_budget(request.budget)
    plan = plan_prepared(prepare(request, progress))
    limit = max(1, math.floor(request.budget * PLAN_SHARE))
    head = "".join(f"{note}\n" for note in notes)
    if len(head.encode("utf-8")) * 2 > limit:
        head = ""  # the plan itself before any note
    text = render_plan_md(plan.to_dict(), limit=limit - len(head.encode("utf-8")))
    return DeliveredPlan(plan=plan, text=head + text)


def plan_prepared(prep: Prepared) -> Plan:
    """A prepared ranking's regions in order, with reasons and sizes, and no source text
    (SPEC §4): ``build_plan``'s plan, unrendered."""
    return plan_of(prep)


def remember_pack(prep: Prepared, pack: Pack) -> None:
    """Record the handles of a pack that is served, so a stale one can say where its lines
    moved (``get``'s ``moved_to``); ``build_pack`` records its own."""
    remember(prep, pack)


def render_retrieved(results: Sequence[Mapping[str, Any]], budget: int) -> str:
    """Retrieved excerpts as Markdown within ``budget`` bytes (whole excerpts or none)."""
    return render_retrieved_md(results, limit=budget)


def _task_notes(prep: Prepared) -> list[str]:
    """What the result must say about the task and the tree before any excerpt."""
    notes = []
    if prep.task.shortened:
        notes.append(
            f"Note: the task has {prep.task.chars:,} characters; its first and last 100,000"
            " were matched as text, and frames, paths and names were taken from all of it."
        )
    if not prep.candidates:
        notes.append(f"Note: {_why_empty(prep)}")
    return notes


def _why_empty(prep: Prepared) -> str:
    """Why nothing could be ranked: what the tree holds, in a sentence."""
    report = prep.report
    if report.files_discovered == 0:
        return "the repository holds no files excerpt can list (empty, or all ignored)."
    servable = report.files_indexed - sum(report.omitted.values())
    if servable <= 0 or not report.languages:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(report.omitted.items())) or "none"
        return (
            f"none of the {report.files_discovered:,} files is text excerpt can serve"
            f" (left out: {reasons})."
        )
    return "no file of the repository matched the task."


def _check_budget(budget: int) -> None:
    if budget < MIN_BUDGET:
        raise UsageError(
            f"--budget must be at least {MIN_BUDGET} bytes: the result itself (headers,"
            " handles, what was left out) needs room"
        )


def _settle(render: Callable[[Figures], str], count: TokenCounter) -> tuple[str, Figures]:
    """The text and the figures it states, once they agree: a text that says how long it is
    changes its length by saying so. When the token count keeps moving with its own digits,
    the largest count seen is stated as an upper bound."""
    claim = Figures(0, 0)
    seen: list[int] = []
    for _ in range(_SETTLE_ROUNDS):
        text = render(claim)
        actual = Figures(len(text.encode("utf-8")), count(text))
        if actual == claim:
            return text, actual
        seen.append(actual.tokens)
        claim = actual
    bound = max(seen) + 4
    claim = Figures(claim.rendered_bytes, bound, tokens_at_most=True)
    for _ in range(_SETTLE_ROUNDS):
        text = render(claim)
        size = len(text.encode("utf-8"))
        if size == claim.rendered_bytes and count(text) <= bound:
            return text, claim
        claim = Figures(size, bound, tokens_at_most=True)
    raise RuntimeError("the rendering's figures did not settle")  # pragma: no cover
