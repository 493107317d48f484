"""Symbols and imports of one file from its tree-sitter syntax tree. Pure: bytes in, records out.

The driver is the same for every language; what differs (which captures are imports, which
nodes lend names to the definitions inside them) comes from the language's registry record.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from excerpt.index.lang import by_name, grammar
from excerpt.index.lang.base import Import, Language, node_text

__all__ = ["Extraction", "Import", "Symbol", "extract"]

_MATCH_LIMIT = 4096
# Unclosed brackets beyond this and tree-sitter's error recovery nests them one in another; a
# query over that tree takes the square of the depth (120,000 `(`: 13 s). Such a file is not
# queried: it keeps its text in the index, without symbols.
_MAX_UNCLOSED = 4096
_PAIRS = ((b"(", b")"), (b"[", b"]"), (b"{", b"}"))
_KIND_PRIORITY = {"method": 0, "class": 1, "interface": 1, "module": 1, "type": 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class Symbol:
    """A definition: 1-based inclusive line span, qualified by its enclosing definitions."""

    kind: str
    name: str
    qualname: str
    start_line: int
    end_line: int

    def __post_init__(self) -> None:
        if not 1 <= self.start_line <= self.end_line:
            raise ValueError(f"bad span {self.start_line}-{self.end_line}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Extraction:
    """Everything the parser learned about one file."""

    symbols: tuple[Symbol, ...] = ()
    imports: tuple[Import, ...] = ()
    package: str | None = None


def extract(language: str, data: bytes) -> Extraction:
    """Definitions and imports of ``data`` parsed as ``language``; empty for unparsed ones.

    Total for any input: tree-sitter recovers from syntax errors, and spans come from the tree;
    bounded in time: a file with more than ``_MAX_UNCLOSED`` unclosed brackets of one kind is
    not queried.
    """
    lang = by_name(language)
    if lang is None or not data or _unclosed(data) > _MAX_UNCLOSED:
        return Extraction()
    g = grammar(language)
    tree = ts.Parser(g.language).parse(lang.prepare(data) if lang.prepare else data)
    root = tree.root_node
    definitions: list[dict[str, list[ts.Node]]] = []
    others: list[dict[str, list[ts.Node]]] = []
    for _, captures in ts.QueryCursor(g.query, match_limit=_MATCH_LIMIT).matches(root):
        (definitions if "name" in captures else others).append(captures)
    imports, package = _imports(lang, others)
    return Extraction(symbols=_symbols(lang, definitions), imports=imports, package=package)


def _unclosed(data: bytes) -> int:
    """How many more opening than closing brackets of one kind ``data`` holds."""
    return max(data.count(o) - data.count(c) for o, c in _PAIRS)


def _line_span(node: ts.Node) -> tuple[int, int]:
    start = node.start_point.row + 1
    end_row = node.end_point.row
    # a node ending at column 0 ends on the previous line's terminator
    if node.end_point.column == 0 and end_row > node.start_point.row:
        end_row -= 1
    return start, max(start, end_row + 1)


@dataclass(slots=True)
class _Def:
    node: ts.Node
    outer: ts.Node
    kind: str
    name: str


def _symbols(lang: Language, matches: list[dict[str, list[ts.Node]]]) -> tuple[Symbol, ...]:
    defs: dict[tuple[int, int], _Def] = {}
    for captures in matches:
        names = captures["name"]
        if names[0].is_missing or not node_text(names[0]):  # a placeholder from error recovery
            continue
        for cap, nodes in captures.items():
            if not cap.startswith("definition."):
                continue
            node = nodes[0]
            kind = cap.removeprefix("definition.")
            key = (node.start_byte, node.end_byte)
            old = defs.get(key)
            if old is None or _KIND_PRIORITY.get(kind, 9) < _KIND_PRIORITY.get(old.kind, 9):
                defs[key] = _Def(node, _outer(lang, node), kind, node_text(names[0]))
    ordered = sorted(defs.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte))
    return tuple(_qualify(lang, ordered))


def _outer(lang: Language, node: ts.Node) -> ts.Node:
    """The node whose lines an excerpt of this definition should cover (decorators included)."""
    parent = node.parent
    if parent is not None and parent.type in lang.wrappers:
        return parent
    if node.type in lang.declarators and parent is not None:
        return parent
    return node


def _qualify(lang: Language, defs: list[_Def]) -> list[Symbol]:
    out: list[Symbol] = []
    stack: list[tuple[int, int, str, str]] = []  # (start_byte, end_byte, qualname, kind)
    for d in defs:
        while stack and stack[-1][1] <= d.node.start_byte:
            stack.pop()
        prefix = stack[-1][2] if stack else ""
        container = _container(lang, d.node)
        if container is not None and (not stack or container[1] > stack[-1][0]):
            prefix = f"{prefix}.{container[0]}" if prefix else container[0]
        owner = lang.owner(d.node, d.kind) if lang.owner is not None else None
        prefix = owner or prefix
        kind = d.kind
        if kind == "function" and stack and stack[-1][3] in ("class", "interface"):
            kind = "method"
        qualname = f"{prefix}.{d.name}" if prefix else d.name
        start, end = _line_span(d.outer)
        out.append(
            Symbol(kind=kind, name=d.name, qualname=qualname, start_line=start, end_line=end)
        )
        stack.append((d.node.start_byte, d.node.end_byte, qualname, kind))
    return out


def _container(lang: Language, node: ts.Node) -> tuple[str, int] | None:
    """The nearest enclosing container's name and start byte (see ``Language.container``)."""
    if lang.container is None:
        return None
    parent = node.parent
    while parent is not None:
        name = lang.container(parent)
        if name:
            return name, parent.start_byte
        parent = parent.parent
    return None


def _imports(
    lang: Language, matches: list[dict[str, list[ts.Node]]]
) -> tuple[tuple[Import, ...], str | None]:
    out: list[Import] = []
    package: str | None = None
    for captures in matches:
        for cap, nodes in captures.items():
            hook = lang.import_hooks.get(cap)
            if hook is not None:
                out.extend(hook(nodes[0]))
            elif cap == "package" and lang.package_hook is not None:
                package = lang.package_hook(nodes[0])
    unique = {(i.module, i.names, i.line, i.kind): i for i in out}
    return tuple(sorted(unique.values(), key=lambda i: (i.line, i.module, i.names))), package
