"""What a task names: terms, identifiers, paths, and stack-trace or ``file:line`` frames. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

from excerpt.core.linear import compile_pattern
from excerpt.index.tokens import split_identifier

__all__ = ["LineRef", "Task", "analyze_task"]

# A longer task is matched as text by its head and its tail (a log's failure is at its end);
# frames, paths and names are taken from all of it.
_MAX_TASK_CHARS = 200_000
_HEAD_CHARS = _TAIL_CHARS = _MAX_TASK_CHARS // 2

# English words that carry no information about where code lives.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "some",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "too",
        "up",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "also",
        "just",
        "only",
        "get",
        "got",
        "use",
        "used",
        "using",
        "want",
        "need",
        "like",
        "make",
        "see",
        "seems",
    ]
)

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PATHLIKE = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])"
)
_DIRLIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+)")
_DOTFILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*\.[A-Za-z][\w.-]*)")
# File extensions say which language, not where: as terms they match every file.
_EXTENSION_TERMS = frozenset(
    {
        "py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "go", "rs", "java", "kt", "rb",
        "php", "c", "h", "cc", "cpp", "hpp", "cs", "md", "rst", "txt", "json", "yaml", "yml",
        "toml", "ini", "cfg", "html", "css", "scss", "sh",
    }
)  # fmt: skip
# path (group 1) and line (group 2) of a frame; linear-time patterns (RE2 on UTF-8 bytes):
# a backtracking engine takes the square of the length on a task of `a.a.a.…` or `////…`
_FRAMES = tuple(
    compile_pattern(source)
    for source in (
        r'File "([^"\n]+)", line (\d{1,9})',  # Python
        r"\(([^()\s]+\.\w+):(\d{1,9})(?::\d+)?\)",  # JS, Java
        r"(?:-->\s*|at\s+)?([\w./\\~@+-]+\.\w{1,8}):(\d{1,9})(?::\d+)?",
    )
)


@dataclass(frozen=True, slots=True)
class LineRef:
    """A ``path:line`` reference (stack frame, compiler error, log line) as written."""

    path: str
    line: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """The parts of a task the ranker uses."""

    text: str
    terms: tuple[str, ...]  # folded lexical terms, unique, in order of appearance
    identifiers: tuple[str, ...]  # code-looking names (CamelCase, snake_case, dotted parts)
    paths: tuple[str, ...]  # path-looking strings
    modules: tuple[str, ...] = ()  # files dotted names may live in (``a.b.C`` → ``a/b.py``)
    frames: tuple[LineRef, ...]
    mentions_tests: bool
    title_terms: tuple[str, ...] = ()  # folded terms of the first line (an issue's title)
    title_words: frozenset[str] = frozenset()  # words of the first line, as written
    prose_words: frozenset[str] = frozenset()  # words outside code blocks and tracebacks
    scope: tuple[str, ...] = ()  # the first line's scope: ``fix(css): …``, ``[router] …``
    # a file the first line opens with as its subject: ``printer.rs: …``, ``lib/x.js: …``
    scope_file: str | None = None
    # capitalised words written only where any word is capitalised (``When a …``, ``Admin
    # changelist: …``): their capital says nothing about code
    initial_only: frozenset[str] = frozenset()
    chars: int = 0  # characters of the task as given
    shortened: bool = False  # matched as text by its head and tail only (see ``chars``)


def _code_like(word: str) -> bool:
    return (
        "_" in word
        or any(c.isupper() for c in word[1:])
        or (word[:1].isupper() and any(c.islower() for c in word) and len(word) > 3)
    )


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def analyze_task(text: str) -> Task:
    """Pull terms, identifiers, paths and frames out of free task text (an issue, a log).

    A task longer than 200,000 characters is matched as text by its first and last 100,000
    (``shortened``); its frames, paths and names come from all of it.
    """
    whole, chars = text, len(text)
    shortened = chars > _MAX_TASK_CHARS
    if shortened:
        text = text[:_HEAD_CHARS] + "\n…\n" + text[-_TAIL_CHARS:]
    frames = _unique_frames(whole)
    # Addresses name other sites, not this tree; their hashes and slugs are noise as terms.
    prose = _URL.sub(" ", whole)
    paths = [m.group(1) for m in _PATHLIKE.finditer(prose)]
    paths += [m.group(1) for m in _DIRLIKE.finditer(prose) if "/" in m.group(1)]
    paths += [m.group(1) for m in _DOTFILE.finditer(prose)]
    identifiers: list[str] = []
    modules: list[str] = []
    for match in _IDENT.finditer(prose):
        parts = match.group(0).split(".")
        if len(parts) > 1:
            modules.extend(_module_paths(parts))
        for i, word in enumerate(parts):
            if _identifier(prose, match, word, last=i == len(parts) - 1):
                identifiers.append(word)
    terms: list[str] = []
    matched = _URL.sub(" ", text) if shortened else prose
    for match in _IDENT.finditer(matched):
        for word in match.group(0).split("."):
            if word.lower() not in STOPWORDS and not _HEXISH.fullmatch(word):
                terms.extend(split_identifier(word))
    lowered = text.lower()
    title = next((line for line in text.splitlines() if line.strip()), "")
    title = _TITLE_METADATA.sub(" ", title)
    title_terms = [t for w in _WORD.findall(_URL.sub(" ", title)) for t in split_identifier(w)]
    return Task(
        text=text,
        terms=_unique([t for t in terms if t not in STOPWORDS and t not in _EXTENSION_TERMS]),
        identifiers=_unique([i for i in identifiers if len(i) > 2]),
        paths=_unique([_clean_path(p) for p in paths if not p.startswith(("http", "www."))]),
        modules=_unique(modules),
        frames=frames,
        mentions_tests=_about_tests(lowered, paths, identifiers),
        title_terms=_unique(
            [t for t in title_terms if t not in STOPWORDS and t not in _EXTENSION_TERMS]
        ),
        title_words=frozenset(_WORD.findall(title)),
        prose_words=frozenset(_WORD.findall(_prose(text))),
        scope=_scope(title),
        scope_file=_scope_file(title),
        initial_only=_initial_only(prose),
        chars=chars,
        shortened=shortened,
    )


# what may stand before a word that opens a sentence, a heading or a list item
_OPENERS = frozenset(".!?:;*-#>|\n")


def _initial_only(text: str) -> frozenset[str]:
    """Title-case words (``Admin``, ``When``) that ``text`` writes only at the start of a
    sentence, line or list item. Linear: one pass, a bounded look back per word."""
    initial: set[str] = set()
    elsewhere: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group(0)
        if not (word.isalpha() and word[:1].isupper() and word[1:].islower()):
            continue
        before = text[max(0, match.start() - 8) : match.start()].rstrip(" \t")
        (initial if not before or before[-1] in _OPENERS else elsewhere).add(word)
    return frozenset(initial - elsewhere)


# A short message's scope names its component: a conventional commit's ``type(scope):`` or
# an issue title's ``[scope]``. (A leading ``name:`` is also written as a scope, but as often
# opens a sentence about a class; ranking it first lost more than it won on both sets.)
# Anchored and bounded: constant time on any first line.
_SCOPED = re.compile(r"\s{0,8}(?:[A-Za-z]{2,12}\(([^()\n]{1,60})\)!?:|\[([^\[\]\n]{1,40})\])\s")
# Words in a scope's place that name no component: change types, labels, error names.
_NOT_SCOPES = frozenset(
    [
        "feat",
        "feature",
        "features",
        "fix",
        "fixes",
        "fixed",
        "bug",
        "bugfix",
        "hotfix",
        "docs",
        "doc",
        "chore",
        "refactor",
        "perf",
        "test",
        "tests",
        "testing",
        "build",
        "ci",
        "style",
        "revert",
        "release",
        "wip",
        "breaking",
        "deps",
        "dep",
        "dependencies",
        "security",
        "lint",
        "note",
        "notes",
        "question",
        "proposal",
        "rfc",
        "rfe",
        "optimization",
        "optimisation",
        "performance",
        "regression",
        "todo",
        "update",
        "updates",
        "change",
        "changes",
        "misc",
        "meta",
        "cleanup",
        "typo",
        "typos",
        "example",
        "examples",
        "readme",
        "changelog",
        "help",
        "draft",
        "enhancement",
        "improvement",
        "minor",
        "major",
        "patch",
        "all",
        "error",
        "warning",
        "info",
        "debug",
    ]
)
_VERSION = re.compile(r"v?\d[\w.]*")
# A first line that opens with a file's name and a colon is a change to that file (a commit
# convention of many projects): unlike a bare ``name:``, the extension says it is a file.
_FILE_SCOPE = re.compile(r"\s{0,8}((?:[\w.-]{1,60}/){0,8}[\w-]{1,60}\.[A-Za-z][A-Za-z0-9]{0,7}):\s")


def _scope_file(title: str) -> str | None:
    found = _FILE_SCOPE.match(title)
    return found.group(1) if found else None


def _scope(title: str) -> tuple[str, ...]:
    """The scope words of a task's first line (``fix(types,fetch): …`` → types, fetch)."""
    found = _SCOPED.match(title)
    if found is None:
        return ()
    raw = next(g for g in found.groups() if g)
    words = [w for w in re.split(r"[,/\s]+", raw.strip()) if w]
    return tuple(w for w in words if w.lower() not in _NOT_SCOPES and not _VERSION.fullmatch(w))


# "(from: Codex, to: next agent)": labelled metadata in a first line, not its subject
_TITLE_METADATA = re.compile(r"\([^()]*:[^()]*\)")
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
_CODE_LINE = (">>>", "...", 'File "', "Traceback", "$ ")


def _prose(text: str) -> str:
    """The task without its code: fenced blocks, indented blocks, REPL and traceback lines.
    What the author writes about is in the prose; a code sample names much it only uses."""
    kept = []
    for line in _FENCED.sub(" ", text).splitlines():
        if line.startswith(("    ", "\t")) or line.lstrip().startswith(_CODE_LINE):
            continue
        kept.append(line)
    return "\n".join(kept)


_URL = re.compile(r"\b(?:https?|ftp)://\S+")
_HEXISH = re.compile(r"(?=[a-z]*\d)[0-9a-f]{7,}", re.I)  # commit ids, hashes


def _identifier(text: str, match: re.Match[str], word: str, *, last: bool) -> bool:
    """A word names code when it looks like code, is quoted, or is called (``name(``).

    ``subprocess.run`` names ``run`` only weakly; ``parse_duration()`` and ``URLValidator``
    name themselves; lower-case module parts of a dotted path name files, not symbols.
    """
    if _code_like(word):
        return True
    called = last and text[match.end() : match.end() + 1] == "("
    return called or _backticked(text, match.start())


def _module_paths(parts: list[str]) -> list[str]:
    """Files a dotted name may live in: ``django.core.validators.URLValidator`` →
    ``django/core/validators.py``; ``com.shop.Order`` → ``com/shop/Order.java``."""
    lower = [p for p in parts if p.islower()]
    out = []
    if len(lower) >= 2:
        out.append("/".join(lower) + ".py")
        out.append("/".join(lower) + "/__init__.py")
    if len(parts) >= 3 and parts[-1][:1].isupper() and all(p.islower() for p in parts[:-1]):
        out.append("/".join(parts) + ".java")
    return out


_TEST_TALK = re.compile(
    r"\b(test suite|test case|testcase|unit tests?|failing tests?|flaky|test fixture"
    r"|tests? (?:fails?|failed|failing|pass|passes)|add(?:ing)? (?:a )?tests?"
    r"|pytest|unittest|jest|spec)\b"
)


def _about_tests(lowered: str, paths: list[str], identifiers: list[str]) -> bool:
    """Whether the task is about tests: names a test file or test function, or talks about
    the test suite. A passing "I wrote a test" in an issue is not enough."""
    if any("test" in p.lower() for p in paths):
        return True
    if any(i.startswith(("test_", "Test")) for i in identifiers):
        return True
    return bool(_TEST_TALK.search(lowered))


def _clean_path(path: str) -> str:
    """Drop a leading ``./`` (not the dot of a dotfile) and a sentence's closing period."""
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip(".")


def _backticked(text: str, start: int) -> bool:
    return start > 0 and text[start - 1] in "`'\""


def _unique_frames(text: str) -> tuple[LineRef, ...]:
    found: dict[tuple[str, int], LineRef] = {}
    data = text.encode("utf-8", "surrogatepass")
    for pattern in _FRAMES:
        for spans in pattern.spans(data):
            (ps, pe), (ls, le) = spans[1], spans[2]
            raw = data[ps:pe].decode("utf-8", "surrogatepass")
            path = raw.replace("\\\\", "/").replace("\\", "/")
            line = int(data[ls:le])
            if line > 0 and (path, line) not in found:
                found[(path, line)] = LineRef(path=path, line=line)
    return tuple(found.values())
