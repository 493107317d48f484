"""C: ``#include`` resolves relative to the including file, then to include directories.

C and C++ are one family (``cpp.py``): they include each other's headers, share this
resolver, and a test in one may test a file in the other.

Definitions are our own patterns, not the wheel's tags query: that query tags the
``function_declarator`` (a function's name and parameters), so a function's span would be its
signature alone (and a function returning a pointer would lose its body), and it tags every
prototype, so a function declared in a header and defined in a ``.c`` file would count as
defined twice. Here a function is its ``function_definition``; prototypes are not definitions.

A ``.h`` file is C whatever includes it, so a C++ header named ``.h`` is parsed with the C
grammar: its functions and structs are found, its classes and namespaces are not.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field
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

__all__ = [
    "C_FAMILY",
    "C_TESTS",
    "FAMILY_MEMBERS",
    "INCLUDES",
    "TYPE_DEFINITIONS",
    "C",
    "function_definition",
    "include_resolver",
    "includes",
]

C_FAMILY = "c"
FAMILY_MEMBERS = frozenset({"c", "cpp"})  # the family's language names (``cpp.py`` checks)


def _grammar() -> object:
    import tree_sitter_c

    return tree_sitter_c.language()


def function_definition(name: str, kind: str = "function", *, references: bool = False) -> str:
    """A function definition whose declarator (under up to two pointer levels, or a C++
    reference) has the name pattern ``name``."""
    fn = f"(function_declarator declarator: {name})"
    shapes = [
        fn,
        f"(pointer_declarator declarator: {fn})",
        f"(pointer_declarator declarator: (pointer_declarator declarator: {fn}))",
        *([f"(reference_declarator {fn})"] if references else []),
    ]
    return f"(function_definition declarator: [{' '.join(shapes)}]) @definition.{kind}\n"


# Shared with C++ (whose grammar has every node type named here).
TYPE_DEFINITIONS = """
    (struct_specifier name: (type_identifier) @name body: (_)) @definition.class
    (union_specifier name: (type_identifier) @name body: (_)) @definition.class
    (enum_specifier name: (type_identifier) @name body: (_)) @definition.type
    (type_definition declarator: (type_identifier) @name) @definition.type
    (preproc_function_def name: (identifier) @name) @definition.macro
    (preproc_def name: (identifier) @name) @definition.macro
"""


def _definitions() -> tuple[str, ...]:
    return (function_definition("(identifier) @name") + TYPE_DEFINITIONS,)


INCLUDES = """
    (preproc_include path: (string_literal) @include)
    (preproc_include path: (system_lib_string) @system)
"""


def _include(node: ts.Node) -> list[Import]:
    spec = node_text(node).strip('"')
    return [Import(module=spec, names=(), line=line_of(node), kind="include")] if spec else []


def _system(node: ts.Node) -> list[Import]:
    spec = node_text(node).strip("<>")
    return [Import(module=spec, names=(), line=line_of(node), kind="system")] if spec else []


includes = {"include": _include, "system": _system}


@dataclass
class _Tables:
    files: set[str]
    include_dirs: list[str]  # directories named ``include``
    by_name: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def include_resolver(ws: Workspace) -> Resolve:
    """The C family's resolver: builds its tables once per graph build."""
    files = {p for p in ws.paths if ws.by_path[p].language in FAMILY_MEMBERS}
    dirs = {posixpath.dirname(p) for p in files}
    include_dirs = sorted(
        {d[: i + len("include")] for d in dirs for i in _include_ends(d)},
        key=lambda d: (d.count("/"), d),
    )
    t = _Tables(files=files, include_dirs=include_dirs)
    for path in sorted(files):
        t.by_name[path.rsplit("/", 1)[-1]].append(path)
    return partial(_resolve, t)


def _include_ends(directory: str) -> list[int]:
    """Where a path component ``include`` starts in ``directory``."""
    parts = directory.split("/")
    out, offset = [], 0
    for part in parts:
        if part == "include":
            out.append(offset)
        offset += len(part) + 1
    return out


def _common(a: str, b: str) -> int:
    """How many leading directory components two paths share."""
    n = 0
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        n += 1
    return n


def _resolve(t: _Tables, src: str, imp: Import) -> list[str]:
    spec = imp.module.replace("\\", "/")
    if spec.startswith("/") or not spec:
        return []
    here = posixpath.dirname(src)
    near = sorted(t.include_dirs, key=lambda d: -_common(d, here))
    options = [posixpath.join(d, spec) for d in near]
    if imp.kind == "include":
        options = [posixpath.join(here, spec), *options, spec]
    for option in options:
        path = posixpath.normpath(option)
        if path in t.files and path != src:
            return [path]
    if imp.kind != "include":
        return []
    # a project's own -I directories (``src/``, a sibling module): the one file so named
    tail = "/" + posixpath.normpath(spec)
    hits = [p for p in t.by_name.get(spec.rsplit("/", 1)[-1], ()) if ("/" + p).endswith(tail)]
    return hits if len(hits) == 1 and hits[0] != src else []


# A test is test_x, test-x, x_test, x-test or x_unittest, or lives under test/ or tests/;
# its subject is the name without the affix (also XTest, TestX, common in C++ suites).
_AFFIXES = re.compile(r"^test[_-]|[_-](unit)?tests?$|^Test(?=[A-Z])|(?<=[a-z0-9])Tests?$")
C_TESTS = TestPaths(
    stem=re.compile(r"^test[_-]|[_-](unit)?test$"),
    dirs=frozenset({"test", "tests"}),
    affixes=_AFFIXES,
)

C = Language(
    name="c",
    family=C_FAMILY,
    extensions=(".c", ".h"),
    grammar=_grammar,
    definitions=_definitions,
    imports=INCLUDES,
    import_hooks=includes,
    resolver=include_resolver,
    tests=C_TESTS,
)
