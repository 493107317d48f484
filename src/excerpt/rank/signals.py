"""The ranking signals of SPEC §3.2, each a pure function of its inputs to contributions.

A signal reads the task, the index (``IndexView``), the weights and, for the two that
refine a ranking (the graph, demotions), the standing so far; it returns what it adds and
changes nothing. ``excerpt.rank.score`` fuses them in one place, in one order. Reasons never
quote repository text: details are built from the task's own words and fixed phrases.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from excerpt.core import manifests
from excerpt.core.linear import compile_pattern
from excerpt.core.vocabulary import Signal
from excerpt.index.lang import PARSED_LANGUAGES
from excerpt.index.tokens import terms
from excerpt.index.view import FileInfo, IndexView
from excerpt.rank import kinds
from excerpt.rank.task import Task
from excerpt.rank.weights import Weights
from excerpt.risk import concepts_from_query

__all__ = [
    "NAMED_IN_TASK",
    "TIER_CHANGED",
    "TIER_PINNED",
    "Anchor",
    "Contribution",
    "Demotion",
    "Reason",
    "Standing",
    "changed",
    "demotions",
    "fallback",
    "frames",
    "graph",
    "lexical",
    "named_paths",
    "named_symbols",
    "paths_by_name",
]

TIER_CHANGED, TIER_PINNED = 3, 2  # a tier outranks any score: changed, then pinned


@dataclass(frozen=True, slots=True)
class Reason:
    signal: Signal
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"signal": self.signal, "detail": self.detail}


NAMED_IN_TASK = Reason("path", "path or file name named in the task")


@dataclass(frozen=True, slots=True)
class Anchor:
    """Lines a pack should show for a file: a frame's line, a named symbol's span."""

    start_line: int
    end_line: int
    weight: float
    signal: str


@dataclass(frozen=True, slots=True)
class Contribution:
    """What a signal adds to one file: score, a reason, a tier, lines to show."""

    path: str
    gain: float
    reason: Reason | None = None
    tier: int = 0
    anchor: Anchor | None = None


@dataclass(frozen=True, slots=True)
class Demotion:
    """A factor on a file's score, for what the file is for."""

    path: str
    factor: float
    reason: Reason


@dataclass(frozen=True, slots=True)
class Standing:
    """A file's score and tier so far (what the graph and demotions refine)."""

    score: float
    tier: int


Files = Mapping[str, FileInfo]


def lexical(task: Task, view: IndexView, files: Files, w: Weights) -> list[Contribution]:
    """BM25 over the task's terms, the rarest first, then over its first line alone."""
    df = view.document_frequencies((*task.terms, *task.title_terms))  # one lookup for both
    n = max(len(files), 1)
    present = [t for t in task.terms if df.get(t, 0) > 0]
    # rare terms say the most; keep the rarest when a long task names many
    present.sort(key=lambda t: (df[t], t))
    query = present[: w.max_query_terms]
    hits = view.lexical(query, w.lexical_limit)
    if not hits:
        return []
    best = max(score for _, score in hits)
    idf = {t: math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1.0) for t in query}
    strongest = ", ".join(sorted(query, key=lambda t: (-idf[t], t))[:5])
    reason = Reason(
        "lexical", f"BM25 match of task terms over path, symbols and body ({strongest})"
    )
    out = [Contribution(p, w.lexical_gain * s / best, reason) for p, s in hits if p in files]
    return out + _title_lexical(task, view, files, df, w)


def _title_lexical(
    task: Task, view: IndexView, files: Files, df: Mapping[str, int], w: Weights
) -> list[Contribution]:
    """An issue's title says in a few words what the body says at length: its terms are
    matched again on their own."""
    query = [t for t in task.title_terms if df.get(t, 0) > 0][: w.max_title_terms]
    hits = view.lexical(query, w.lexical_limit * 2)
    if not hits:
        return []
    best = max(score for _, score in hits)
    reason = Reason("lexical", f"BM25 match of the task's first line ({', '.join(query[:5])})")
    return [Contribution(p, w.title_gain * s / best, reason) for p, s in hits if p in files]


_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _pieces(name: str) -> tuple[str, ...]:
    """Lower-case word pieces of a name (``bash_completionsV2`` → bash, completions, v, 2)."""
    return tuple(p.lower() for p in _PIECES.findall(name))


def scope(task: Task, files: Files, w: Weights) -> list[Contribution]:
    """Files the first line's scope names (``fix(fetch): …`` → ``lib/adapters/fetch.js``):
    by file name, by directory, or by all of the scope's pieces in the file name; a scope
    matching many files says less of each, and past ``scope_max_spread`` nothing."""
    out: list[Contribution] = []
    for word in task.scope:
        want = _pieces(word)
        joined = "".join(want)
        if not joined:
            continue
        by_stem: list[str] = []
        by_dir: list[str] = []
        by_pieces: list[str] = []
        for path, info in files.items():
            if info.is_test or kinds.TEST_DATA.search(path):
                continue  # the scope names the component; its tests follow it
            parts = path.split("/")
            stem = parts[-1].split(".", 1)[0]
            pieces = _pieces(stem)
            if "".join(pieces) == joined:
                by_stem.append(path)
            elif any("".join(_pieces(d)) == joined for d in parts[:-1]):
                by_dir.append(path)
            elif set(want) <= set(pieces):
                by_pieces.append(path)
        reason = Reason("path", f"the first line's scope names it ({word})")
        for hits, gain in (
            (by_stem, w.scope_name_gain),
            (by_dir, w.scope_dir_gain),
            (by_pieces, w.scope_pieces_gain),
        ):
            if hits and len(hits) <= w.scope_max_spread:
                out.extend(Contribution(p, gain / math.sqrt(len(hits)), reason) for p in hits)
    return out


# Files that make a directory a component of its own: a crate, a package, a module, a
# plugin with its own manifest.
_MANIFESTS = manifests.names(kinds=("package",))
# Directory names that say where code sits, not what it is.
_LAYOUT = frozenset(
    {"src", "lib", "libs", "pkg", "pkgs", "packages", "internal", "cmd", "app", "apps",
     "main", "java", "kotlin", "resources", "test", "tests", "spec", "docs", "doc",
     "examples", "example", "crates", "modules", "plugins", "tools", "scripts", "source"}
)  # fmt: skip


def components(
    task: Task, files: Files, by_name: Mapping[str, list[str]], w: Weights
) -> list[Contribution]:
    """Files of a component the task names by its directory's name: a directory below the
    root holding a manifest (a crate, a package, a plugin: ``derive``, ``language-css``), its
    source files at any depth up to the next component. A word of the first line counts
    whole, one of the prose ``component_prose_factor`` of it; a component of many files says
    less of each, and past ``component_max_spread`` nothing. (Every Go directory is a
    package, but taken as components they match everyday words of the shipped suites' tasks,
    ``orders``, ``server``, and cost their savings.)"""
    roots = {posixpath.dirname(p) for m in _MANIFESTS for p in by_name.get(m, ())} - {""}
    title = {"".join(_pieces(t)) for t in task.title_words} - {""}
    prose = {"".join(_pieces(t)) for t in task.prose_words} - {""}
    scoped = {"".join(_pieces(t)) for t in task.scope}
    named: dict[str, float] = {}
    for root in roots:
        name = posixpath.basename(root)
        joined = "".join(_pieces(name))
        if len(joined) < 4 or name.lower() in _LAYOUT or joined in scoped:
            continue
        factor = 1.0 if joined in title else w.component_prose_factor if joined in prose else 0
        if factor:
            named[root] = factor
    if not named:
        return []  # the common case: no walk of the tree
    members: dict[str, list[str]] = defaultdict(list)
    for path, info in files.items():
        if info.is_test or info.language not in PARSED_LANGUAGES or kinds.TEST_DATA.search(path):
            continue  # its source files: not its manifest, data or tests
        owner = posixpath.dirname(path)
        while owner and owner not in roots:
            owner = posixpath.dirname(owner)
        if owner in named:
            members[owner].append(path)
    out: list[Contribution] = []
    for root, paths in sorted(members.items()):
        if len(paths) > w.component_max_spread:
            continue
        reason = Reason("path", f"the task names its component ({posixpath.basename(root)})")
        gain = named[root] * w.component_gain / math.sqrt(len(paths))
        out.extend(Contribution(p, gain, reason) for p in paths)
    return out


def paths_by_name(files: Iterable[str]) -> dict[str, list[str]]:
    """Paths by their last component, each list sorted."""
    out: dict[str, list[str]] = defaultdict(list)
    for path in sorted(files):  # in a few passes when they come sorted (an index's files)
        out[path.rpartition("/")[2]].append(path)
    return out


def _match_paths(mention: str, files: Files, by_name: Mapping[str, list[str]]) -> list[str]:
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


def named_paths(
    task: Task, files: Files, by_name: Mapping[str, list[str]], w: Weights
) -> list[Contribution]:
    """Modules named by dotted names, and paths or file names the task writes."""
    out: list[Contribution] = []
    for module in task.modules:
        same_name = by_name.get(posixpath.basename(module), [])
        # a package's __init__ is where imports land, rarely where the change is
        gain = w.package_init_gain if module.endswith("__init__.py") else w.module_gain
        reason = Reason("path", "module named by a dotted name in the task")
        for path in (p for p in same_name if p == module or p.endswith("/" + module)):
            out.append(Contribution(path, gain, reason))
    for mention in task.paths:
        matched = _match_paths(mention, files, by_name)
        # a bare file name ("manage.py", "setup.cfg") is often generic talk; a path is not,
        # nor the one file a first line opens with (``printer.rs: …``)
        named = "/" in mention or (mention == task.scope_file and len(matched) == 1)
        for path in matched:
            # a test or a test's data named in an issue is where the failure shows, rarely
            # where the change goes: counted, not pinned
            pinned = named and not (files[path].is_test or kinds.TEST_DATA.search(path))
            reason = NAMED_IN_TASK
            gain = w.named_path_pinned_gain if pinned else w.named_path_gain
            out.append(Contribution(path, gain, reason, TIER_PINNED if pinned else 0))
    return out


def _frame_path(frame_path: str, by_name: Mapping[str, list[str]]) -> str | None:
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


def frames(
    task: Task, files: Files, by_name: Mapping[str, list[str]], w: Weights
) -> list[Contribution]:
    """Stack-trace frames and ``file:line`` references inside the workspace, pinned."""
    # Python prints the innermost frame last ("most recent call last"); JS, Java, Go first.
    innermost_last = "most recent call last" in task.text
    count = len(task.frames)
    inside: list[tuple[int, str, int]] = []  # (depth, path, line): deeper is nearer the failure
    for i, frame in enumerate(task.frames):
        found = _frame_path(frame.path, by_name)
        if found is None or frame.line > files[found].lines:
            continue  # a library frame outside the workspace, or a line the file lacks
        inside.append((i if innermost_last else count - 1 - i, found, frame.line))
    reason = Reason("stack_frame", "pinned by a stack-trace frame or file:line reference")
    return [
        Contribution(
            path,
            w.frame_gain + w.frame_depth_gain * depth / max(count, 1),
            reason,
            TIER_PINNED,
            Anchor(line, line, 1.0, "stack_frame"),
        )
        for depth, path, line in inside
    ]


# ``a.b.c`` as written in task text: linear time on any text (``re`` took the square of a
# long word's length here, trying every start inside it).
_DOTTED = compile_pattern(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def named_symbols(task: Task, view: IndexView, files: Files, w: Weights) -> list[Contribution]:
    """Files defining names the task writes, a name counting less the more definitions it
    has (a file gains once per name, however often it defines it; ``class Admin`` nested in
    thirty tests of one file weighs a thirtieth)."""
    if not task.identifiers:
        return []
    dotted = {m.decode() for m in _DOTTED.findall(task.text.encode("utf-8", "surrogatepass"))}
    common = _everyday_names(task, view, len(files), dotted, w)
    opening = task.initial_only - _coded(task, dotted)  # capitalised as any sentence's start
    found = view.symbols_named([name for name in task.identifiers if name not in common])
    defining: dict[str, set[tuple[str, str]]] = defaultdict(set)
    exactly: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for sym in found:
        defining[sym.name].add((sym.path, sym.qualname))  # a property's setter is one
        if any(d == sym.qualname or d.endswith("." + sym.qualname) for d in dotted):
            exactly[sym.name].add((sym.path, sym.qualname))
    gains: dict[tuple[str, str], float] = {}
    out: list[Contribution] = []
    for sym in found:
        exact = (sym.path, sym.qualname) in exactly[sym.name]
        # a name written with its class or module (``Function._eval_evalf``) is as specific
        # as the definitions of that qualified name, however many others share its last part
        spread = len(exactly[sym.name] if exact else defining[sym.name])
        if sym.path not in files or spread > w.defines_max_spread:
            continue  # a name defined everywhere (``get``, ``__init__``) locates nothing
        where = "task"
        gain = (w.defines_exact_gain if exact else w.defines_gain) / spread
        if sym.name in opening:
            gain *= w.opening_name_factor
        if _ERROR_NAME.search(sym.name) and sym.kind in ("class", "type"):
            gain *= w.error_name_factor  # what went wrong, seldom where
        if sym.name in task.title_words:
            gain *= w.title_name_factor
            where = "the task's first line"
        elif sym.name not in task.prose_words:
            gain *= w.code_only_name_factor
            where = "the task's code or traceback"
        key = (sym.path, sym.name)
        if gain > gains.get(key, 0.0):  # the strongest mention of the name, not their sum
            out.append(Contribution(sym.path, gain - gains.get(key, 0.0)))
            gains[key] = gain
        detail = f"defines {sym.qualname if exact else sym.name} named in {where}"
        weight = w.defines_exact_anchor if exact else w.defines_anchor
        if not exact:  # one of many same-named stubs in this file: the file's other lines first
            here = sum(1 for path, _ in defining[sym.name] if path == sym.path)
            weight /= math.sqrt(here)
        anchor = Anchor(sym.start_line, sym.end_line, weight, "defines")
        out.append(Contribution(sym.path, 0.0, Reason("defines", detail), anchor=anchor))
    return out


# an exception's name: a task that names one says what was raised, which seldom is where
_ERROR_NAME = re.compile(r"(?:Error|Exception|Warning|Fault)$")


def _everyday_names(task: Task, view: IndexView, n: int, dotted: set[str], w: Weights) -> set[str]:
    """Names the task writes as plain capitalised words in its prose (``Sphinx version 3.5``,
    not ``Strings.replace`` or a quoted name) whose word most of the repository's files hold:
    the project's own name or an everyday word, not a pointer to where something is defined."""
    coded = _coded(task, dotted)
    plain = {
        name: terms(name)
        for name in task.identifiers
        if name.isalpha() and name[:1].isupper() and name[1:].islower() and name not in coded
    }
    if not plain:
        return set()
    df = view.document_frequencies(sorted({t for ts in plain.values() for t in ts}))
    share = n * w.everyday_share
    return {name for name, ts in plain.items() if ts and min(df.get(t, 0) for t in ts) > share}


def _coded(task: Task, dotted: set[str]) -> set[str]:
    """Names the task writes as code: parts of a dotted name, or quoted in backticks."""
    coded = {part for name in dotted for part in name.split(".")}
    return coded | set(re.findall(r"`([^`\s]+)`", task.text))


def changed(paths: Sequence[str], files: Files, w: Weights) -> list[Contribution]:
    """Paths the change touches: first, in a tier of their own."""
    reason = Reason("changed", "changed in the working tree or named as changed")
    return [Contribution(p, w.changed_gain, reason, TIER_CHANGED) for p in paths if p in files]


def fallback(files: Files, w: Weights) -> list[Contribution]:
    """Nothing in the task locates anything: the repository's own overview files."""
    overview = sorted(
        (p for p in files if kinds.OVERVIEW.match(posixpath.basename(p))),
        key=lambda p: (p.count("/"), not posixpath.basename(p).lower().startswith("readme"), p),
    )
    reason = Reason("fallback", "nothing in the task matched: repository overview")
    return [
        Contribution(path, w.fallback_gain / (i + 1), reason)
        for i, path in enumerate(overview[: w.fallback_files])
    ]


_RELATION = {
    ("imports", True): "imported by a top-ranked file",
    ("imports", False): "imports a top-ranked file",
    ("tests", True): "a test of a top-ranked file",
    ("tests", False): "source tested by a top-ranked file",
}


def graph(
    edges_of: Callable[[Iterable[str]], Sequence[tuple[str, str, str]]],
    files: Files,
    standing: Mapping[str, Standing],
    w: Weights,
) -> list[Contribution]:
    """One hop in the import graph from the strongest files: neighbours reorder what
    follows, never overtake a seed, nor push a file out of the first places. ``edges_of``
    gives the edges with an end in the files asked for (the seeds)."""
    ranked = sorted(standing.items(), key=lambda kv: (-kv[1].tier, -kv[1].score, kv[0]))
    seeds = {path: s.score for path, s in ranked[: w.graph_seeds] if s.score > 0}
    if not seeds:
        return []
    edges = edges_of(seeds)
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
            # a neighbour borrows a little of its seed's strength, less from a hub (an entry
            # point that imports everything says little about any one of its imports)
            share = w.graph_import_share if kind == "imports" else w.graph_test_share
            hub = math.sqrt(max(1.0, fanout[seed] / w.graph_hub_fanout))
            gain = min(seeds[seed], w.graph_seed_cap) * share / hub
            # and more to a neighbour with evidence of its own than to a bare import
            own = min(standing[other].score / 2.0, 1.0) if other in standing else 0.0
            gain *= w.graph_bare_share + (1.0 - w.graph_bare_share) * own
            if gain > boosts.get(other, (0.0, ""))[0]:
                boosts[other] = (gain, relation)
    ceiling = min(seeds.values())
    if len(ranked) > w.graph_floor_rank:
        ceiling = min(ceiling, ranked[w.graph_floor_rank - 1][1].score)
    top = {path for path, _ in ranked[: w.graph_floor_rank]}
    out = []
    for path, (gain, relation) in sorted(boosts.items()):
        now = standing.get(path, Standing(0.0, 0))
        if now.tier == 0 and path not in top:
            gain = max(0.0, min(gain, ceiling * w.graph_ceiling - now.score))
        if gain > 0:
            reason = Reason("graph", f"one hop in the import graph: {relation}")
            out.append(Contribution(path, round(gain, 6), reason))
    return out


def demotions(
    task: Task, files: Files, standing: Mapping[str, Standing], w: Weights
) -> list[Demotion]:
    """Factors for files that describe, generate or test the product rather than make it;
    what the task or the tree pins is never demoted."""
    words = set(terms(task.text))  # with the file-kind words the task's terms leave out
    dependencies = "dependencies" in concepts_from_query(task.text)
    corpora = _sample_corpora(files, w) if any(map(kinds.TEST_DATA.search, standing)) else ()
    out = []
    for path, now in standing.items():
        if now.tier > 0:
            continue
        if corpora and any(path.startswith(c) for c in corpora):
            label = "sample files in many languages (test data)"
            out.append(Demotion(path, w.demote_test_data, Reason("demoted", label)))
            continue
        found = next(
            ((label, getattr(w, f)) for label, pat, f in kinds.DEMOTIONS if pat.search(path)),
            None,
        )
        label, factor = (
            found
            or _kind_demotion(task, words, dependencies, path, files.get(path), w)
            or ("", 1.0)
        )
        if label:
            out.append(Demotion(path, factor, Reason("demoted", label)))
    return out


def _sample_corpora(files: Files, w: Weights) -> tuple[str, ...]:
    """Directories inside a test tree whose files are in ``sample_corpus_languages`` or more
    parsed languages (``tests/syntax-tests/source/``: a highlighter's or a parser's inputs),
    each ending in ``/``. Their files are data for the tests, in whatever language they are
    written, not the product's code or its tests."""
    languages: dict[str, set[str]] = defaultdict(set)
    for path, info in files.items():
        found = kinds.TEST_DATA.search(path)
        if found is None or info.language not in PARSED_LANGUAGES:
            continue
        parts = path[found.end() :].split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            languages[path[: found.end()] + "/".join(parts[:depth]) + "/"].add(info.language)
    many = sorted(d for d, langs in languages.items() if len(langs) >= w.sample_corpus_languages)
    # the outermost only: a corpus's own subdirectories are in it already
    return tuple(d for d in many if not any(d != o and d.startswith(o) for o in many))


def _kind_demotion(
    task: Task,
    words: set[str],
    dependencies: bool,
    path: str,
    info: FileInfo | None,
    w: Weights,
) -> tuple[str, float] | None:
    """Demotion by what a file is for: tests and test data, examples, notes, docs, manifests,
    data. A file the task names by its kind (``changelog``, ``yaml``, ``example``) keeps its
    score, and so does a manifest when the task is about dependencies."""
    if info is not None and kinds.TEST_DATA.search(path) and info.language not in PARSED_LANGUAGES:
        return "test data file", w.demote_test_data
    if info is not None and info.is_test and not task.mentions_tests:
        return "test file (the task does not mention tests)", w.demote_test
    if found := kinds.EXAMPLES.search(path):
        named = _named(words, found.group("word"))
        return None if named else ("example or benchmark code", w.demote_example)
    if found := kinds.NOTES.search(path):
        # a task about the changelog says so in its first line; one that writes "update
        # History.md" further down is doing the bookkeeping of a change made elsewhere
        named = _named(set(task.title_terms), found.group("word") or found.group("dir"))
        return None if named else ("project notes (changelog, licence, credits)", w.demote_notes)
    if kinds.DOCS.search(path):
        return "documentation", w.demote_docs
    return _other_kind(task, words, dependencies, path, info, w)


def _other_kind(
    task: Task,
    words: set[str],
    dependencies: bool,
    path: str,
    info: FileInfo | None,
    w: Weights,
) -> tuple[str, float] | None:
    name = path.rsplit("/", 1)[-1]
    if kinds.MANIFESTS.search(path):
        named = dependencies or name.lower() in task.text.lower()
        label = "package manifest (the task is not about dependencies)"
        return None if named else (label, w.demote_manifest)
    kind = name.rsplit(".", 1)[1].lower() if "." in name else None
    if info is not None and info.language in kinds.DATA_LANGUAGES and kind not in words:
        return "data or configuration file", w.demote_data
    return None


def _named(words: set[str], word: str | None) -> bool:
    """Whether the task uses the word a file's kind is named by (``changelog``, ``examples``)."""
    return word is not None and bool(set(terms(word)) & words)
