"""Lua: ``require("a.b")`` resolves to ``a/b.lua`` or ``a/b/init.lua``, searched from the root,
``lua/`` (Neovim plugins) and ``src/`` (LuaRocks), as ``package.path`` conventionally is.

Definitions follow the wheel's tags query, except that a function in a table constructor is
its field, not the whole table; ``function M.f`` and ``function M:f`` are qualified by ``M``.
A ``require`` whose argument is not a string literal is not followed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import partial
from typing import TYPE_CHECKING

from excerpt.index.lang.base import (
    TEST_DIRS,
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

__all__ = ["LUA"]

_NAME = "lua"
_SEARCH_ROOTS = ("", "lua/", "src/")
_SUFFIX_ROOTS = ("/lua/", "/src/")  # a plugin or rock below the repository's root


def _grammar() -> object:
    import tree_sitter_lua

    return tree_sitter_lua.language()


# The wheel's tags query (``tree_sitter_lua.TAGS_QUERY``) with its table-constructor pattern
# capturing the field: the wheel's captures the whole table, one definition for all fields.
_DEFINITIONS = """
(function_declaration
  name: [(identifier) @name (dot_index_expression field: (identifier) @name)]
) @definition.function
(function_declaration name: (method_index_expression method: (identifier) @name)) @definition.method
(assignment_statement
  (variable_list . name: [(identifier) @name (dot_index_expression field: (identifier) @name)])
  (expression_list . value: (function_definition))) @definition.function
(field name: (identifier) @name value: (function_definition)) @definition.function
"""


def _definitions() -> tuple[str, ...]:
    return (_DEFINITIONS,)


_IMPORTS = """
        (function_call name: (identifier) @_require arguments: (arguments . (string) @require)
            (#eq? @_require "require"))
        (function_call name: (identifier) @_pcall
            arguments: (arguments . (identifier) @_require . (string) @require)
            (#eq? @_pcall "pcall") (#eq? @_require "require"))
    """


def _require(node: ts.Node) -> list[Import]:
    content = [c for c in node.named_children if c.type == "string_content"]
    module = node_text(content[0]) if len(content) == 1 else ""
    return [Import(module=module, names=(), line=line_of(node))] if module else []


def _table_of(node: ts.Node, kind: str) -> str | None:
    """``function M.f`` / ``M.f = function`` / ``function M:f``: the table ``M`` owns ``f``."""
    name = node.child_by_field_name("name")
    if node.type == "assignment_statement":
        targets = node.named_children[0] if node.named_children else None
        name = targets.child_by_field_name("name") if targets is not None else None
    if name is not None and name.type in ("dot_index_expression", "method_index_expression"):
        return node_text(name.child_by_field_name("table")) or None
    return None


def _resolver(ws: Workspace) -> Resolve:
    files = {p for p in ws.paths if ws.by_path[p].language == _NAME}
    suffixes: dict[str, list[str]] = defaultdict(list)
    for path in sorted(files):
        for root in _SUFFIX_ROOTS:
            at = path.rfind(root)
            if at > 0:
                suffixes[path[at + len(root) :]].append(path)
    return partial(_resolve, files, suffixes)


def _resolve(files: set[str], suffixes: dict[str, list[str]], src: str, imp: Import) -> list[str]:
    if not re.fullmatch(r"[\w.-]+", imp.module) or ".." in imp.module:
        return []
    base = imp.module.replace(".", "/")
    for candidate in (f"{base}.lua", f"{base}/init.lua"):
        for root in _SEARCH_ROOTS:
            if root + candidate in files:
                return [root + candidate]
        hits = suffixes.get(candidate, [])
        if len(hits) == 1:
            return hits
    return []


LUA = Language(
    name=_NAME,
    extensions=(".lua",),
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"require": _require},
    owner=_table_of,
    resolver=_resolver,
    tests=TestPaths(
        stem=re.compile(r"_spec$|_test$|^test_"),
        dirs=TEST_DIRS,
    ),
)
