"""What a careful engineer searches for first, given only the task text: the paths and
``file:line`` places it names, then its identifiers, then its quoted strings, then its
keywords. Pure: text in, a ``SearchPlan`` out; nothing here knows excerpt's ranking.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Place", "SearchPlan", "Term", "search_plan"]

MAX_IDENTIFIERS = 10
MAX_STRINGS = 3
MAX_KEYWORDS = 6

_SOURCE_EXT = (
    "py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|kts|scala|rb|php|c|h|cc|cpp|hpp|cs|swift|lua|sh"
)
# a path with a source extension, or a dotted/slashed path; an optional :line or ", line N"
_PATH = re.compile(
    rf"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:{_SOURCE_EXT}))(?![\w])"
    r"(?:\"?,? line (\d+)|:(\d+))?"
)
_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_QUOTED = re.compile(r"\"([^\"\n]{8,100})\"|'([^'\n]{8,100})'")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_FENCE = re.compile(r"^\s*(?:```|~~~).*?^\s*(?:```|~~~)[^\n]*$", re.DOTALL | re.MULTILINE)
_CAMEL_INNER = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)+)")
_PLAIN = re.compile(r"(?<![\w.])[A-Za-z]{4,}(?![\w(])")

# words any issue uses; searching them tells nothing about where the change goes
_STOPWORDS = frozenset(
    """
    about above after again against also although always among another anything anyway
    around because been before being below between both cannot could currently does doing
    done down during each either else even ever every example expected following from
    further getting given going happen happens have having here however instead into issue
    itself just know like likely make makes many maybe might more most much must need needs
    never next none note only other otherwise perhaps please possible probably problem quite
    rather really result returns same seems should show shown since some something still
    such sure than that their them then there these they thing things think this those
    though through thus together type under unless until used user uses using very want
    wants well were what when where whether which while will with within without work works
    would true false none null self version line lines file files code correct correctly
    actual behavior behaviour error errors case cases call called calls current test tests
    value values like just also http https www github com doesn isn didn wasn aren shouldn
    couldn wouldn fixes fixed closes closed updated
    """.split()  # noqa: SIM905 (a word list reads better as prose)
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Place:
    """A path the task names, with the line it names when it gives one."""

    path: str
    line: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Term:
    """One search: ``text`` as a fixed string; ``kind`` identifier, string or keyword;
    ``ignore_case`` for keywords, which prose writes in any case."""

    text: str
    kind: str
    ignore_case: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchPlan:
    places: tuple[Place, ...]
    terms: tuple[Term, ...]
    about_tests: bool


def search_plan(task: str) -> SearchPlan:
    """The places and searches of a task, in the order a careful engineer tries them."""
    task = _COMMENT.sub(" ", task)  # an issue template's hidden guidance
    title, _, _ = task.strip().partition("\n")
    places = _places(task)
    named = {p.path.rsplit("/", 1)[-1].rsplit(".", 1)[0] for p in places}
    found = _identifiers(title) + _identifiers(task)
    identifiers = [i for i in dict.fromkeys(found) if i not in named][:MAX_IDENTIFIERS]
    strings = _strings(task)[:MAX_STRINGS]
    taken = {i.lower() for i in identifiers} | {p.lower() for p in named}
    keywords = [k for k in _keywords(title, task) if k not in taken][:MAX_KEYWORDS]
    terms = (
        [Term(text=i, kind="identifier") for i in identifiers]
        + [Term(text=s, kind="string") for s in strings]
        + [Term(text=k, kind="keyword", ignore_case=True) for k in keywords]
    )
    about = re.search(r"\btests?\b|\bpytest\b|\bunittest\b", task, re.IGNORECASE) is not None
    return SearchPlan(places=tuple(places), terms=tuple(terms), about_tests=about)


def _places(task: str) -> list[Place]:
    seen: dict[str, Place] = {}
    for match in _PATH.finditer(task):
        path = match.group(1).lstrip("./")
        if not path:
            continue
        line = match.group(2) or match.group(3)
        place = Place(path=path, line=int(line) if line else None)
        if path not in seen or (seen[path].line is None and place.line is not None):
            seen[path] = place
    return list(seen.values())


def _is_identifier(word: str) -> bool:
    """A word that reads as code: snake_case, camelCase or CamelCase with an inner capital,
    or a dotted name."""
    if len(word) < 3 or word.lower() in _STOPWORDS:
        return False
    return "_" in word.strip("_") or "." in word or bool(_CAMEL_INNER.search(word))


def _identifiers(task: str) -> list[str]:
    found: list[str] = []

    def add(word: str) -> None:
        word = word.strip("._")
        if not word or len(word) < 3 or word in found:
            return
        found.append(word)

    for match in _BACKTICK.finditer(_FENCE.sub(" ", task)):
        words = _WORD.findall(match.group(1))
        for word in words:  # a short span is code even when plain; a long one is prose
            _add_dotted(word, add, loose=len(words) <= 2)
    for flag in _FLAG.findall(task):  # a command-line option, as written and as a name
        add(flag)
        add(flag.replace("-", "_"))
    for word in _WORD.findall(task):
        if _is_identifier(word):
            _add_dotted(word, add, loose=False)
    return found


def _add_dotted(word: str, add: Callable[[str], None], *, loose: bool) -> None:
    """A dotted name searched by its last part (the thing defined), then its other code-like
    parts; a backticked word counts as code even when plain."""
    parts = [p for p in word.split(".") if p]
    if not parts:
        return
    last = parts[-1]
    if (loose and last.lower() not in _STOPWORDS and len(last) >= 3) or _is_identifier(last):
        add(last)
    for part in parts[:-1]:
        if _is_identifier(part) and len(part) >= 4:
            add(part)


def _strings(task: str) -> list[str]:
    out: list[str] = []
    for match in _QUOTED.finditer(task):
        text = (match.group(1) or match.group(2)).strip()
        letters = sum(c.isalpha() or c == " " for c in text)
        if " " in text and letters >= 0.85 * len(text) and text not in out:
            out.append(text)
    return out


def _keywords(title: str, task: str) -> list[str]:
    """Plain words of four letters or more, not stop words: the title's first, in its
    order, then the body's by how often it uses them."""

    def usable(word: str) -> bool:
        return word.lower() not in _STOPWORDS

    ordered: list[str] = []
    for word in _PLAIN.findall(title):
        if usable(word) and word.lower() not in ordered:
            ordered.append(word.lower())
    counts = Counter(w.lower() for w in _PLAIN.findall(task) if usable(w))
    for word, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if word not in ordered:
            ordered.append(word)
    return ordered
