"""Which language a path is, and the tree-sitter grammar and queries for the parsed ones."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Final

import tree_sitter as ts
import tree_sitter_go
import tree_sitter_java
import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_rust
import tree_sitter_typescript

__all__ = ["PARSED_LANGUAGES", "Grammar", "grammar", "language_of"]

_EXTENSIONS: Final[dict[str, str]] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp",
    ".rb": "ruby", ".php": "php", ".kt": "kotlin", ".swift": "swift", ".scala": "scala",
    ".sh": "shell", ".bash": "shell", ".sql": "sql", ".md": "markdown", ".rst": "rst",
    ".txt": "text", ".json": "json", ".yml": "yaml", ".yaml": "yaml", ".toml": "toml",
    ".ini": "ini", ".cfg": "ini", ".xml": "xml", ".html": "html", ".htm": "html",
    ".css": "css", ".scss": "css", ".vue": "vue", ".svelte": "svelte", ".po": "gettext",
}  # fmt: skip
_NAMES: Final[dict[str, str]] = {
    "Makefile": "make", "Dockerfile": "dockerfile", "Cargo.lock": "toml", "go.mod": "gomod",
}  # fmt: skip

PARSED_LANGUAGES: Final = ("python", "javascript", "typescript", "tsx", "go", "rust", "java")


def language_of(path: str) -> str:
    """Language name from the path's extension or file name; ``other`` when unknown."""
    name = path.rsplit("/", 1)[-1]
    if name in _NAMES:
        return _NAMES[name]
    dot = name.rfind(".")
    return _EXTENSIONS.get(name[dot:].lower(), "other") if dot > 0 else "other"


# Imports are not in the shipped tags queries; these are ours.
_IMPORTS: Final[dict[str, str]] = {
    "python": """
        (import_statement) @import
        (import_from_statement) @import
    """,
    "javascript": """
        (import_statement source: (string) @source)
        (export_statement source: (string) @source)
        (call_expression function: (identifier) @fn
            arguments: (arguments . (string) @source) (#eq? @fn "require"))
        (call_expression function: (import) arguments: (arguments . (string) @source))
    """,
    "go": "(import_spec path: (_) @source)",
    "rust": """
        (use_declaration argument: (_) @use)
        (mod_item name: (identifier) @mod !body)
    """,
    "java": """
        (import_declaration) @import
        (package_declaration) @package
    """,
}
_IMPORTS["typescript"] = _IMPORTS["javascript"] + "(import_require_clause source: (string) @source)"
_IMPORTS["tsx"] = _IMPORTS["typescript"]


@dataclass(frozen=True, slots=True)
class Grammar:
    """A loaded grammar with one query for definitions (tags) and imports together.

    One query, because a query cursor's cost is a walk over the whole tree whatever the
    patterns: two queries walk it twice.
    """

    name: str
    language: ts.Language
    query: ts.Query


def _modules(name: str) -> tuple[object, list[ModuleType]]:
    if name == "python":
        return tree_sitter_python.language(), [tree_sitter_python]
    if name == "javascript":
        return tree_sitter_javascript.language(), [tree_sitter_javascript]
    if name in ("typescript", "tsx"):
        lang = (
            tree_sitter_typescript.language_typescript()
            if name == "typescript"
            else tree_sitter_typescript.language_tsx()
        )
        return lang, [tree_sitter_javascript, tree_sitter_typescript]
    if name == "go":
        return tree_sitter_go.language(), [tree_sitter_go]
    if name == "rust":
        return tree_sitter_rust.language(), [tree_sitter_rust]
    if name == "java":
        return tree_sitter_java.language(), [tree_sitter_java]
    raise KeyError(name)


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


@cache
def grammar(name: str) -> Grammar:
    """The grammar of a parsed language (loaded once per process).

    Raises:
        KeyError: ``name`` is not a parsed language.
    """
    lang_ptr, modules = _modules(name)
    language = ts.Language(lang_ptr)
    tags_source = "\n".join(definition_patterns(m.TAGS_QUERY) for m in modules)
    return Grammar(
        name=name,
        language=language,
        query=ts.Query(language, tags_source + "\n" + _IMPORTS[name]),
    )
