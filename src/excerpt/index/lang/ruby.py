"""Ruby: ``require_relative`` resolves beside the file, ``require 'a/b'`` to ``lib/a/b.rb``.

A plain ``require`` looks in the load path a project sets by convention: the ``lib``
directories, and for a test its ``spec``/``test`` directory (``require 'spec_helper'``);
nearer directories first. ``autoload :X, 'a/x'`` and ``load`` count as requires. Strings
with interpolation, and requires built from ``File`` calls, are not read. Rails-style
autoloading (no ``require`` at all) gives no edges.
"""

from __future__ import annotations

import posixpath
import re
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

__all__ = ["RUBY"]

_NAME = "ruby"


def _grammar() -> object:
    import tree_sitter_ruby

    return tree_sitter_ruby.language()


def _definitions() -> tuple[str, ...]:
    import tree_sitter_ruby

    return (tree_sitter_ruby.TAGS_QUERY,)


_IMPORTS = """
    (call method: (identifier) @_require arguments: (argument_list . (string) @require)
        (#any-of? @_require "require" "require_relative" "load"))
    (call method: (identifier) @_autoload
        arguments: (argument_list . (simple_symbol) . (string) @require)
        (#eq? @_autoload "autoload"))
"""


def _require(node: ts.Node) -> list[Import]:
    if any(c.type != "string_content" for c in node.named_children):  # "#{dir}/x"
        return []
    spec = "".join(node_text(c) for c in node.named_children)
    call = node.parent.parent if node.parent is not None else None
    method = node_text(call.child_by_field_name("method")) if call is not None else ""
    if not spec:
        return []
    kind = "require_relative" if method == "require_relative" else "require"
    return [Import(module=spec, names=(), line=line_of(node), kind=kind)]


@dataclass(frozen=True, slots=True)
class _Tables:
    files: frozenset[str]
    load_dirs: tuple[str, ...]  # every ``lib`` directory
    test_dirs: tuple[str, ...]  # every ``spec`` and ``test`` directory


def _resolver(ws: Workspace) -> Resolve:
    files = frozenset(p for p in ws.paths if ws.by_path[p].language == _NAME)
    dirs: set[str] = set()
    for path in files:
        parts = path.split("/")[:-1]
        dirs |= {"/".join(parts[: i + 1]) for i, p in enumerate(parts) if p in _LOAD_DIRS}
    load = tuple(sorted(d for d in dirs if d.rsplit("/", 1)[-1] == "lib"))
    tests = tuple(sorted(d for d in dirs if d.rsplit("/", 1)[-1] != "lib"))
    return partial(_resolve, ws, _Tables(files, load, tests))


_LOAD_DIRS = frozenset({"lib", "spec", "test"})


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        n += 1
    return n


def _resolve(ws: Workspace, t: _Tables, src: str, imp: Import) -> list[str]:
    spec = imp.module if imp.module.endswith(".rb") else imp.module + ".rb"
    here = posixpath.dirname(src)
    if imp.kind == "require_relative" or spec.startswith(("./", "../")):
        options = [posixpath.join(here, spec)]
    else:
        dirs = [*t.load_dirs, *(t.test_dirs if ws.is_test(src) else ())]
        near = sorted(dirs, key=lambda d: -_common(d, here))
        options = [*(posixpath.join(d, spec) for d in near), spec]
    for option in options:
        path = posixpath.normpath(option)
        if path in t.files and path != src:
            return [path]
    return []


RUBY = Language(
    name=_NAME,
    extensions=(".rb", ".rake", ".gemspec", ".ru"),
    filenames=("Rakefile", "Gemfile"),
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"require": _require},
    resolver=_resolver,
    tests=TestPaths(
        extensions=(".rb",),
        stem=re.compile(r"_spec$|_test$|^test_|^spec_"),
        dirs=frozenset({"spec", "test"}),
        affixes=re.compile(r"_spec$|_test$|^test_|^spec_"),
    ),
)
