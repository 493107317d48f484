"""C#: ``using`` directives resolve through each file's ``namespace`` to its files.

Namespaces are packages, as Java's are: ``using A.B;`` reaches the files declaring
``namespace A.B``, ``using static A.B.C;`` and ``using X = A.B.C;`` the file ``C.cs`` of
namespace ``A.B`` (or, for an alias, the namespace ``A.B.C``). A ``global using`` is kept as
written but ties its file to nothing: it binds every file of the project (a
``GlobalUsings.cs`` would otherwise import most of the workspace). The wheel ships no tags query;
the definitions are ours. Namespaces are not definitions (a qualified name is the class's).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
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

__all__ = ["CSHARP"]

_NAME = "csharp"


def _grammar() -> object:
    import tree_sitter_c_sharp

    return tree_sitter_c_sharp.language()


_DEFINITIONS = """
    (class_declaration name: (identifier) @name) @definition.class
    (struct_declaration name: (identifier) @name) @definition.class
    (record_declaration name: (identifier) @name) @definition.class
    (interface_declaration name: (identifier) @name) @definition.interface
    (enum_declaration name: (identifier) @name) @definition.type
    (delegate_declaration name: (identifier) @name) @definition.type
    (method_declaration name: (identifier) @name) @definition.method
    (constructor_declaration name: (identifier) @name) @definition.method
    (destructor_declaration name: (identifier) @name) @definition.method
    (operator_declaration operator: _ @name) @definition.method
    (property_declaration name: (identifier) @name) @definition.field
    (local_function_statement name: (identifier) @name) @definition.function
"""


def _definitions() -> tuple[str, ...]:
    return (_DEFINITIONS,)


_IMPORTS = """
    (using_directive) @using
    (namespace_declaration name: (_) @package)
    (file_scoped_namespace_declaration name: (_) @package)
"""
_NAMES = ("qualified_name", "identifier")


def _using(node: ts.Node) -> list[Import]:
    """``using A.B;``, ``using static A.B.C;``, ``using X = A.B.C;`` (``global`` or not)."""
    alias = node.child_by_field_name("name")
    target = next(
        (c for c in node.named_children if c.type in _NAMES and c != alias),
        None,
    )
    module = node_text(target).replace(" ", "")
    if not module:
        return []
    words = {c.type for c in node.children if not c.is_named}
    kind = "static" if "static" in words else "alias" if alias is not None else "import"
    kind = "global" if "global" in words else kind
    return [Import(module=module.removeprefix("global::"), names=(), line=line_of(node), kind=kind)]


def _package(node: ts.Node) -> str | None:
    return re.sub(r"\s+", "", node_text(node)) or None


@dataclass(frozen=True, slots=True)
class _Tables:
    namespaces: dict[str, list[str]]  # namespace -> its files
    types: dict[str, list[str]]  # namespace.FileStem -> the file


def _resolver(ws: Workspace) -> Resolve:
    namespaces: dict[str, list[str]] = defaultdict(list)
    types: dict[str, list[str]] = defaultdict(list)
    for path in ws.paths:
        facts = ws.by_path[path]
        if facts.language == _NAME and facts.package is not None:
            stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
            namespaces[facts.package].append(path)
            types[f"{facts.package}.{stem}"].append(path)
    return partial(_resolve, ws, _Tables(namespaces, types))


def _resolve(ws: Workspace, t: _Tables, src: str, imp: Import) -> list[str]:
    if imp.kind == "global":  # binds every file of the project, so ties this one to none
        return []
    if imp.kind in ("static", "alias"):
        hit = t.types.get(imp.module)
        if hit or imp.kind == "static":
            return hit or []
    return [
        p
        for p in t.namespaces.get(imp.module, [])
        if p != src and (ws.is_test(src) or not ws.is_test(p))
    ]


# a test project is a directory named like ``Acme.Tests``, ``Acme.UnitTests``, ``Acme.Specs``
_TEST_PROJECT = re.compile(r"\.(Unit|Integration|Functional|Acceptance)?(Tests?|Specs)$")


@dataclass(frozen=True, slots=True, kw_only=True)
class _TestPaths(TestPaths):
    """The common rules, and any file inside a test project's directory."""

    projects: re.Pattern[str] = _TEST_PROJECT

    def matches(self, path: str) -> bool:
        return TestPaths.matches(self, path) or any(
            self.projects.search(part) for part in path.split("/")[:-1]
        )


CSHARP = Language(
    name=_NAME,
    extensions=(".cs",),
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"using": _using},
    package_hook=_package,
    resolver=_resolver,
    tests=_TestPaths(
        stem=re.compile(r"(?<=[a-z0-9])(Tests?|Specs?)$"),
        dirs=frozenset({"test", "tests"}),
    ),
)
