"""Score files for a task: every signal of SPEC §3.2 as a pure function, then fusion.

Signals add to a file's score and each leaves a ``Reason``; pins (changed paths, stack-trace
frames, named paths) also lift a file into a tier that outranks any score. Order is
deterministic: tier, score, then path. Reasons never quote repository text: their details are
built from the task's own words and fixed phrases.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from excerpt.index.languages import PARSED_LANGUAGES
from excerpt.index.tokens import terms
from excerpt.index.view import FileInfo, IndexView
from excerpt.rank.task import Task
from excerpt.risk import concepts_from_query

__all__ = ["CHANGED_GAIN", "SIGNALS", "Anchor", "Candidate", "Reason", "rank_files"]

SIGNALS = ("lexical", "path", "stack_frame", "defines", "graph", "demoted")

_LEXICAL_LIMIT = 120
_LEXICAL_GAIN, _TITLE_GAIN = 3.0, 2.0
_MAX_TITLE_TERMS = 32
# A name in the title is what the task is about; one seen only in a code sample or a
# traceback is mostly something the author's code uses.
_TITLE_NAME, _CODE_ONLY_NAME = 2.0, 0.3
_MAX_QUERY_TERMS = 64
_SEEDS = 6
_GRAPH_FLOOR_RANK = 8
_TIER_CHANGED, _TIER_PINNED = 3, 2
CHANGED_GAIN = 4.0  # a changed path's score gain (its tier puts it first anyway)


@dataclass(frozen=True, slots=True)
class Reason:
    signal: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"signal": self.signal, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Anchor:
    """Lines a pack should show for a file: a frame's line, a named symbol's span."""

    start_line: int
    end_line: int
    weight: float
    signal: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    path: str
    score: float
    tier: int
    reasons: tuple[Reason, ...]
    anchors: tuple[Anchor, ...]


@dataclass
class _Acc:
    score: float = 0.0
    tier: int = 0
    reasons: list[Reason] = field(default_factory=list)
    anchors: list[Anchor] = field(default_factory=list)

    def add(self, score: float, reason: Reason, tier: int = 0) -> None:
        self.score += score
        self.tier = max(self.tier, tier)
        if reason not in self.reasons:
            self.reasons.append(reason)


def rank_files(
    task: Task,
    view: IndexView,
    *,
    changed: Sequence[str] = (),
    edges: Sequence[tuple[str, str, str]] | None = None,
    limit: int = 80,
    without: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """Ranked candidate files for ``task``; ``edges`` replaces the index's graph if given.

    ``without`` names signals to leave out (``SIGNALS``), for ablation measurements.
    """
    files = {p: f for p, f in view.files().items() if f.status is None}
    acc: dict[str, _Acc] = defaultdict(_Acc)
    if "lexical" not in without:
        _lexical(task, view, files, acc)
    by_name = _by_name(files)
    if "path" not in without:
        _named_paths(task, files, by_name, acc)
    if "stack_frame" not in without:
        _frames(task, files, by_name, acc)
    if "defines" not in without:
        _named_symbols(task, view, files, acc)
    _changed(changed, files, acc)
    if "graph" not in without:
        _graph(edges if edges is not None else view.edges(), files, acc)
    if "demoted" not in without:
        _demote(task, files, acc)
    if not any(a.score > 0 or a.tier > 0 for a in acc.values()):
        _fallback(files, acc)
    ranked = sorted(acc.items(), key=lambda kv: (-kv[1].tier, -round(kv[1].score, 6), kv[0]))
    return [
        Candidate(
            path=path,
            score=round(a.score, 4),
            tier=a.tier,
            reasons=tuple(a.reasons),
            anchors=tuple(sorted(set(a.anchors), key=lambda x: (x.start_line, x.end_line))),
        )
        for path, a in ranked[:limit]
        if a.score > 0 or a.tier > 0
    ]


def _lexical(task: Task, view: IndexView, files: dict[str, FileInfo], acc: dict[str, _Acc]) -> None:
    df = view.document_frequencies((*task.terms, *task.title_terms))  # one lookup for both
    n = max(len(files), 1)
    present = [t for t in task.terms if df.get(t, 0) > 0]
    # rare terms say the most; keep the rarest when a long task names many
    present.sort(key=lambda t: (df[t], t))
    query = present[:_MAX_QUERY_TERMS]
    hits = view.lexical(query, _LEXICAL_LIMIT)
    if not hits:
        return
    best = max(score for _, score in hits)
    idf = {t: math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1.0) for t in query}
    strongest = ", ".join(sorted(query, key=lambda t: (-idf[t], t))[:5])
    for path, score in hits:
        if path in files:
            acc[path].add(
                _LEXICAL_GAIN * score / best,
                Reason(
                    "lexical", f"BM25 match of task terms over path, symbols and body ({strongest})"
                ),
            )
    _title_lexical(task, view, files, df, acc)


def _title_lexical(
    task: Task,
    view: IndexView,
    files: dict[str, FileInfo],
    df: dict[str, int],
    acc: dict[str, _Acc],
) -> None:
    """An issue's title says in a few words what the body says at length: its terms are
    matched again on their own (measured: +3.7 Acc@5 on the development issues)."""
    query = [t for t in task.title_terms if df.get(t, 0) > 0][:_MAX_TITLE_TERMS]
    hits = view.lexical(query, _LEXICAL_LIMIT * 2)
    if not hits:
        return
    best = max(score for _, score in hits)
    reason = Reason("lexical", f"BM25 match of the task's first line ({', '.join(query[:5])})")
    for path, score in hits:
        if path in files:
            acc[path].add(_TITLE_GAIN * score / best, reason)


def _match_paths(mention: str, files: Iterable[str], by_name: dict[str, list[str]]) -> list[str]:
    mention = mention.strip().removeprefix("./")
    if not mention:
        return []
    if mention in files:
        return [mention]
    same_name = by_name.get(posixpath.basename(mention), [])
    if "/" in mention:
        suffix = [p for p in same_name if p.endswith("/" + mention)]
        return suffix if len(suffix) <= 5 else []
    return same_name if len(same_name) <= 3 else []


def _by_name(files: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for path in sorted(files):
        out[posixpath.basename(path)].append(path)
    return out


def _named_paths(
    task: Task, files: dict[str, FileInfo], by_name: dict[str, list[str]], acc: dict[str, _Acc]
) -> None:
    if not task.paths and not task.modules:
        return
    for module in task.modules:
        same_name = by_name.get(posixpath.basename(module), [])
        # a package's __init__ is where imports land, rarely where the change is
        gain = 0.5 if module.endswith("__init__.py") else 1.5
        for path in (p for p in same_name if p == module or p.endswith("/" + module)):
            acc[path].add(gain, Reason("path", "module named by a dotted name in the task"))
    for mention in task.paths:
        # a bare file name ("manage.py", "setup.cfg") is often generic talk; a path is not
        named = "/" in mention
        for path in _match_paths(mention, files, by_name):
            # a test or a test's data named in an issue is where the failure shows, rarely
            # where the change goes: counted, not pinned
            pinned = named and not (files[path].is_test or _TEST_DATA.search(path))
            reason = Reason("path", "path or file name named in the task")
            acc[path].add(5.0 if pinned else 2.0, reason, _TIER_PINNED if pinned else 0)


def _frame_path(
    frame_path: str, files: dict[str, FileInfo], by_name: dict[str, list[str]]
) -> str | None:
    """The workspace file a frame names: the longest indexed path that ends the frame's path;
    a bare file name (``store_test.go:7``) when exactly one file has that name."""
    normalised = frame_path
    while normalised.startswith("./"):
        normalised = normalised[2:]
    same_name = by_name.get(posixpath.basename(normalised), [])
    if "/" not in normalised:
        return same_name[0] if len(same_name) == 1 else None
    best: str | None = None
    for path in same_name:
        matches = normalised == path or normalised.endswith("/" + path)
        if matches and (best is None or len(path) > len(best)):
            best = path
    return best


def _frames(
    task: Task, files: dict[str, FileInfo], by_name: dict[str, list[str]], acc: dict[str, _Acc]
) -> None:
    if not task.frames:
        return
    # Python prints the innermost frame last ("most recent call last"); JS, Java, Go first.
    innermost_last = "most recent call last" in task.text
    count = len(task.frames)
    inside: list[tuple[int, str, int]] = []  # (depth, path, line): deeper is nearer the failure
    for i, frame in enumerate(task.frames):
        found = _frame_path(frame.path, files, by_name)
        if found is None or frame.line > files[found].lines:
            continue  # a library frame outside the workspace, or a line the file lacks
        inside.append((i if innermost_last else count - 1 - i, found, frame.line))
    # Every in-repository frame is pinned (pinning only the innermost ones was measured and
    # cost Acc@1); frames nearer the failure weigh a little more.
    for depth, path, line in inside:
        acc[path].add(
            6.0 + 0.5 * depth / max(count, 1),
            Reason("stack_frame", "pinned by a stack-trace frame or file:line reference"),
            _TIER_PINNED,
        )
        acc[path].anchors.append(Anchor(line, line, 1.0, "stack_frame"))


def _named_symbols(
    task: Task, view: IndexView, files: dict[str, FileInfo], acc: dict[str, _Acc]
) -> None:
    if not task.identifiers:
        return
    dotted = set(re.findall(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+", task.text))
    common = _everyday_names(task, view, len(files), dotted)
    found = view.symbols_named([name for name in task.identifiers if name not in common])
    defining: dict[str, set[str]] = defaultdict(set)
    for sym in found:
        defining[sym.name].add(sym.path)
    gains: dict[tuple[str, str], float] = {}
    for sym in found:
        spread = len(defining[sym.name])
        if sym.path not in files or spread > 12:
            continue  # a name defined everywhere (``get``, ``__init__``) locates nothing
        exact = any(d == sym.qualname or d.endswith("." + sym.qualname) for d in dotted)
        where = "task"
        # one name counts once per file, however often the file defines it
        gain = (4.0 if exact else 3.0) / spread
        if sym.name in task.title_words:
            gain *= _TITLE_NAME
            where = "the task's first line"
        elif sym.name not in task.prose_words:
            gain *= _CODE_ONLY_NAME
            where = "the task's code or traceback"
        detail = f"defines {sym.qualname if exact else sym.name} named in {where}"
        key = (sym.path, sym.name)
        if gain > gains.get(key, 0.0):
            acc[sym.path].score += gain - gains.get(key, 0.0)
            gains[key] = gain
        acc[sym.path].add(0.0, Reason("defines", detail))
        weight = 1.0 if exact else 0.9
        acc[sym.path].anchors.append(Anchor(sym.start_line, sym.end_line, weight, "defines"))


def _everyday_names(task: Task, view: IndexView, n: int, dotted: set[str]) -> set[str]:
    """Names the task writes as plain capitalised words in its prose (``Sphinx version 3.5``,
    not ``Strings.replace`` or a quoted name) whose word most of the repository's files hold:
    the project's own name or an everyday word, not a pointer to where something is defined
    (development issues: Acc@1 46.0 -> 48.4, MRR 67.6 -> 69.4)."""
    coded = {part for name in dotted for part in name.split(".")}
    coded |= set(re.findall(r"`([^`\s]+)`", task.text))
    plain = {
        name: terms(name)
        for name in task.identifiers
        if name.isalpha() and name[:1].isupper() and name[1:].islower() and name not in coded
    }
    if not plain:
        return set()
    df = view.document_frequencies(sorted({t for ts in plain.values() for t in ts}))
    return {name for name, ts in plain.items() if ts and min(df.get(t, 0) for t in ts) > n / 2}


def _changed(changed: Sequence[str], files: dict[str, FileInfo], acc: dict[str, _Acc]) -> None:
    for path in changed:
        if path in files:
            acc[path].add(
                CHANGED_GAIN,
                Reason("changed", "changed in the working tree or named as changed"),
                _TIER_CHANGED,
            )


_OVERVIEW = re.compile(
    r"^(readme(\.\w+)?|pyproject\.toml|setup\.py|package\.json|go\.mod|cargo\.toml|pom\.xml"
    r"|build\.gradle(\.kts)?|makefile)$",
    re.I,
)


def _fallback(files: dict[str, FileInfo], acc: dict[str, _Acc]) -> None:
    """Nothing in the task locates anything: offer the repository's own overview files."""
    overview = sorted(
        (p for p in files if _OVERVIEW.match(posixpath.basename(p))),
        key=lambda p: (p.count("/"), not posixpath.basename(p).lower().startswith("readme"), p),
    )
    for i, path in enumerate(overview[:4]):
        acc[path].add(
            0.1 / (i + 1), Reason("fallback", "nothing in the task matched: repository overview")
        )


_RELATION = {
    ("imports", True): "imported by a top-ranked file",
    ("imports", False): "imports a top-ranked file",
    ("tests", True): "a test of a top-ranked file",
    ("tests", False): "source tested by a top-ranked file",
}


def _graph(
    edges: Sequence[tuple[str, str, str]], files: dict[str, FileInfo], acc: dict[str, _Acc]
) -> None:
    ranked = sorted(acc.items(), key=lambda kv: (-kv[1].tier, -kv[1].score, kv[0]))
    seeds = {path: a.score for path, a in ranked[:_SEEDS] if a.score > 0}
    if not seeds:
        return
    fanout: dict[str, int] = defaultdict(int)
    for src, dst, _ in edges:
        for seed, other in ((src, dst), (dst, src)):
            if seed in seeds and other in files:
                fanout[seed] += 1
    boosts: dict[str, tuple[float, str]] = {}
    for src, dst, kind in edges:
        for seed, other, seed_is_src in ((src, dst, True), (dst, src, False)):
            if seed not in seeds or other not in files or other in seeds:
                continue
            # seed_is_src: the seed imports/tests ``other``
            relation = _RELATION[(kind, seed_is_src if kind == "imports" else not seed_is_src)]
            # A neighbour borrows a little of its seed's strength: never more than a good
            # lexical match of its own would give, and less from a hub (an entry point that
            # imports everything says little about any one of its imports).
            share = 0.15 if kind == "imports" else 0.12
            gain = min(seeds[seed], 2.0) * share / math.sqrt(max(1.0, fanout[seed] / 3.0))
            # and more to a neighbour with evidence of its own than to a bare import
            own = min(acc[other].score / 2.0, 1.0) if other in acc else 0.0
            gain *= 0.25 + 0.75 * own
            if gain > boosts.get(other, (0.0, ""))[0]:
                boosts[other] = (gain, relation)
    # Neighbours reorder what follows; they never overtake a seed, nor push a file out of
    # the first places the lexical and pinned signals chose (what a small budget serves).
    ceiling = min(seeds.values())
    if len(ranked) > _GRAPH_FLOOR_RANK:
        ceiling = min(ceiling, ranked[_GRAPH_FLOOR_RANK - 1][1].score)
    top = {path for path, _ in ranked[:_GRAPH_FLOOR_RANK]}
    for path, (gain, relation) in sorted(boosts.items()):
        a = acc[path]
        if a.tier == 0 and path not in top:
            gain = max(0.0, min(gain, ceiling * 0.99 - a.score))
        if gain > 0:
            a.add(round(gain, 6), Reason("graph", f"one hop in the import graph: {relation}"))


_LOCKS = (
    "package-lock.json|yarn.lock|pnpm-lock.yaml|poetry.lock|Cargo.lock|go.sum|uv.lock"
    "|Pipfile.lock|composer.lock"
)
_DEMOTIONS: tuple[tuple[str, re.Pattern[str], float], ...] = (
    (
        "translation catalog",
        re.compile(r"(^|/)(locale|locales|i18n|l10n|translations)/|\.(po|pot|mo|xliff|xlf)$"),
        0.15,
    ),
    (
        "generated file",
        re.compile(
            r"\.min\.(js|css)$|\.map$|_pb2\.py$|\.pb\.go$|\.generated\.|\.bundle\.js$"
            r"|(^|/)(generated|dist|build|out)/"
        ),
        0.2,
    ),
    ("vendored code", re.compile(r"(^|/)(vendor|third_party|thirdparty|node_modules)/"), 0.2),
    (
        "lock file",
        re.compile(r"(^|/)(" + re.escape(_LOCKS).replace(r"\|", "|") + r")$|\.lock$"),
        0.1,
    ),
    ("fixture or snapshot", re.compile(r"(^|/)(fixtures?|testdata|__snapshots__)/|\.snap$"), 0.3),
    (
        "versioned library copy",
        re.compile(r"-\d+(\.\d+)+(\.min)?\.(js|css)$"),
        0.2,
    ),
    ("repository metadata", re.compile(r"(^|/)\.github/"), 0.2),
)
_TEST_DATA = re.compile(r"(^|/)(tests?|testing|spec)/")
_DOCS = re.compile(
    r"(^|/)(changes|changelog|history|news|authors|contributors|release[-_]?notes)(\.[\w.]+)?$"
    r"|\.(md|rst|txt|adoc)$|(^|/)docs?/",
    re.I,
)


# What describes the project rather than makes it: a changelog holds the words of every task
# and the code of none (development issues in JavaScript, Go, Rust and Java: these files,
# manifests and data files took 144 of the 600 top-3 places while no gold file is one).
_NOTES = re.compile(
    r"(^|/)(?P<word>changes|changelog|history|news|authors|contributors|credits|thanks"
    r"|licen[cs]e|copying|notice|code[-_]of[-_]conduct|contributing|release[-_]?notes)"
    r"([-_.][\w.-]+)?$|(^|/)(?P<dir>release[-_]?notes)/",
    re.I,
)
_EXAMPLES = re.compile(r"(^|/)_?(?P<word>examples?|samples?|demos?|benchmarks?)/", re.I)
_MANIFESTS = re.compile(
    r"(^|/)(package\.json|Cargo\.toml|pom\.xml|go\.mod|build\.gradle(\.kts)?|pyproject\.toml"
    r"|setup\.cfg|Gemfile|composer\.json|deno\.jsonc?)$"
)
_DATA_LANGUAGES = frozenset({"json", "yaml", "toml", "ini", "xml", "gettext", "other"})


def _demote(task: Task, files: dict[str, FileInfo], acc: dict[str, _Acc]) -> None:
    words = set(terms(task.text))  # with the file-kind words the task's terms leave out
    dependencies = "dependencies" in concepts_from_query(task.text)
    for path, a in acc.items():
        if a.tier > 0:
            continue  # what the task or the tree pins is never demoted
        found = next(((lab, f) for lab, pat, f in _DEMOTIONS if pat.search(path)), None)
        label, factor = (
            found or _kind_demotion(task, words, dependencies, path, files.get(path)) or ("", 1.0)
        )
        if label:
            a.score *= factor
            a.reasons.append(Reason("demoted", label))


def _kind_demotion(
    task: Task, words: set[str], dependencies: bool, path: str, info: FileInfo | None
) -> tuple[str, float] | None:
    """Demotion by what a file is for: tests and test data, examples, notes, docs, manifests,
    data. A file the task names by its kind (``changelog``, ``yaml``, ``example``) keeps its
    score, and so does a manifest when the task is about dependencies."""
    name = path.rsplit("/", 1)[-1]
    if info is not None and _TEST_DATA.search(path) and info.language not in PARSED_LANGUAGES:
        return "test data file", 0.3
    if info is not None and info.is_test and not task.mentions_tests:
        return "test file (the task does not mention tests)", 0.6
    if found := _EXAMPLES.search(path):
        return None if _named(words, found.group("word")) else ("example or benchmark code", 0.5)
    if found := _NOTES.search(path):
        named = _named(words, found.group("word") or found.group("dir"))
        return None if named else ("project notes (changelog, licence, credits)", 0.15)
    if _DOCS.search(path):
        return "documentation", 0.6
    if _MANIFESTS.search(path):
        named = dependencies or name.lower() in task.text.lower()
        return None if named else ("package manifest (the task is not about dependencies)", 0.5)
    kind = name.rsplit(".", 1)[1].lower() if "." in name else None
    if info is not None and info.language in _DATA_LANGUAGES and kind not in words:
        return "data or configuration file", 0.5
    return None


def _named(words: set[str], word: str | None) -> bool:
    """Whether the task uses the word a file's kind is named by (``changelog``, ``examples``)."""
    return word is not None and bool(set(terms(word)) & words)
