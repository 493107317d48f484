"""Java: imports resolve through each file's ``package`` declaration to classes and packages."""

from __future__ import annotations

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

__all__ = ["JAVA"]

_NAME = "java"


def _grammar() -> object:
    import tree_sitter_java

    return tree_sitter_java.language()


def _definitions() -> tuple[str, ...]:
    import tree_sitter_java

    return (tree_sitter_java.TAGS_QUERY,)


_IMPORTS = """
        (import_declaration) @import
        (package_declaration) @package
    """


def _name(node: ts.Node) -> str:
    for child in node.named_children:
        if child.type in ("scoped_identifier", "identifier"):
            return node_text(child)
    return ""


def _import(node: ts.Node) -> list[Import]:
    wildcard = any(child.type == "asterisk" for child in node.children)
    return [Import(module=_name(node), names=("*",) if wildcard else (), line=line_of(node))]


def _package(node: ts.Node) -> str | None:
    return _name(node) or None


def _resolver(ws: Workspace) -> Resolve:
    classes: dict[str, list[str]] = defaultdict(list)
    packages: dict[str, list[str]] = defaultdict(list)
    for path in ws.paths:
        facts = ws.by_path[path]
        if facts.language == _NAME and facts.package is not None:
            stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            classes[f"{facts.package}.{stem}"].append(path)
            packages[facts.package].append(path)
    return partial(_resolve, ws, classes, packages)


def _resolve(
    ws: Workspace,
    classes: dict[str, list[str]],
    packages: dict[str, list[str]],
    src: str,
    imp: Import,
) -> list[str]:
    if imp.names == ("*",):
        in_package = [
            p
            for p in packages.get(imp.module, [])
            if p != src and (ws.is_test(src) or not ws.is_test(p))
        ]
        if in_package:
            return in_package
        # otherwise ``import static a.b.Class.*``: the class itself
    parts = imp.module.split(".")
    for k in range(len(parts), 1, -1):  # static imports name a member after the class
        hit = classes.get(".".join(parts[:k]))
        if hit:
            return hit
    return []


JAVA = Language(
    name=_NAME,
    extensions=(".java",),
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"import": _import},
    package_hook=_package,
    resolver=_resolver,
    tests=TestPaths(
        stem=re.compile(r"(Tests?|IT)$|^Test[A-Z]"),
        # Maven and Gradle test source sets: src/test, src/it, src/test-jdk17,
        # src/testFixtures, src/integrationTest
        source_sets=re.compile(r"^(test|it)([-_A-Z].*)?$|^.*[a-z]Test$"),
    ),
)
