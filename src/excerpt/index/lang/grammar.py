"""A language's loaded tree-sitter grammar and its one query (definitions and imports)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter as ts

from excerpt.index.lang.base import Language

__all__ = ["Grammar", "definition_patterns", "load_grammar"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Grammar:
    """A loaded grammar with one query for definitions (tags) and imports together.

    One query, because a query cursor's cost is a walk over the whole tree whatever the
    patterns: two queries walk it twice.
    """

    name: str
    language: ts.Language
    query: ts.Query


def definition_patterns(source: str) -> str:
    """The top-level patterns of a tags query that capture a ``@definition.*``.

    Reference patterns are dropped: they are the bulk of the matching cost, and uses are
    found lexically.
    """
    forms: list[str] = []
    depth, start, i, n = 0, -1, 0, len(source)
    while i < n:
        ch = source[i]
        if ch == ";":  # comment to end of line
            i = source.find("\n", i)
            i = n if i < 0 else i
            continue
        if ch == '"':
            i += 1
            while i < n and source[i] != '"':
                i += 2 if source[i] == "\\" else 1
        elif ch in "([":
            if depth == 0:
                start = i
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0 and start >= 0:
                end = i + 1
                # quantifiers or trailing captures attached to the form
                match = re.match(r"(\s*[*+?]|\s*@[\w.]+)*", source[end:])
                end += match.end() if match else 0
                forms.append(source[start:end])
                i = end
                start = -1
                continue
        i += 1
    return "\n".join(form for form in forms if "@definition." in form)


def load_grammar(lang: Language) -> Grammar:
    """Load ``lang``'s grammar wheel and compile its query (definitions, then imports)."""
    language = ts.Language(lang.grammar())
    tags_source = "\n".join(definition_patterns(source) for source in lang.definitions())
    return Grammar(
        name=lang.name,
        language=language,
        query=ts.Query(language, tags_source + "\n" + lang.imports),
    )
