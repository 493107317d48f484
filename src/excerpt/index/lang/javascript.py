"""JavaScript, TypeScript and TSX: one family (they import one another), three grammars.

Imports are ``import``/``export … from``, ``require('…')`` and ``import('…')``; relative
specifiers resolve like Node and bundlers do, bare ones through workspace ``package.json``
names.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import replace
from functools import partial

from excerpt.core.manifests import package_manifest
from excerpt.index.lang.base import (
    TEST_DIRS,
    Import,
    Language,
    Resolve,
    TestPaths,
    Workspace,
    quoted_source,
)

__all__ = ["JAVASCRIPT", "TSX", "TYPESCRIPT"]

_MANIFEST = package_manifest("node")  # package.json

_FAMILY = "javascript"
_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")


def _javascript() -> object:
    import tree_sitter_javascript

    return tree_sitter_javascript.language()


def _typescript() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_typescript()


def _tsx() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_tsx()


def _javascript_tags() -> tuple[str, ...]:
    import tree_sitter_javascript

    return (tree_sitter_javascript.TAGS_QUERY,)


def _typescript_tags() -> tuple[str, ...]:
    import tree_sitter_javascript
    import tree_sitter_typescript

    # the TypeScript tags cover only what JavaScript lacks
    return (tree_sitter_javascript.TAGS_QUERY, tree_sitter_typescript.TAGS_QUERY)


_JS_IMPORTS = """
        (import_statement source: (string) @source)
        (export_statement source: (string) @source)
        (call_expression function: (identifier) @fn
            arguments: (arguments . (string) @source) (#eq? @fn "require"))
        (call_expression function: (import) arguments: (arguments . (string) @source))
    """
_TS_IMPORTS = _JS_IMPORTS + "(import_require_clause source: (string) @source)"


def _package_name(data: bytes) -> str | None:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's depth
        return None
    value = doc.get("name") if isinstance(doc, dict) else None
    return value if isinstance(value, str) and value else None


def _resolver(ws: Workspace) -> Resolve:
    packages: dict[str, str] = {}  # package name -> dir
    for path in ws.paths:
        directory, name = posixpath.split(path)
        manifest = ws.by_path[path].manifest
        if name == _MANIFEST and manifest:
            packages[manifest] = directory
    return partial(_resolve, ws, packages)


def _resolve(ws: Workspace, packages: dict[str, str], src: str, imp: Import) -> list[str]:
    spec = imp.module.split("?", 1)[0]
    if spec.startswith("."):
        return _candidates(ws, posixpath.normpath(posixpath.join(posixpath.dirname(src), spec)))
    for name in sorted(packages, key=len, reverse=True):
        if spec == name or spec.startswith(name + "/"):
            base = posixpath.join(packages[name], spec[len(name) + 1 :])
            hit = _candidates(ws, base.rstrip("/"))
            return hit or _candidates(ws, posixpath.join(packages[name], "src", "index"))
    return []


def _candidates(ws: Workspace, base: str) -> list[str]:
    stem, ext = posixpath.splitext(base)
    options = [base, *(base + e for e in _EXTS), *(f"{base}/index{e}" for e in _EXTS)]
    if ext in (".js", ".jsx", ".mjs", ".cjs"):
        options += [stem + e for e in (".ts", ".tsx", ".mts", ".cts")]
    for option in options:
        if option in ws.by_path and option != ".":
            return [option]
    return []


_TESTS = TestPaths(stem=re.compile(r"\.(test|spec)$"), dirs=TEST_DIRS)
JAVASCRIPT = Language(
    name="javascript",
    family=_FAMILY,
    extensions=(".js", ".mjs", ".cjs", ".jsx"),
    grammar=_javascript,
    definitions=_javascript_tags,
    imports=_JS_IMPORTS,
    import_hooks={"source": quoted_source},
    wrappers=frozenset({"export_statement"}),
    declarators=frozenset({"variable_declarator"}),
    resolver=_resolver,
    manifests={_MANIFEST: _package_name},
    tests=_TESTS,
)
TYPESCRIPT = replace(
    JAVASCRIPT,
    name="typescript",
    extensions=(".ts", ".mts", ".cts"),
    grammar=_typescript,
    definitions=_typescript_tags,
    imports=_TS_IMPORTS,
)
TSX = replace(TYPESCRIPT, name="tsx", extensions=(".tsx",), grammar=_tsx)
