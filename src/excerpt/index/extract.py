"""Symbols and imports of one file from its tree-sitter syntax tree. Pure: bytes in, records out.

The driver is the same for every language; what differs (which captures are imports, which
nodes lend names to the definitions inside them) comes from the language's registry record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tree_sitter as ts

from excerpt.index.lang import by_name, grammar
from excerpt.index.lang.base import Import, Language, node_text

__all__ = ["Extraction", "Symbol", "extract"]

_MATCH_LIMIT = 4096
# Bounds on the shapes whose cost grows with the square of their size (measured on tree-sitter
# 0.26). A file past the first two is omitted as ``too_deep``, never queried, rather than a run
# that takes minutes; the others bound the work on any file.
# - unclosed brackets: error recovery leaves them side by side in one ERROR node, and a run of
#   such unnamed siblings keeps a query state alive per sibling (120,000 `(`: 13 s). Counted
#   on the bytes first (no parse at all), then on the tree, where brackets a comment or string
#   closes still count: the sum of the squares of the unnamed runs is the work the query does.
_MAX_UNCLOSED = 4096
_MAX_UNNAMED_WORK = 1 << 26
# - depth: a query cursor keeps start depths in 16 bits, and past 65,535 levels its matching
#   turns quadratic (40,000 chained calls: 48 s, 200,000 nested objects: over 10 minutes); below
#   that, nested patterns still cost the square of the depth (8,000 nested Rust `impl`s with a
#   function each: 0.9 s). No match starts deeper than this, so definitions deeper are not
#   found; no real file has any (the deepest of 3,500 real ones is 8,194 levels, a generated
#   C table with no definition below level 3), and 2,000 nested JS functions are all found.
_MAX_START_DEPTH = 4096
# - qualified names: a definition nested n deep has an n-part name, and a file of n nested
#   definitions would hold n^2/2 parts; a name keeps its innermost parts up to this length.
_MAX_QUALNAME = 512
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

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled as its fields (workers send every definition of a tree to the writer): a
        # slotted dataclass's own pickling costs twice as much to load
        return (_symbol, (self.kind, self.name, self.qualname, self.start_line, self.end_line))


def _symbol(kind: str, name: str, qualname: str, start_line: int, end_line: int) -> Symbol:
    return Symbol(kind=kind, name=name, qualname=qualname, start_line=start_line, end_line=end_line)


@dataclass(frozen=True, slots=True, kw_only=True)
class Extraction:
    """Everything the parser learned about one file."""

    symbols: tuple[Symbol, ...] = ()
    imports: tuple[Import, ...] = ()
    package: str | None = None
    omitted: str | None = None  # why the file was not parsed: a parse budget ("too_deep")


def extract(language: str, data: bytes) -> Extraction:
    """Definitions and imports of ``data`` parsed as ``language``; empty for unparsed ones.

    Total for any input: tree-sitter recovers from syntax errors, and spans come from the tree.
    Bounded in time, linear in the size of the tree: a file past a parse budget (unclosed
    brackets, see ``_MAX_UNCLOSED``) is not queried and comes back ``omitted="too_deep"``.
    """
    lang = by_name(language)
    if lang is None or not data:
        return Extraction()
    if _unclosed(data) > _MAX_UNCLOSED:
        return Extraction(omitted="too_deep")
    g = grammar(language)
    tree = ts.Parser(g.language).parse(lang.prepare(data) if lang.prepare else data)
    root = tree.root_node
    if root.has_error and _unnamed_work(root) > _MAX_UNNAMED_WORK:
        return Extraction(omitted="too_deep")
    definitions: list[dict[str, list[ts.Node]]] = []
    others: list[dict[str, list[ts.Node]]] = []
    cursor = ts.QueryCursor(g.query, match_limit=_MATCH_LIMIT)
    cursor.set_max_start_depth(_MAX_START_DEPTH)
    for _, captures in cursor.matches(root):
        (definitions if "name" in captures else others).append(captures)
    imports, package = _imports(lang, others)
    return Extraction(symbols=_symbols(lang, root, definitions), imports=imports, package=package)


def _unclosed(data: bytes) -> int:
    """How many more opening than closing brackets of one kind ``data`` holds."""
    return max(data.count(o) - data.count(c) for o, c in _PAIRS)


def _unnamed_work(root: ts.Node) -> int:
    """The sum of the squares of the runs of unnamed siblings inside ERROR nodes: what a query
    over this tree pays for them (ordinary syntax errors leave runs of one or two tokens).

    Found by walking down only into subtrees that hold an error; a query for ERROR nodes
    would itself pay the square of each run.
    """
    work = 0
    stack = [root]
    while stack:
        node = stack.pop()
        error = node.is_error
        run = 0
        for child in node.children:
            if error:
                if child.is_named:
                    work += run * run
                    run = 0
                else:
                    run += 1
            if child.has_error and child.child_count:
                stack.append(child)
        work += run * run
    return work


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
    kind: str
    name: str
    outer: ts.Node | None = None
    container: tuple[str, int] | None = None


def _symbols(
    lang: Language, root: ts.Node, matches: list[dict[str, list[ts.Node]]]
) -> tuple[Symbol, ...]:
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
                defs[key] = _Def(node, kind, node_text(names[0]))
    ordered = sorted(defs.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte))
    _place(lang, root, ordered)
    return tuple(_qualify(lang, ordered))


class _Step:
    """A node on the path from the root, with how far its children have been looked at and
    the nearest container at or above it."""

    __slots__ = ("children", "container", "next", "node")

    def __init__(self, node: ts.Node, container: tuple[str, int] | None) -> None:
        self.node = node
        self.container = container
        self.children: list[ts.Node] | None = None
        self.next = 0

    def contains(self, node: ts.Node) -> bool:
        return self.node.start_byte <= node.start_byte and node.end_byte <= self.node.end_byte


def _place(lang: Language, root: ts.Node, defs: list[_Def]) -> None:
    """Set each definition's ``outer`` node and enclosing ``container`` in one walk down the
    tree for all of them (they come in document order, so no child is looked at twice).

    ``Node.parent`` descends from the root on every call: asked for each of n nested
    definitions and for each of their ancestors, it made extraction cubic in the depth
    (1,000 nested Rust functions: 26 s).
    """
    path = [_Step(root, _container_of(lang, root, None))]
    for d in defs:
        while len(path) > 1 and not path[-1].contains(d.node):
            path.pop()
        while path[-1].node != d.node:
            step = _down(lang, path[-1], d.node)
            if step is None:
                break
            path.append(step)
        parent: ts.Node | None
        if len(path) > 1 and path[-1].node == d.node:
            parent, container = path[-2].node, path[-2].container
        else:  # the root, or not below the path (error recovery overlaps nodes): ask the tree
            parent, container = d.node.parent, _container(lang, d.node)
        d.outer = _outer(lang, d.node, parent)
        d.container = container


def _down(lang: Language, step: _Step, target: ts.Node) -> _Step | None:
    """The child of ``step`` that holds ``target``, or None."""
    if step.children is None:
        step.children = step.node.children
    children, i = step.children, step.next
    while i < len(children) and children[i].end_byte < target.end_byte:
        i += 1
    step.next = i
    if i == len(children) or children[i].start_byte > target.start_byte:
        return None
    child = children[i]
    return _Step(child, _container_of(lang, child, step.container))


def _container_of(
    lang: Language, node: ts.Node, above: tuple[str, int] | None
) -> tuple[str, int] | None:
    if lang.container is None:
        return None
    name = lang.container(node)
    return (name, node.start_byte) if name else above


def _outer(lang: Language, node: ts.Node, parent: ts.Node | None) -> ts.Node:
    """The node whose lines an excerpt of this definition should cover (decorators included)."""
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
        container = d.container
        if container is not None and (not stack or container[1] > stack[-1][0]):
            prefix = f"{prefix}.{container[0]}" if prefix else container[0]
        owner = lang.owner(d.node, d.kind) if lang.owner is not None else None
        prefix = owner or prefix
        if len(prefix) > _MAX_QUALNAME:
            cut = prefix.find(".", len(prefix) - _MAX_QUALNAME)
            prefix = prefix[cut + 1 :] if cut >= 0 else prefix
        kind = d.kind
        if kind == "function" and stack and stack[-1][3] in ("class", "interface"):
            kind = "method"
        qualname = f"{prefix}.{d.name}" if prefix else d.name
        assert d.outer is not None
        start, end = _line_span(d.outer)
        out.append(
            Symbol(kind=kind, name=d.name, qualname=qualname, start_line=start, end_line=end)
        )
        stack.append((d.node.start_byte, d.node.end_byte, qualname, kind))
    return out


def _container(lang: Language, node: ts.Node) -> tuple[str, int] | None:
    """The nearest enclosing container's name and start byte (see ``Language.container``),
    by asking the tree for each ancestor: only for a definition ``_place`` could not reach."""
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
