"""Swift: ``import X`` names a module; a SwiftPM target's module is the directory
``Sources/X/`` (or ``Tests/X/``), and the import resolves to that directory's files.

Files of one module see each other without imports, so no edge joins them; targets with a
custom ``path:`` in ``Package.swift`` and Xcode projects are not resolved. The wheel's
``queries/tags.scm`` tags a method by its whole class; the definitions below are ours:
classes, structs, enums and actors (classes), protocols (interfaces), methods, initializers,
functions and type aliases. An ``extension T`` is no definition of its own: it qualifies the
methods inside it by ``T``.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from functools import partial
from typing import TYPE_CHECKING

from excerpt.index.lang.base import (
    Import,
    Language,
    Resolve,
    TestPaths,
    Workspace,
    line_of,
    node_text,
)

if TYPE_CHECKING:
    import tree_sitter as ts

__all__ = ["SWIFT"]

_NAME = "swift"
_MODULE_ROOTS = ("Sources", "Tests")  # SwiftPM: Sources/<Target>/, Tests/<TestTarget>/


def _grammar() -> object:
    import tree_sitter_swift

    return tree_sitter_swift.language()


_DEFINITIONS = """
(class_declaration declaration_kind: ["class" "struct" "enum" "actor"]
    name: (type_identifier) @name) @definition.class
(protocol_declaration name: (type_identifier) @name) @definition.interface
(class_body (function_declaration name: (simple_identifier) @name) @definition.method)
(enum_class_body (function_declaration name: (simple_identifier) @name) @definition.method)
(class_body (init_declaration "init" @name) @definition.method)
(protocol_body (protocol_function_declaration name: (simple_identifier) @name) @definition.method)
(function_declaration name: (simple_identifier) @name) @definition.function
(typealias_declaration name: (type_identifier) @name) @definition.type
"""


def _definitions() -> tuple[str, ...]:
    return (_DEFINITIONS,)


_IMPORTS = "(import_declaration) @import"


def _import(node: ts.Node) -> list[Import]:
    """``import X`` -> module X; ``import struct X.Y`` -> module X, name Y."""
    for child in node.named_children:
        if child.type == "identifier":
            parts = [node_text(p) for p in child.named_children if p.type == "simple_identifier"]
            if parts:
                names = tuple(parts[1:2])
                return [Import(module=parts[0], names=names, line=line_of(node))]
    return []


def _extended(node: ts.Node) -> str | None:
    """An ``extension T`` lends ``T`` (its last component, without generic arguments)."""
    kind = node.child_by_field_name("declaration_kind")
    if node.type != "class_declaration" or kind is None or kind.type != "extension":
        return None
    words = re.findall(
        r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r"<.*", "", node_text(node.child_by_field_name("name")))
    )
    return words[-1] if words else None


def _resolver(ws: Workspace) -> Resolve:
    modules: dict[str, list[str]] = defaultdict(list)  # "<pkg>/Sources/X" -> its Swift files
    for path in ws.paths:
        if ws.by_path[path].language != _NAME:
            continue
        parts = path.split("/")
        for i, part in enumerate(parts[:-2]):
            if part in _MODULE_ROOTS:
                modules["/".join(parts[: i + 2])].append(path)
                break
    return partial(_resolve, modules)


def _resolve(modules: dict[str, list[str]], src: str, imp: Import) -> list[str]:
    here = src.split("/")
    for i in range(len(here) - 1, -1, -1):  # the nearest package holding the module
        package = "/".join(here[:i])
        for root in _MODULE_ROOTS:
            files = modules.get(posixpath.join(package, root, imp.module))
            if files:
                return _named(files, imp.names) or files
    return []


def _named(files: list[str], names: tuple[str, ...]) -> list[str]:
    """``import struct X.Y``: the file named ``Y.swift``, when the module has one."""
    wanted = {f"{name}.swift" for name in names}
    return [p for p in files if p.rsplit("/", 1)[-1] in wanted]


SWIFT = Language(
    name=_NAME,
    extensions=(".swift",),
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"import": _import},
    container=_extended,
    resolver=_resolver,
    tests=TestPaths(
        stem=re.compile(r"(?<=[a-z0-9])Tests?$"),
        dirs=frozenset({"Tests", "UITests"}),
    ),
)
