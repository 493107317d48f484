"""Packs, plans and retrievals as the compact Markdown a model receives. Pure.

Repository text appears only inside fenced blocks (a fence is always longer than any
backtick run it holds); headers carry paths, line ranges and handles. Reasons are short
codes with a legend printed once; the left-out list is summarised (counts by reason, then
the next regions by rank with their handles), the full list staying in the JSON forms.

Every renderer takes a ``limit`` in bytes: optional parts (the legend, the next regions,
the notes) are dropped or shortened to stay within it, and what cannot be dropped is
reported so the caller can select less. ``Figures`` are the sizes the text states about
itself; ``excerpt.deliver`` finds the figures that make the statement true.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from excerpt.core.escape import escape_controls
from excerpt.index.lang import language_of

__all__ = [
    "Figures",
    "render_pack_md",
    "render_plan_md",
    "render_retrieved_md",
]

_FENCE_LANG = {
    "python": "python", "javascript": "javascript", "typescript": "typescript", "tsx": "tsx",
    "go": "go", "rust": "rust", "java": "java", "c": "c", "cpp": "cpp", "csharp": "csharp",
    "ruby": "ruby", "php": "php", "kotlin": "kotlin", "swift": "swift", "scala": "scala",
    "lua": "lua", "shell": "sh", "sql": "sql", "markdown": "markdown", "json": "json",
    "yaml": "yaml", "toml": "toml", "html": "html", "css": "css", "xml": "xml", "ini": "ini",
}  # fmt: skip

# (signal, the generic part of a detail) -> (code, what the code means). A detail is
# "generic (specific)" or "generic: specific"; the specific part follows the code.
_CODES: dict[tuple[str, str], tuple[str, str]] = {
    ("lexical", "BM25 match of task terms over path, symbols and body"): (
        "lex",
        "task terms match, BM25",
    ),
    ("lexical", "BM25 match of the task's first line"): ("title", "the first line matches"),
    ("path", "path or file name named in the task"): ("path", "the task names the path"),
    ("path", "the first line's scope names it"): ("scope", "the first line's scope names it"),
    ("path", "module named by a dotted name in the task"): (
        "module",
        "the task names the module",
    ),
    ("stack_frame", "pinned by a stack-trace frame or file:line reference"): (
        "frame",
        "a stack frame or file:line points here",
    ),
    ("changed", "changed in the working tree or named as changed"): (
        "changed",
        "in the work tree, or named as changed",
    ),
    ("history", "changed by a past commit matching the task"): (
        "past",
        "a past commit matching the task changed it",
    ),
    ("fallback", "nothing in the task matched: repository overview"): (
        "overview",
        "nothing matched: repository overview",
    ),
}
_BY_SIGNAL: dict[str, tuple[str, str]] = {
    "defines": ("def", "defines a name the task gives"),
    "graph": ("graph", "an import or test of a stronger file"),
    "demoted": ("down", "ranked down for its kind"),
    "risk": ("risk", "risk concepts"),
}
# what put an excerpt's lines in the pack (the ``match`` reason of each item)
_LINES = {
    "lines pinned by a stack-trace frame": "frame line",
    "definition of a symbol named in the task": "definition",
    "start of the file": "file head",
    "a test naming the primary file's definitions": "test naming it",
}
_RELATED_TESTS = ("a test of a primary file", "the best-ranked test of the task")
_DEFINES = re.compile(r"defines (?P<name>\S+) named in")
_SPECIFIC = re.compile(r"^(?P<generic>.*?)(?: \((?P<paren>[^()]*)\)|: (?P<colon>.*))$", re.S)
_NEXT_SHOWN = 10
_HELD_SHOWN = 5  # held handles named in the Markdown (the JSON lists them all)
_SPECIFICS = 3  # terms or names shown after a code


@dataclass(frozen=True, slots=True)
class Figures:
    """What a rendering says about its own size: bytes and o200k tokens of the whole text."""

    rendered_bytes: int
    tokens: int
    tokens_at_most: bool = False  # the count oscillated with its own digits: an upper bound


def _fence(text: str, path: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{_FENCE_LANG.get(language_of(path), '')}\n{body}{fence}\n"


def _code_of(reason: Mapping[str, str]) -> tuple[str, str, str]:
    """``(code, legend, specific part)`` of one reason."""
    signal, detail = reason["signal"], reason["detail"]
    if signal == "defines":
        found = _DEFINES.match(detail)
        code, legend = _BY_SIGNAL["defines"]
        return code, legend, found.group("name") if found else detail
    if signal in ("demoted", "risk"):
        code, legend = _BY_SIGNAL[signal]
        return code, legend, detail.removeprefix("risk concepts: ")
    parts = _SPECIFIC.match(detail)
    generic, specific = detail, ""
    if parts is not None:
        generic = parts.group("generic")
        specific = parts.group("paren") or parts.group("colon") or ""
    if (signal, generic) in _CODES:
        code, legend = _CODES[(signal, generic)]
        return code, legend, specific
    if signal in _BY_SIGNAL:
        code, legend = _BY_SIGNAL[signal]
        return code, legend, specific or detail
    return signal, signal, detail


# codes whose specific part is the same for every file (the task's rarest terms): it is
# said once, in the legend
_TASK_WIDE = frozenset({"lex", "title"})


def _why(reasons: Sequence[Mapping[str, str]], legend: dict[str, str]) -> str:
    """A file's reasons as codes, each once, with its specific parts joined."""
    order: list[str] = []
    specifics: dict[str, list[str]] = {}
    for reason in reasons:
        if reason["signal"] == "match" or reason["detail"] in _RELATED_TESTS:
            continue  # the lines' reason has its own place; a related test says what it tests
        code, meaning, specific = _code_of(reason)
        if code in _TASK_WIDE:
            if code not in legend and specific:
                meaning = f"{meaning} ({escape_controls(specific)})"
            legend.setdefault(code, meaning)
            specific = ""
        legend.setdefault(code, meaning)
        if code not in specifics:
            order.append(code)
            specifics[code] = []
        for part in (p.strip() for p in specific.split(",")):
            if part and part not in specifics[code]:
                specifics[code].append(part)
    out: list[str] = []
    told: set[str] = set()
    for code in order:
        shown = specifics[code][:_SPECIFICS]
        # the first line's terms are often the body's: said once
        fresh = [s for s in shown if s not in told]
        told.update(shown)
        out.append(f"{code}({escape_controls(', '.join(shown))})" if fresh else code)
    return " ".join(out)


def _role(item: Mapping[str, Any], number: Mapping[str, int]) -> str:
    """`` · tests 1`` for a test of file 1, `` · test`` for the task's best-ranked test, else
    nothing (the primary files are named once, in ``_primary``; every confidence is in the
    JSON): a label costs the excerpts' bytes."""
    if item.get("role") is None:
        return ""
    subject = item.get("related_to")
    if subject is not None and subject in number:
        return f" · tests {number[subject]}"
    if any(r["detail"] == _RELATED_TESTS[1] for r in item["reasons"]):
        return " · test"
    return ""


def _held(pack: Mapping[str, Any]) -> str:
    """What the caller said it holds: the handles not sent again (still fresh), and those
    whose file changed (served again)."""
    out = ""
    for key, what in (
        ("already_held", "not sent again, still fresh"),
        ("held_stale", "their files changed, served again"),
    ):
        handles = pack.get(key) or []
        if handles:
            shown = ", ".join(f"`{escape_controls(h)}`" for h in handles[:_HELD_SHOWN])
            more = f" and {len(handles) - _HELD_SHOWN} more" if len(handles) > _HELD_SHOWN else ""
            out += f" Held excerpts {what}: {shown}{more}."
    return out


def _primary(items: Sequence[Mapping[str, Any]], number: Mapping[str, int]) -> str:
    """``Likely to change: 1 (0.91), 3 (0.40).``: the primary files by number, with the
    calibrated confidence that the change touches each."""
    sure = {i["path"]: i["confidence"] for i in items if i.get("role") == "primary"}
    if not sure:
        return ""
    shown = ", ".join(f"{number[p]} ({c:.2f})" for p, c in sure.items())
    return f"Likely to change: {shown}."


def _lines_reason(reasons: Sequence[Mapping[str, str]]) -> str:
    """What put the excerpt's lines here, when it is more than matching the task's terms."""
    for reason in reasons:
        if reason["signal"] == "match":
            return _LINES.get(reason["detail"], "")
    return ""


def _legend(legend: Mapping[str, str]) -> str:
    return "Why: " + "; ".join(f"{code} = {meaning}" for code, meaning in legend.items()) + "."


def _figures(figures: Figures, used: int, budget: int) -> str:
    tokens = f"at most {figures.tokens:,}" if figures.tokens_at_most else f"{figures.tokens:,}"
    return (
        f"Source {used:,} of {budget:,} bytes; this text {figures.rendered_bytes:,} bytes,"
        f" {tokens} o200k tokens."
    )


def _size(parts: Sequence[str]) -> int:
    return sum(len(p.encode("utf-8")) + 1 for p in parts)


def _left_out(omitted: Sequence[Mapping[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for entry in omitted:
        counts[entry["reason"]] = counts.get(entry["reason"], 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{reason} {count}" for reason, count in ordered)


def _next(omitted: Sequence[Mapping[str, Any]], limit: int) -> list[str]:
    """The best left-out region of each file, by score: what to ask for next (three, and
    one more for each 2,500 bytes of room, up to ten). A primary file's test left out is in
    the JSON (``related_to``), not here: every entry costs a filled pack's excerpts bytes."""
    most = min(_NEXT_SHOWN, max(3, limit // 2500))
    seen: set[str] = set()
    out = []
    for entry in omitted:
        if entry.get("handle") is None or entry["path"] in seen or entry.get("related_to"):
            continue
        seen.add(entry["path"])
        out.append(f"- `{escape_controls(entry['handle'])}` {entry.get('bytes_needed', 0):,} B")
        if len(out) >= most:
            break
    return out


def render_pack_md(
    pack: Mapping[str, Any],
    figures: Figures,
    *,
    limit: int,
    retrieve: str = "`excerpt get HANDLE`",
    notes: Sequence[str] = (),
    trim: bool = True,
) -> str:
    """The pack as Markdown of at most ``limit`` bytes, when its excerpts allow it: the
    legend, the notes and the left-out lines give way first (the caller fits the excerpts).
    ``trim=False`` keeps them all, for a caller measuring what a selection costs.
    """
    items = pack["items"]
    files = list(dict.fromkeys(i["path"] for i in items))
    head = [
        f"# Context pack: {len(items)} excerpts from {len(files)} files",
        _figures(figures, pack["budget"]["used_bytes"], pack["budget"]["bytes"]),
    ]
    guide = f"Exact source. Re-read any range of a file with {retrieve}; stale text is refused."
    short = pack["budget"].get("stopped_short")
    if short is not None:
        guide += (
            " Stopped short of the budget: each region left (under Left out, with its"
            f" handle) is in a file below confidence {short['floor']:.2f} or less likely to"
            " hold a line to change than it costs (ask without stop-short to use it all)."
        )
    guide += _held(pack)
    legend: dict[str, str] = {}
    body: list[str] = []
    number = {path: n for n, path in enumerate(files, start=1)}
    # items in the pack's order, a header each time the file changes: a file met again
    # (its weaker regions after another file's stronger ones) is named by its number
    runs: list[list[Mapping[str, Any]]] = []
    for item in items:
        if runs and runs[-1][0]["path"] == item["path"]:
            runs[-1].append(item)
        else:
            runs.append([item])
    headed: set[str] = set()
    for mine in runs:
        path = mine[0]["path"]
        n = number[path]
        if path in headed:
            body += ["", f"## {n}. `{escape_controls(path)}`, again"]
        else:
            headed.add(path)
            why = _why(mine[0]["reasons"], legend)
            role = _role(mine[0], number)
            body += [
                "",
                f"## {n}. `{escape_controls(path)}`{role}" + (f" · {why}" if why else ""),
            ]
        for item in mine:
            cut = ", cut to fit" if item["truncated"] else ""
            lines = _lines_reason(item["reasons"])
            body.append(
                f"`{escape_controls(item['handle'])}` {item['kind']}{cut}"
                + (f", {lines}" if lines else "")
            )
            body.append(_fence(item["text"], path).rstrip("\n"))
    for warning in pack["warnings"]:
        body.append(f"> warning: {warning['code']} in excerpt {warning['rank']}")
    graph = pack.get("graph")
    if graph and graph.get("source") == "file":
        body.append(f"Graph: {graph['note']} (sha256 {graph['sha256']}).")
    omitted = pack["omitted"]
    tail = ["", f"## Left out: {len(omitted)} ({_left_out(omitted)})"] if omitted else []
    shown = _next(omitted, limit)
    notes_, guide_, legend_ = list(notes), [guide], [_legend(legend)] if legend else []
    # the primary files' line takes only room the excerpts left: a selection is measured
    # without it, so it never costs an excerpt its bytes
    primary_ = [line for line in (_primary(items, number),) if line and trim]

    def assemble() -> list[str]:
        nexts = ["Next by rank:", *shown] if shown else []
        return [head[0], *notes_, head[1], *guide_, *primary_, *body, *legend_, *tail, *nexts]

    # what gives way, in order: the primary files' line (the JSON keeps every confidence),
    # the legend, the next regions one by one, notes (the guide, how to ask for more, stays)
    for drop in (primary_, legend_, shown, notes_):
        while trim and drop and _size(assemble()) > limit:
            drop.pop()
    return "\n".join(assemble()) + "\n"


def render_plan_md(plan: Mapping[str, Any], *, limit: int) -> str:
    """The plan as Markdown of at most ``limit`` bytes: ranked regions with their sizes and
    reason codes, as many as fit, and how many more the JSON plan holds."""
    candidates = plan["candidates"]
    legend: dict[str, str] = {}
    rows = []
    number: dict[str, int] = {}
    for c in candidates:
        first = c["path"] not in number
        number.setdefault(c["path"], c["rank"])
        why = _why(c["reasons"], legend) if first else ""
        role = _role(c, number) if first else ""
        rows.append(
            f"{c['rank']}. `{escape_controls(c['path'])}` L{c['start_line']}-{c['end_line']}"
            f" {c['bytes']:,} B{role}" + (f" · {why}" if why else "")
        )
    head = [
        f"# Plan: {len(candidates)} regions, suggested budget {plan['suggested_budget']:,} bytes",
    ]
    if plan["omitted"]:
        head.append(f"Left out: {len(plan['omitted'])} ({_left_out(plan['omitted'])}).")
    out = list(head)
    shown = 0
    # sizes add line by line: keep the running total (a plan can list thousands of regions)
    used, reserve = _size(out), _size([_legend(legend), "… 99999 more"])
    for row in rows:
        used += _size([row])
        if used + reserve > limit:
            break
        out.append(row)
        shown += 1
    if shown < len(rows):
        out.append(f"… {len(rows) - shown:,} more (the JSON plan lists all)")
    if legend and _size([*out, _legend(legend)]) <= limit:
        out.insert(len(head), _legend(legend))
    while len(out) > 1 and _size(out) > limit:
        out.pop()
    return "\n".join(out) + "\n"


def render_retrieved_md(results: Sequence[Mapping[str, Any]], *, limit: int) -> str:
    """Retrieved excerpts, fresh text whole or not at all, within ``limit`` bytes: a fresh
    excerpt that does not fit is named with its size, never cut."""
    out: list[str] = []
    for r in results:
        handle = escape_controls(r["handle"])
        if r["status"] == "fresh":
            block = [f"## `{handle}` (fresh)", _fence(r["text"], r["path"] or "").rstrip("\n")]
            if _size([*out, *block]) > limit:
                size = len(r["text"].encode("utf-8"))
                block = [f"## `{handle}` (fresh, not shown: {size:,} bytes over the budget)"]
        elif r["status"] == "stale":
            moved = (
                f"; the same lines are now at `{escape_controls(r['moved_to'])}`"
                if r["moved_to"]
                else ""
            )
            block = [f"## `{handle}` (stale: the file changed since the handle was made{moved})"]
        else:
            why = f": {r['error']}" if r.get("error") else ""
            block = [f"## `{handle}` ({r['status']}{why})"]
        out += block
    return "\n".join(out) + "\n"
