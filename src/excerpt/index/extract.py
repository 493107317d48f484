"""Symbols and imports of one file from its tree-sitter syntax tree. Pure: bytes in, records out."""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter as ts

from excerpt.index.languages import PARSED_LANGUAGES, grammar

__all__ = ["Extraction", "Import", "Symbol", "extract"]

_MATCH_LIMIT = 4096
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
class Import:
    """An import as written: ``module`` (e.g. ``..pkg.mod``, ``./util``, ``crate::a::B``)."""

    module: str
    names: tuple[str, ...]
    line: int
    kind: str = "import"  # "import" | "mod" (a Rust ``mod x;`` declaration)


@dataclass(frozen=True, slots=True, kw_only=True)
class Extraction:
    """Everything the parser learned about one file."""

    symbols: tuple[Symbol, ...] = ()
    imports: tuple[Import, ...] = ()
    package: str | None = None


def extract(language: str, data: bytes) -> Extraction:
    """Definitions and imports of ``data`` parsed as ``language``; empty for unparsed ones.

    Total for any input: tree-sitter recovers from syntax errors, and spans come from the tree.
    """
    if language not in PARSED_LANGUAGES or not data:
        return Extraction()
    g = grammar(language)
    tree = ts.Parser(g.language).parse(data)
    root = tree.root_node
    definitions: list[dict[str, list[ts.Node]]] = []
    others: list[dict[str, list[ts.Node]]] = []
    for _, captures in ts.QueryCursor(g.query, match_limit=_MATCH_LIMIT).matches(root):
        (definitions if "name" in captures else others).append(captures)
    imports, package = _imports(language, others)
    return Extraction(symbols=_symbols(language, definitions), imports=imports, package=package)


def _text(node: ts.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


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


def _symbols(language: str, matches: list[dict[str, list[ts.Node]]]) -> tuple[Symbol, ...]:
    defs: dict[tuple[int, int], _Def] = {}
    for captures in matches:
        names = captures["name"]
        if names[0].is_missing or not _text(names[0]):  # a placeholder from error recovery
            continue
        for cap, nodes in captures.items():
            if not cap.startswith("definition."):
                continue
            node = nodes[0]
            kind = cap.removeprefix("definition.")
            key = (node.start_byte, node.end_byte)
            old = defs.get(key)
            if old is None or _KIND_PRIORITY.get(kind, 9) < _KIND_PRIORITY.get(old.kind, 9):
                defs[key] = _Def(node, _outer(node), kind, _text(names[0]))
    ordered = sorted(defs.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte))
    return tuple(_qualify(language, ordered))


def _outer(node: ts.Node) -> ts.Node:
    """The node whose lines an excerpt of this definition should cover (decorators included)."""
    parent = node.parent
    if parent is not None and parent.type in ("decorated_definition", "export_statement"):
        return parent
    if node.type == "variable_declarator" and parent is not None:
        return parent
    return node


def _container_name(language: str, node: ts.Node) -> str | None:
    """Name an enclosing non-definition node lends to the definitions inside it: a Rust
    ``impl`` lends its bare type name (``impl<T> a::Stack<T>`` → ``Stack``)."""
    if language == "rust" and node.type == "impl_item":
        text = re.sub(r"<.*", "", _text(node.child_by_field_name("type")), flags=re.DOTALL)
        words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
        return words[-1] if words else None
    return None


def _receiver(node: ts.Node) -> str | None:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    stack = [receiver]
    while stack:
        cur = stack.pop()
        if cur.type == "type_identifier":
            return _text(cur)
        stack.extend(reversed(cur.children))
    return None


def _qualify(language: str, defs: list[_Def]) -> list[Symbol]:
    out: list[Symbol] = []
    stack: list[tuple[int, int, str, str]] = []  # (start_byte, end_byte, qualname, kind)
    for d in defs:
        while stack and stack[-1][1] <= d.node.start_byte:
            stack.pop()
        prefix = stack[-1][2] if stack else ""
        container = _container(language, d.node)
        if container is not None and (not stack or container[1] > stack[-1][0]):
            prefix = f"{prefix}.{container[0]}" if prefix else container[0]
        if language == "go" and d.kind == "method":
            prefix = _receiver(d.node) or prefix
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


def _container(language: str, node: ts.Node) -> tuple[str, int] | None:
    """The nearest enclosing container's name and start byte (see ``_container_name``)."""
    parent = node.parent
    while parent is not None:
        name = _container_name(language, parent)
        if name:
            return name, parent.start_byte
        parent = parent.parent
    return None


def _imports(
    language: str, matches: list[dict[str, list[ts.Node]]]
) -> tuple[tuple[Import, ...], str | None]:
    out: list[Import] = []
    package: str | None = None
    for captures in matches:
        for cap, nodes in captures.items():
            node = nodes[0]
            line = node.start_point.row + 1
            if cap == "source":
                spec = _text(node).strip("\"'`")
                if spec:
                    out.append(Import(module=spec, names=(), line=line))
            elif cap == "import" and language == "python":
                out.extend(_python_import(node, line))
            elif cap == "import":  # java
                out.append(_java_import(node, line))
            elif cap == "package":
                package = _java_name(node) or None
            elif cap == "use":
                out.append(Import(module=_text(node), names=(), line=line))
            elif cap == "mod":
                out.append(Import(module=_text(node), names=(), line=line, kind="mod"))
    unique = {(i.module, i.names, i.line, i.kind): i for i in out}
    return tuple(sorted(unique.values(), key=lambda i: (i.line, i.module, i.names))), package


def _dotted(node: ts.Node) -> str:
    if node.type == "aliased_import":
        node = node.child_by_field_name("name") or node
    return _text(node)


def _python_import(node: ts.Node, line: int) -> list[Import]:
    names = [_dotted(n) for n in node.children_by_field_name("name")]
    if node.type == "import_statement":
        return [Import(module=name, names=(), line=line) for name in names if name]
    module = _text(node.child_by_field_name("module_name"))
    return [Import(module=module, names=tuple(n for n in names if n), line=line)] if module else []


def _java_name(node: ts.Node) -> str:
    for child in node.named_children:
        if child.type in ("scoped_identifier", "identifier"):
            return _text(child)
    return ""


def _java_import(node: ts.Node, line: int) -> Import:
    wildcard = any(child.type == "asterisk" for child in node.children)
    return Import(module=_java_name(node), names=("*",) if wildcard else (), line=line)
