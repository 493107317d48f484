"""Kotlin: ``import a.b.C`` resolves through each file's ``package`` header, as Java's does.

The grammar wheel ships no tags query; the definitions below are ours: classes, interfaces,
objects, functions (methods inside a class body) and type aliases. Properties are not
definitions, as Java's fields are not. The wheel (1.1) fails on a class header continued on
the next line (``class A`` then ``private constructor(…)``): that class is lost, while the
functions inside it are still found.
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

__all__ = ["KOTLIN"]

_NAME = "kotlin"


def _grammar() -> object:
    import tree_sitter_kotlin

    return tree_sitter_kotlin.language()


_DEFINITIONS = """
(class_declaration "interface" name: (identifier) @name) @definition.interface
(class_declaration "class" name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(type_alias type: (identifier) @name) @definition.type
"""


def _definitions() -> tuple[str, ...]:
    return (_DEFINITIONS,)


_IMPORTS = """
        (import) @import
        (package_header) @package
    """


def _dotted(node: ts.Node) -> str:
    for child in node.named_children:
        if child.type == "qualified_identifier":
            return node_text(child)
    return ""


def _import(node: ts.Node) -> list[Import]:
    module = _dotted(node)
    if not module:
        return []
    wildcard = any(child.type == "*" for child in node.children)
    return [Import(module=module, names=("*",) if wildcard else (), line=line_of(node))]


def _package(node: ts.Node) -> str | None:
    return _dotted(node) or None


def _resolver(ws: Workspace) -> Resolve:
    return partial(_resolve, packages_of(ws, (_NAME, "java")))


def _resolve(tables: Packages, src: str, imp: Import) -> list[str]:
    if imp.names == ("*",):
        # ``import a.b.*``: the package; else the members of a class or object
        return tables.package_files(src, imp.module) or tables.class_file(src, imp.module)
    return tables.class_file(src, imp.module)


KOTLIN = Language(
    name=_NAME,
    extensions=(".kt", ".kts"),
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"import": _import},
    package_hook=_package,
    resolver=_resolver,
    tests=TestPaths(
        extensions=(".kt",),  # build scripts are never tests
        stem=re.compile(r"(Tests?|IT)$|^Test[A-Z]"),
        # Gradle test source sets: src/test, src/androidTest, src/jvmTest, src/commonTest
        source_sets=re.compile(r"^(test|it)([-_A-Z].*)?$|^.*[a-z]Test$"),
    ),
)
