"""Go: import paths resolve to package directories under a workspace ``go.mod`` module."""

from __future__ import annotations

import posixpath
import re
from functools import partial
from typing import TYPE_CHECKING

from excerpt.core.manifests import package_manifest
from excerpt.index.lang.base import (
    Import,
    Language,
    Resolve,
    TestPaths,
    Workspace,
    node_text,
    quoted_source,
)

if TYPE_CHECKING:
    import tree_sitter as ts

__all__ = ["GO"]

_MANIFEST = package_manifest("go")  # go.mod

_MODULE = re.compile(rb"^module\s+(\S+)", re.MULTILINE)


def _grammar() -> object:
    import tree_sitter_go

    return tree_sitter_go.language()


def _definitions() -> tuple[str, ...]:
    import tree_sitter_go

    return (tree_sitter_go.TAGS_QUERY,)


def _receiver(node: ts.Node, kind: str) -> str | None:
    """A method is qualified by its receiver's bare type (``func (s *Stack[T]) Push``)."""
    receiver = node.child_by_field_name("receiver") if kind == "method" else None
    if receiver is None:
        return None
    stack = [receiver]
    while stack:
        cur = stack.pop()
        if cur.type == "type_identifier":
            return node_text(cur)
        stack.extend(reversed(cur.children))
    return None


def _module_path(data: bytes) -> str | None:
    match = _MODULE.search(data)
    return match.group(1).decode("utf-8", "replace") if match else None


def _resolver(ws: Workspace) -> Resolve:
    modules: dict[str, str] = {}  # module path -> dir
    for path in ws.paths:
        directory, name = posixpath.split(path)
        manifest = ws.by_path[path].manifest
        if name == _MANIFEST and manifest:
            modules[manifest] = directory
    ordered = sorted(modules.items(), key=lambda kv: -len(kv[0]))
    return partial(_resolve, ws, ordered)


def _resolve(ws: Workspace, modules: list[tuple[str, str]], src: str, imp: Import) -> list[str]:
    for module, directory in modules:
        if imp.module == module or imp.module.startswith(module + "/"):
            target = posixpath.normpath(posixpath.join(directory, imp.module[len(module) + 1 :]))
            target = "" if target == "." else target
            return [
                p
                for p in ws.dir_files.get(target, [])
                if p.endswith(".go") and not p.endswith("_test.go") and p != src
            ]
    return []


GO = Language(
    name="go",
    extensions=(".go",),
    grammar=_grammar,
    definitions=_definitions,
    imports="(import_spec path: (_) @source)",
    import_hooks={"source": quoted_source},
    owner=_receiver,
    resolver=_resolver,
    manifests={_MANIFEST: _module_path},
    tests=TestPaths(stem=re.compile(r"_test$")),
)
