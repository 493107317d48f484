"""Plan and select from a ``Prepared`` ranking: regions in order, fitted to the budget. Pure,
but for ``remember``, which records a final pack's handles in the index.

Every excerpt's bytes come from a fresh guarded read of the file, hashed as read: what the
pack says is what the workspace holds. Lines the secret detector flags are cut out and
listed as omitted; every ranked region left out is listed with the bytes it needed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from excerpt.core.hashing import sha256_hex
from excerpt.core.limits import MAX_BUDGET
from excerpt.core.vocabulary import ItemKind, OmissionReason
from excerpt.index.store import IndexStore
from excerpt.pack.handles import Handle, format_handle
from excerpt.pack.model import Item, Omitted, Pack, Plan, PlanEntry, Role
from excerpt.pack.prepare import Prepared
from excerpt.pack.regions import Region
from excerpt.rank.confidence import logistic
from excerpt.rank.score import RankedFile
from excerpt.rank.signals import NAMED_IN_TASK, Reason
from excerpt.risk import classify_path

__all__ = ["REGION_FEATURES", "plan_of", "region_chance", "region_features", "remember", "select"]


_REASON_FOR_SIGNAL = {
    "stack_frame": "lines pinned by a stack-trace frame",
    "defines": "definition of a symbol named in the task",
    "match": "lines matching task terms",
    "head": "start of the file",
    "header": "head of the class holding the chosen lines",
    "calls": "called by the chosen lines",
    "called_by": "calls the chosen lines",
    "test": "a test naming the primary file's definitions",
    "rest": "the rest of a small file ranked near the top",
}
_WARNINGS = (
    ("bidi-control", re.compile("[\u202a-\u202e\u2066-\u2069]")),
    ("zero-width", re.compile("[\u200b-\u200d\u2060\ufeff]")),
    ("ansi-escape", re.compile("\x1b[\\[\\]]")),
)


@dataclass(frozen=True, slots=True)
class _Piece:
    """One contiguous, secret-free run of lines of a region, ready to serve."""

    candidate: RankedFile
    region: Region
    start: int
    end: int
    data: bytes
    truncated: bool = False  # cut to whole lines around the focus to fit
    joined: bool = False  # two excerpts of a file and the few lines between them
    order: int = 0  # when it was chosen: the strongest first


def plan_of(prep: Prepared) -> Plan:
    """Ranked regions with reasons and sizes, and no source text (SPEC §4)."""
    entries: list[PlanEntry] = []
    omitted = list(prep.omitted)
    # the plan lists regions; serving a small top file whole is a packing decision
    for offer in _ordered(prep, 0):
        cand, region = offer.candidate, offer.region
        omitted.extend(_secret_omissions(prep, cand.path, region))
        entries.append(
            PlanEntry(
                rank=len(entries) + 1,
                path=cand.path,
                start_line=region.start_line,
                end_line=region.end_line,
                score=_region_score(cand, region),
                reasons=_reasons(cand, region),
                bytes=offer.size,
                role=_role(prep, cand.path),
                confidence=prep.confidence.get(cand.path, 0.0),
                related_to=_related_to(prep, cand.path),
            )
        )
    firsts = [e.bytes for e in entries[:12]]
    # the source of the first twelve regions, and what a rendering adds: a header, a handle
    # and a fence for each, the pack's own head and left-out summary once
    rendered = sum(firsts) * 1.1 + _PER_EXCERPT * len(firsts) + _PER_PACK
    suggested = min(MAX_BUDGET, math.ceil(rendered / 1000.0) * 1000)
    return Plan(
        candidates=tuple(entries),
        suggested_budget=max(suggested, 1000),
        omitted=_unique_omissions(omitted),
    )


_PER_EXCERPT, _PER_PACK = 150, 700  # about: Markdown per excerpt, and per pack


def select(
    prep: Prepared,
    task: str,
    budget: int,
    hard_budget: int | None = None,
    *,
    fill: bool = True,
    held: Sequence[Handle] = (),
) -> Pack:
    """Fill ``budget`` bytes of excerpt text from a prepared ranking: the files whose
    confidence is at least ``pack_floor`` (the primary ones among them) in rank order, then
    the primary files' tests, then the rest; without ``fill`` the rest is left out and the
    pack may stop short of its budget, and says so. Pure: the handles are remembered by
    ``remember`` once a pack is final.

    ``hard_budget`` (default ``budget``) is the budget the pack reports: a surface that
    fits its whole rendering into it selects with a smaller text budget. ``held``: handles
    the caller already holds; the lines of those whose file is unchanged are not sent again
    (the budget goes to the next regions), and a changed file is served as if none were.
    """
    selection = _Selection.start(prep, budget, fill=fill, held=held)
    for offer in _ordered(prep, budget, fill=fill):
        selection.offer(offer)
    return selection.pack(task, budget if hard_budget is None else hard_budget)


@dataclass(slots=True, kw_only=True)
class _Selection:
    """A pack being filled: the text budget left (and the related tests' share of it), the
    pieces chosen and left out, and what the caller already holds."""

    prep: Prepared
    budget: int
    fill: bool
    remaining: int
    related_room: int  # related tests take at most this share of the budget
    fresh: dict[str, list[Handle]]  # held handles of unchanged files, by path
    stale: list[str]  # held handles of changed files (their lines are served again)
    holding: dict[str, set[int]]  # the lines the caller holds, by path
    taken: dict[str, set[int]]  # the lines held or chosen, by path
    chosen: list[_Piece] = field(default_factory=list)
    omitted: list[Omitted] = field(default_factory=list)
    served: set[str] = field(default_factory=set)  # excerpt hashes: a text is served once
    spared: set[str] = field(default_factory=set)  # held handles the pack would have sent
    withheld: bool = False  # stopping short, a piece was left out as not worth its tokens

    @classmethod
    def start(
        cls, prep: Prepared, budget: int, *, fill: bool, held: Sequence[Handle]
    ) -> _Selection:
        fresh, stale = _held(prep, held)
        holding = {
            p: {n for h in hs for n in range(h.start_line, h.end_line + 1)}
            for p, hs in fresh.items()
        }
        return cls(
            prep=prep, budget=budget, fill=fill, remaining=budget,
            related_room=math.floor(budget * prep.weights.related_share),
            fresh=fresh, stale=stale, holding=holding,
            taken={p: set(lines) for p, lines in holding.items()},
            omitted=list(prep.omitted),
        )  # fmt: skip

    def offer(self, offer: _Offer) -> None:
        """Serve what the caller does not hold of ``offer``'s region, secret lines aside, or
        list it as left out."""
        path = offer.candidate.path
        for whole in _pieces(self.prep, offer.candidate, offer.region, self.omitted):
            self.spared.update(
                str(h)
                for h in self.fresh.get(path, ())
                if h.start_line <= whole.end and whole.start <= h.end_line
            )
            for piece in _untaken(whole, self.taken.get(path, set())):
                self._consider(offer, piece)

    def _consider(self, offer: _Offer, piece: _Piece) -> None:
        if self._withholds(offer, piece):
            self.omitted.append(_omission(self.prep, piece, "budget", confident=True))
            self.withheld = True
            return
        related = offer.group == "related"
        if related and self.fill:
            self.omitted.append(_omission(self.prep, piece, "budget"))
            return
        before = len(self.chosen)
        room = min(self.remaining, self.related_room) if related else self.remaining
        took = _take(self.prep, piece, room, self.chosen, self.served, self.omitted)
        self.remaining -= took
        if related:
            self.related_room -= took
        for p in self.chosen[before:]:
            self.taken.setdefault(p.candidate.path, set()).update(range(p.start, p.end + 1))

    def _withholds(self, offer: _Offer, piece: _Piece) -> bool:
        """Whether a pack that stops short leaves ``piece`` out: its file is below the floor,
        or its region's chance of holding a line to change, in tokens it saves, is not worth
        what it costs (the strongest region is always served). A related test's lines are
        never withheld."""
        if self.fill or offer.group == "related":
            return False
        worth = self.prep.weights.region_worth_tokens
        return offer.group == "below_floor" or (
            worth > 0
            and offer.chance * worth < len(piece.data) / _BYTES_PER_TOKEN
            and bool(self.chosen)
        )

    def pack(self, task: str, budget_bytes: int) -> Pack:
        """The chosen pieces as a pack, neighbours joined, in reading order; ``budget_bytes``
        is the budget it reports."""
        prep = self.prep
        chosen = [replace(p, order=n) for n, p in enumerate(self.chosen)]
        joined, remaining = _join_neighbours(
            prep, _in_file_order(chosen), self.remaining, self.holding
        )
        if prep.weights.read_order == 1:
            joined = _in_read_order(joined)
        elif prep.weights.read_order == 2:
            joined = sorted(joined, key=lambda p: p.order)
        covered = {(p.candidate.path, n) for p in joined for n in range(p.start, p.end + 1)}
        omitted = [o for o in self.omitted if not _served(o, covered)]
        ranks = {c.path: n for n, c in enumerate(prep.candidates, start=1)}
        items = [_item(prep, p, rank, ranks) for rank, p in enumerate(joined, start=1)]
        short = self.withheld and remaining > self.budget * _SHORT_SHARE
        return Pack(
            task_sha256=sha256_hex(task.encode("utf-8", "surrogatepass")),
            budget_bytes=budget_bytes,
            items=tuple(items),
            omitted=_unique_omissions(omitted),
            warnings=tuple(_warnings(items)),
            graph=prep.graph,
            stats=_stats(prep),
            stopped_short=prep.weights.pack_floor if short else None,
            already_held=tuple(sorted(self.spared)),
            held_stale=tuple(sorted(self.stale)),
        )


def _held(prep: Prepared, held: Sequence[Handle]) -> tuple[dict[str, list[Handle]], list[str]]:
    """The held handles of ranked files: by path those whose file is unchanged, and those
    whose file changed (its lines are served again). A handle of a file the ranking did not
    reach has nothing to spare."""
    fresh: dict[str, list[Handle]] = {}
    stale: list[str] = []
    for handle in held:
        content = prep.files.get(handle.path)
        if content is None:
            continue
        if content[0].sha256.startswith(handle.digest):
            fresh.setdefault(handle.path, []).append(handle)
        else:
            stale.append(str(handle))
    return fresh, stale


def _take(
    prep: Prepared,
    piece: _Piece,
    remaining: int,
    chosen: list[_Piece],
    served: set[str],
    omitted: list[Omitted],
) -> int:
    """Serve ``piece`` whole, or cut to whole lines to fit, or list it as left out; the
    bytes it took."""
    size = len(piece.data)
    digest = sha256_hex(piece.data)
    if digest in served:
        omitted.append(_omission(prep, piece, "duplicate"))
        return 0
    if not _worth_serving(piece, whole=True):
        omitted.append(_omission(prep, piece, "too_small"))
        return 0
    if size <= remaining:
        chosen.append(piece)
        served.add(digest)
        return size
    cut = _fragment(prep, piece, remaining)
    if cut is not None and _worth_serving(cut, whole=False):
        chosen.append(cut)
        served.add(sha256_hex(cut.data))
        omitted.extend(_cut_away(prep, piece, cut))
        return len(cut.data)
    omitted.append(_omission(prep, piece, "budget"))
    return 0


def _untaken(piece: _Piece, taken: set[int]) -> list[_Piece]:
    """The runs of ``piece``'s lines not already chosen (a related test's function, then the
    same file's own regions as a candidate)."""
    if not taken.intersection(range(piece.start, piece.end + 1)):
        return [piece]
    out: list[_Piece] = []
    start = piece.start
    for n in range(piece.start, piece.end + 2):
        if n > piece.end or n in taken:
            if start < n:
                lo, hi = start - piece.start, n - piece.start
                data = b"".join(piece.data.splitlines(keepends=True)[lo:hi])
                out.append(_Piece(piece.candidate, piece.region, start, n - 1, data))
            start = n + 1
    return out


def remember(prep: Prepared, pack: Pack) -> None:
    """Record the pack's handles in the index, so a stale one can say where its lines
    moved (``get``'s ``moved_to``)."""
    _remember(prep, pack.items)


def _join_neighbours(
    prep: Prepared,
    pieces: list[_Piece],
    remaining: int,
    holding: Mapping[str, set[int]] | None = None,
) -> tuple[list[_Piece], int]:
    """Excerpts of one file at most three lines apart become one, the lines between them
    included when the budget allows and none is a secret or held by the caller: an agent
    reads one stretch, and a header and fence less pays for the gap."""
    held = holding or {}
    out: list[_Piece] = []
    for piece in pieces:
        last = out[-1] if out else None
        if last is None or last.candidate.path != piece.candidate.path:
            out.append(piece)
            continue
        _, lines = prep.files[piece.candidate.path]
        gap = range(last.end + 1, piece.start)
        barred = any(
            s <= n <= e for s, e in prep.secrets.get(piece.candidate.path, []) for n in gap
        ) or any(n in held.get(piece.candidate.path, ()) for n in gap)
        size = sum(len(lines[n - 1]) for n in gap)
        # read strongest first, a region and the rest of its file stay apart: joined, the
        # rest would be read where the region is
        apart = prep.weights.read_order == 2 and (last.region.signal == "rest") != (
            piece.region.signal == "rest"
        )
        if len(gap) > prep.weights.gap_lines or barred or size > remaining or apart:
            out.append(piece)
            continue
        remaining -= size
        strong = last if last.region.weight >= piece.region.weight else piece
        out[-1] = _Piece(
            piece.candidate, strong.region, last.start, piece.end,
            b"".join(lines[last.start - 1 : piece.end]),
            last.truncated or piece.truncated, joined=True, order=min(last.order, piece.order),
        )  # fmt: skip
    return out, remaining


def _served(entry: Omitted, covered: set[tuple[str, int]]) -> bool:
    """A budget omission whose every line ended up served (in the gap of a join)."""
    if entry.reason != "budget" or entry.start_line is None or entry.end_line is None:
        return False
    lines = range(entry.start_line, entry.end_line + 1)
    return all((entry.path, n) in covered for n in lines)


def _in_file_order(pieces: list[_Piece]) -> list[_Piece]:
    """Files in the order they were first chosen, each file's excerpts in line order: an
    agent reads a file top to bottom."""
    first: dict[str, int] = {}
    for n, piece in enumerate(pieces):
        first.setdefault(piece.candidate.path, n)
    return sorted(pieces, key=lambda p: (first[p.candidate.path], p.start))


def _in_read_order(pieces: list[_Piece]) -> list[_Piece]:
    """Files in the order they were first chosen, each file's excerpts strongest first."""
    first: dict[str, int] = {}
    for piece in sorted(pieces, key=lambda p: p.order):
        first.setdefault(piece.candidate.path, piece.order)
    return sorted(pieces, key=lambda p: (first[p.candidate.path], p.order))


def _worth_serving(piece: _Piece, *, whole: bool) -> bool:
    """One or two lines are served only as a pinned line, a whole definition or a file the
    task names: a cut ``class Admin:`` or a sliver left between secret lines tells an agent
    nothing, and blank lines alone tell it less. A file the task names is served whatever
    is left of it (a file of keys shows its other lines, its key lines omitted ``secret``)."""
    if not piece.data.strip():
        return False
    if piece.end - piece.start >= 2 or (whole and NAMED_IN_TASK in piece.candidate.reasons):
        return True
    pinned = any(
        a.signal == "stack_frame" and piece.start <= a.start_line <= piece.end
        for a in piece.candidate.anchors
    )
    exact = (piece.start, piece.end) == (piece.region.start_line, piece.region.end_line)
    return pinned or (whole and exact and piece.region.kind in ("symbol", "file"))


# -- selection -----------------------------------------------------------------------------


def _whole(prep: Prepared, rank: int, cand: RankedFile, budget: int) -> Sequence[Region] | None:
    """The whole file as one region, for a top file small enough to serve entire (the lines a
    change touches are often outside the functions the task's words reach)."""
    shares = prep.weights.whole_shares
    if rank >= len(shares) or not prep.regions[cand.path]:
        return None
    if _is_changed(cand) and not _top_by_the_task(prep, cand):
        # a changed file comes first because it changed: served whole only when the task's
        # own words put it first too (in a handoff, the change is done; the rest is next)
        return None
    _, lines = prep.files[cand.path]
    if not lines or sum(len(line) for line in lines) > budget * shares[rank]:
        return None
    first = prep.regions[cand.path][0]
    return [Region(1, len(lines), "file", first.weight, first.focus, first.signal)]


def _is_changed(cand: RankedFile) -> bool:
    return any(r.signal == "changed" for r in cand.reasons)


def _top_by_the_task(prep: Prepared, cand: RankedFile) -> bool:
    """Whether ``cand`` ranks first on the task's evidence alone, its changed gain aside."""

    def own(c: RankedFile) -> float:
        return c.score - (prep.weights.changed_gain if _is_changed(c) else 0.0)

    return all(own(cand) >= own(c) for c in prep.candidates)


# Why a region is offered: a primary file's; a file's whose confidence is at least
# ``pack_floor``; a related test's chosen lines; a file's below the floor.
_Group = Literal["primary", "warranted", "related", "below_floor"]
# a pack that withheld files but left less than this share of its text budget unused did
# not stop short: the budget was spent
_SHORT_SHARE = 0.05
_BYTES_PER_TOKEN = 3.5  # source text, o200k: about
_SELECTION_ORDER: dict[_Group, int] = {
    "primary": 0, "warranted": 0, "related": 1, "below_floor": 2,
}  # fmt: skip
_TEST_OF_PRIMARY = Reason("graph", "a test of a primary file")
_TEST_OF_TASK = Reason("graph", "the best-ranked test of the task")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Offer:
    """A region offered to selection, in the order selection meets them."""

    candidate: RankedFile
    region: Region
    size: int  # its bytes, secret lines aside
    group: _Group
    # its chance of holding a line the change touches (ranked by file, the file's
    # confidence; a related test's lines, 0.0)
    chance: float


@dataclass(frozen=True, slots=True, kw_only=True)
class _Scored:
    """An offer with what orders it among the others by chance."""

    offer: _Offer
    density: float  # its chance per byte (to ``chance_size``)
    rank: int  # its file's
    line: int  # its first line; 0 for the rest of a file


def _ordered(prep: Prepared, budget: int, *, fill: bool = True) -> list[_Offer]:
    """Every region to serve, in selection order: the regions of the primary files and of
    the others whose confidence is at least ``pack_floor`` (with ``fill``, of every file),
    in the order ``_ordered_regions`` gives them; the related tests' chosen lines; then the
    rest.

    A related test before the ranked files cost the shipped context suite 11 points of gold
    files at 6,000 bytes (file recall 0.882 -> 0.774), so it takes the room they leave: a
    pack that stops short, or one whose candidates all fit."""
    out = _ordered_regions(prep, budget)
    ranked = {c.path: c for c in prep.candidates}
    for test, subject in prep.related:
        base = ranked.get(test) or RankedFile(path=test, score=0.0, tier=0, reasons=(), anchors=())
        why = _TEST_OF_PRIMARY if subject is not None else _TEST_OF_TASK
        cand = replace(base, reasons=(why, *base.reasons))
        for region in prep.related_regions[test]:
            size = _region_size(prep, test, region)
            offer = _Offer(candidate=cand, region=region, size=size, group="related", chance=0.0)
            out.append(offer)
    order = {**_SELECTION_ORDER, "below_floor": 0} if fill else _SELECTION_ORDER
    return sorted(out, key=lambda offer: order[offer.group])


def _group(prep: Prepared, path: str) -> _Group:
    """The group of a ranked file's regions."""
    if path in prep.primary:
        return "primary"
    if prep.confidence.get(path, 0.0) >= prep.weights.pack_floor:
        return "warranted"
    return "below_floor"


def _offer(prep: Prepared, cand: RankedFile, region: Region, chance: float) -> _Offer:
    """A ranked file's region as an offer."""
    size = _region_size(prep, cand.path, region)
    group = _group(prep, cand.path)
    return _Offer(candidate=cand, region=region, size=size, group=group, chance=chance)


def _region_size(prep: Prepared, path: str, region: Region) -> int:
    _, lines = prep.files[path]
    secret = {n for s, e in prep.secrets.get(path, []) for n in range(s, e + 1)}
    return sum(
        len(lines[n - 1]) for n in range(region.start_line, region.end_line + 1) if n not in secret
    )


def _role(prep: Prepared, path: str) -> Role:
    return "primary" if path in prep.primary else "related"


def _related_to(prep: Prepared, path: str) -> str | None:
    """The primary file a related test tests (None: a test the task's words rank)."""
    return next((subject for test, subject in prep.related if test == path), None)


# what a region's share among the regions of a file the change touches is fitted on, in
# the order of ``region_coefficients`` (scripts/calibrate_regions.py)
REGION_FEATURES = ("bias", "weight", "strongest", "second", "log2_lines", "named_definition")


def region_features(index: int, region: Region) -> tuple[float, ...]:
    """``REGION_FEATURES`` of ``region``, the ``index``-th strongest of its file."""
    lines = region.end_line - region.start_line + 1
    return (
        1.0, region.weight, float(index == 0), float(index == 1), math.log2(lines + 1),
        float(region.signal == "defines"),
    )  # fmt: skip


def region_chance(prep: Prepared, cand: RankedFile, index: int, region: Region) -> float:
    """The chance that ``region`` (the ``index``-th strongest of its file) holds a line the
    change touches: the file's confidence times the share of such regions among those of a
    file the change touches with the same features."""
    share = logistic(region_features(index, region), prep.weights.region_coefficients)
    return prep.confidence.get(cand.path, 0.0) * share


def _by_chance(prep: Prepared, budget: int) -> list[_Offer]:
    """Every region by its chance of holding a changed line per byte (``chance_size``
    its exponent), a small top file's remaining lines after its regions; the files the
    change is known to touch first."""
    out: list[_Scored] = []
    alpha = prep.weights.chance_size
    for rank, cand in enumerate(prep.candidates):
        for i, region in enumerate(prep.regions[cand.path]):
            offer = _offer(prep, cand, region, region_chance(prep, cand, i, region))
            density = offer.chance / max(offer.size, 1) ** alpha
            out.append(_Scored(offer=offer, density=density, rank=rank, line=region.start_line))
        whole = _whole(prep, rank, cand, budget) if rank < prep.weights.rest_files else None
        if whole:
            rest = replace(whole[0], signal="rest")
            chance = prep.confidence.get(cand.path, 0.0) * prep.weights.rest_share
            offer = _offer(prep, cand, rest, chance)
            density = offer.chance / max(offer.size, 1) ** alpha
            out.append(_Scored(offer=offer, density=density, rank=rank, line=0))
    # a file the change is known to touch (its tier) before any other
    out.sort(key=lambda r: (-r.offer.candidate.tier, -r.density, r.rank, r.line))
    return [r.offer for r in out]


def _ordered_regions(prep: Prepared, budget: int) -> list[_Offer]:
    """The first region of each of the top ``breadth`` files in rank order, then every other
    region by its own score: a strong file's second function before a weak file's first
    (files still appear in rank order: first regions swap places among themselves)."""
    if prep.weights.region_order:
        return _by_chance(prep, budget)
    firsts: list[_Offer] = []
    rest: list[tuple[_Offer, int]] = []  # with the rank of a file's first region, else -1
    for rank, cand in enumerate(prep.candidates):
        regions = _whole(prep, rank, cand, budget) or prep.regions[cand.path]
        chance = prep.confidence.get(cand.path, 0.0)
        for i, region in enumerate(regions):
            offer = _offer(prep, cand, region, chance)
            if i == 0 and rank < prep.weights.breadth:
                firsts.append(offer)
            else:
                rest.append((offer, rank if i == 0 else -1))
    rest.sort(
        key=lambda r: (
            -r[0].candidate.tier, -_region_score(r[0].candidate, r[0].region),
            r[0].candidate.path, r[0].region.start_line,
        )
    )  # fmt: skip
    # files still appear in rank order: first regions swap places among themselves
    slots = [n for n, r in enumerate(rest) if r[1] >= 0]
    for n, first in zip(slots, sorted((rest[n] for n in slots), key=lambda r: r[1]), strict=True):
        rest[n] = first
    return firsts + [offer for offer, _ in rest]


def _secret_cuts(prep: Prepared, path: str, region: Region) -> list[tuple[int, int]]:
    """The secret line ranges inside a region, clipped to it."""
    return sorted(
        (max(s, region.start_line), min(e, region.end_line))
        for s, e in prep.secrets.get(path, [])
        if s <= region.end_line and e >= region.start_line
    )


def _secret_omissions(prep: Prepared, path: str, region: Region) -> list[Omitted]:
    return [
        Omitted(path=path, reason="secret", start_line=lo, end_line=hi)
        for lo, hi in _secret_cuts(prep, path, region)
    ]


def _unique_omissions(omitted: list[Omitted]) -> tuple[Omitted, ...]:
    return tuple(sorted(dict.fromkeys(omitted), key=Omitted.sort_key))


def _pieces(
    prep: Prepared, cand: RankedFile, region: Region, omitted: list[Omitted]
) -> list[_Piece]:
    """The region split around secret lines (those are listed as omitted, never served)."""
    _, lines = prep.files[cand.path]
    omitted.extend(_secret_omissions(prep, cand.path, region))
    pieces: list[_Piece] = []
    start = region.start_line
    for lo, hi in _secret_cuts(prep, cand.path, region):
        if start < lo:
            pieces.append(_piece(cand, region, lines, start, lo - 1))
        start = hi + 1
    if start <= region.end_line:
        pieces.append(_piece(cand, region, lines, start, region.end_line))
    return pieces


def _piece(
    cand: RankedFile, region: Region, lines: Sequence[bytes], start: int, end: int
) -> _Piece:
    return _Piece(cand, region, start, end, b"".join(lines[start - 1 : end]))


def _fragment(prep: Prepared, piece: _Piece, remaining: int) -> _Piece | None:
    """The largest run of whole lines around the region's focus line that fits."""
    _, lines = prep.files[piece.candidate.path]
    focus = min(max(piece.region.focus, piece.start), piece.end)
    if len(lines[focus - 1]) > remaining:
        return None
    lo = hi = focus
    used = len(lines[focus - 1])
    while True:
        grew = False
        for nxt in (hi + 1, lo - 1):
            if piece.start <= nxt <= piece.end and not lo <= nxt <= hi:
                size = len(lines[nxt - 1])
                if used + size <= remaining:
                    used += size
                    lo, hi = min(lo, nxt), max(hi, nxt)
                    grew = True
        if not grew:
            break
    return _Piece(piece.candidate, piece.region, lo, hi, b"".join(lines[lo - 1 : hi]), True)


def _cut_away(prep: Prepared, piece: _Piece, cut: _Piece) -> list[Omitted]:
    content, lines = prep.files[piece.candidate.path]
    sha = content.sha256
    out = []
    for lo, hi in ((piece.start, cut.start - 1), (cut.end + 1, piece.end)):
        if lo <= hi:
            size = sum(len(line) for line in lines[lo - 1 : hi])
            out.append(
                Omitted(
                    path=piece.candidate.path,
                    reason="budget",
                    score=piece.candidate.score,
                    bytes_needed=size,
                    start_line=lo,
                    end_line=hi,
                    handle=format_handle(piece.candidate.path, lo, hi, sha),
                )
            )
    return out


def _omission(
    prep: Prepared, piece: _Piece, reason: OmissionReason, *, confident: bool = False
) -> Omitted:
    """A piece left out; ``confident``: left out for its file's low confidence, which the
    entry then states."""
    path = piece.candidate.path
    return Omitted(
        path=path, reason=reason, score=_region_score(piece.candidate, piece.region),
        bytes_needed=len(piece.data), start_line=piece.start, end_line=piece.end,
        handle=format_handle(path, piece.start, piece.end, prep.files[path][0].sha256),
        confidence=prep.confidence.get(path, 0.0) if confident else None,
        related_to=_related_to(prep, path),
    )  # fmt: skip


def _region_score(cand: RankedFile, region: Region) -> float:
    return round(cand.score * (0.5 + region.weight), 4)


def _reasons(cand: RankedFile, region: Region) -> tuple[Reason, ...]:
    lines = Reason("match", _REASON_FOR_SIGNAL.get(region.signal, "lines chosen"))
    concepts = classify_path(cand.path)
    risk = (Reason("risk", "risk concepts: " + ", ".join(concepts)),) if concepts else ()
    return (*cand.reasons, lines, *risk)


def _item(prep: Prepared, piece: _Piece, rank: int, ranks: Mapping[str, int]) -> Item:
    content, lines = prep.files[piece.candidate.path]
    exact = (piece.start, piece.end) == (piece.region.start_line, piece.region.end_line)
    truncated = piece.truncated
    kind: ItemKind
    if truncated:
        kind = "fragment"
    elif piece.start == 1 and piece.end == len(lines):
        kind = "file"
    elif piece.joined:
        kind = "window"
    elif exact and piece.region.kind != "file":
        kind = piece.region.kind
    else:  # a region split around secret lines
        kind = "window"
    return Item(
        rank=rank,
        path=piece.candidate.path,
        start_line=piece.start,
        end_line=piece.end,
        source_sha256=content.sha256,
        excerpt_sha256=sha256_hex(piece.data),
        bytes=len(piece.data),
        handle=format_handle(piece.candidate.path, piece.start, piece.end, content.sha256),
        kind=kind,
        truncated=truncated,
        score=_region_score(piece.candidate, piece.region),
        reasons=_reasons(piece.candidate, piece.region),
        text=piece.data.decode("utf-8"),
        role=_role(prep, piece.candidate.path),
        confidence=prep.confidence.get(piece.candidate.path, 0.0),
        related_to=_related_to(prep, piece.candidate.path),
        file_rank=ranks.get(piece.candidate.path),
    )


def _remember(prep: Prepared, items: Sequence[Item]) -> None:
    rows = []
    for item in items:
        _, lines = prep.files[item.path]
        first = sha256_hex(lines[item.start_line - 1])
        rows.append((item.handle, item.excerpt_sha256, item.end_line - item.start_line + 1, first))
    store = IndexStore.open(prep.cache)
    try:
        store.remember_handles(rows)
    finally:
        store.close()


def _warnings(items: Sequence[Item]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        for code, pattern in _WARNINGS:
            text = item.text[1:] if item.start_line == 1 and code == "zero-width" else item.text
            if pattern.search(text):
                out.append({"code": code, "path": item.path, "rank": item.rank})
    return out


def _stats(prep: Prepared) -> dict[str, Any]:
    report = prep.report
    return {
        "files_discovered": report.files_discovered,
        "files_indexed": report.files_indexed,
        "files_skipped": sum(report.omitted.values()),
        "discovery_truncated": report.discovery_truncated,
        "candidates": len(prep.candidates),
        "task_chars": prep.task.chars,
        "task_shortened": prep.task.shortened,
    } | ({"cache_rebuilt": report.rebuilt} if report.rebuilt else {})
