"""Scala: imports resolve through each file's ``package`` clauses, absolute or relative.

The wheel's ``queries/tags.scm`` also tags every local ``val`` and constructor parameter; the
definitions below are ours: traits, classes, objects, enums, ``def``s and type aliases. An
import may be relative to an enclosing package (``package a.b`` then ``import c.D`` may mean
``a.b.c.D``), tried innermost first as the compiler does.
"""

from __future__ import annotations

import re
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
from excerpt.index.lang.jvm_packages import Packages, packages_of

if TYPE_CHECKING:
    import tree_sitter as ts

__all__ = ["SCALA"]

_NAME = "scala"


def _grammar() -> object:
    import tree_sitter_scala

    return tree_sitter_scala.language()


_DEFINITIONS = """
(trait_definition name: (identifier) @name) @definition.interface
(class_definition name: (identifier) @name) @definition.class
(object_definition name: (identifier) @name) @definition.class
(enum_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(type_definition name: (type_identifier) @name) @definition.type
"""


def _definitions() -> tuple[str, ...]:
    return (_DEFINITIONS,)


_IMPORTS = """
        (import_declaration) @import
        (package_clause) @package
    """


def _selected(node: ts.Node) -> list[str]:
    """The names a selector list ``{A, B => C, given, *}`` imports (``*`` for a wildcard)."""
    names: list[str] = []
    for child in node.named_children:
        if child.type == "namespace_wildcard":
            names.append("*")
        elif child.type == "identifier":
            names.append(node_text(child))
        elif child.type == "arrow_renamed_identifier":
            alias = child.child_by_field_name("alias")
            if alias is None or alias.type != "wildcard":  # ``B => _`` hides B
                names.append(node_text(child.child_by_field_name("name")))
    return names


def _import(node: ts.Node) -> list[Import]:
    """One ``import`` may hold several clauses: ``import a.B, c.d._``."""
    out: list[Import] = []
    path: list[str] = []
    names: list[str] = []
    for child in [*node.children, None]:  # None ends the last clause
        if child is None or child.type == ",":
            path = path[1:] if path[:1] == ["_root_"] else path
            if path:
                out.append(Import(module=".".join(path), names=tuple(names), line=line_of(node)))
            path, names = [], []
        elif child.type == "identifier":
            path.append(node_text(child).strip("`"))
        elif child.type == "namespace_wildcard":
            names = ["*"]  # ``_``, ``*`` and ``given`` all import the members
        elif child.type == "namespace_selectors":
            names = _selected(child)
    return out


def _package(node: ts.Node) -> str | None:
    """The package so far: chained clauses (``package a`` then ``package b``) nest."""
    parts = [node_text(node.child_by_field_name("name"))]
    sibling = node.prev_named_sibling
    while sibling is not None:
        if sibling.type == "package_clause" and sibling.child_by_field_name("body") is None:
            parts.insert(0, node_text(sibling.child_by_field_name("name")))
        sibling = sibling.prev_named_sibling
    return ".".join(p for p in parts if p) or None


def _resolver(ws: Workspace) -> Resolve:
    return partial(_resolve, ws, packages_of(ws, (_NAME, "java")))


def _resolve(ws: Workspace, tables: Packages, src: str, imp: Import) -> list[str]:
    package = ws.by_path[src].package if src in ws.by_path else None
    parts = package.split(".") if package else []
    # innermost enclosing package first, then the import as absolute
    for k in range(len(parts), -1, -1):
        prefix = ".".join(parts[:k])
        module = f"{prefix}.{imp.module}" if prefix else imp.module
        found = _in_module(tables, src, module, imp.names, k + 1)
        if found:
            return found
    return []


def _in_module(
    tables: Packages, src: str, module: str, names: tuple[str, ...], least: int
) -> list[str]:
    if not names:
        return tables.class_file(src, module, least=least)
    found: list[str] = []
    for name in names:
        if name == "*":  # a package's files, or an object's members
            members = tables.package_files(src, module)
            found += members or tables.class_file(src, module, least=least)
        else:
            found += tables.class_file(src, f"{module}.{name}", least=least)
    return list(dict.fromkeys(found))


SCALA = Language(
    name=_NAME,
    extensions=(".scala", ".sc"),
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"import": _import},
    package_hook=_package,
    resolver=_resolver,
    tests=TestPaths(
        extensions=(".scala",),  # worksheets and scripts are never tests
        stem=re.compile(r"(Spec|Suite|Tests?|IT)$|^Test[A-Z]"),
        # sbt, Maven and Gradle test source sets: src/test, src/it, src/jvmTest
        source_sets=re.compile(r"^(test|it)([-_A-Z].*)?$|^.*[a-z]Test$"),
        affixes=re.compile(r"^Test(?=[A-Z])|(?<=[a-z0-9])(Spec|Suite|Tests?|IT)$"),
    ),
)
