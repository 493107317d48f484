"""Python: ``import``/``from`` statements, packages by ``__init__.py``, pytest test layout."""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field
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

__all__ = ["PYTHON"]

_NAME = "python"


def _grammar() -> object:
    import tree_sitter_python

    return tree_sitter_python.language()


def _definitions() -> tuple[str, ...]:
    import tree_sitter_python

    return (tree_sitter_python.TAGS_QUERY,)


_IMPORTS = """
        (import_statement) @import
        (import_from_statement) @import
    """


def _dotted(node: ts.Node) -> str:
    if node.type == "aliased_import":
        node = node.child_by_field_name("name") or node
    return node_text(node)


def _import(node: ts.Node) -> list[Import]:
    line = line_of(node)
    names = [_dotted(n) for n in node.children_by_field_name("name")]
    if node.type == "import_statement":
        return [Import(module=name, names=(), line=line) for name in names if name]
    module = node_text(node.child_by_field_name("module_name"))
    return [Import(module=module, names=tuple(n for n in names if n), line=line)] if module else []


@dataclass
class _Tables:
    by_path: set[str]
    init_dirs: set[str]
    modules: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    suffixes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def _module_name(path: str, init_dirs: set[str]) -> str:
    directory, name = posixpath.split(path)
    parts = [] if name in ("__init__.py", "__init__.pyi") else [name.rsplit(".", 1)[0]]
    while directory in init_dirs:
        head, tail = posixpath.split(directory)
        parts.insert(0, tail)
        if directory == head or not directory:
            break
        directory = head
    return ".".join(p for p in parts if p)


def _resolver(ws: Workspace) -> Resolve:
    init_dirs = {posixpath.dirname(p) for p in ws.by_path if p.rsplit("/", 1)[-1] == "__init__.py"}
    t = _Tables(by_path=set(ws.by_path), init_dirs=init_dirs)
    for path in ws.paths:
        if ws.by_path[path].language != _NAME:
            continue
        t.modules[_module_name(path, init_dirs)].append(path)
        parts = path.rsplit(".", 1)[0].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for k in range(len(parts)):
            t.suffixes[".".join(parts[k:])].append(path)
    return partial(_resolve, t)


def _absolute(t: _Tables, src: str, module: str) -> str:
    """``module`` with a leading relative part (``..pkg``) made absolute from ``src``."""
    if not module.startswith("."):
        return module
    level = len(module) - len(module.lstrip("."))
    own = _module_name(src, t.init_dirs)
    package = own.split(".") if src.endswith("__init__.py") else own.split(".")[:-1]
    base = package[: len(package) - (level - 1)] if level - 1 <= len(package) else []
    rest = module[level:]
    return ".".join([*base, *([rest] if rest else [])])


def _resolve(t: _Tables, src: str, imp: Import) -> list[str]:
    module = _absolute(t, src, imp.module)
    found: list[str] = []
    for name in imp.names:
        found += t.modules.get(f"{module}.{name}" if module else name, [])
    parts = module.split(".") if module else []
    for k in range(len(parts), 0, -1):
        hit = t.modules.get(".".join(parts[:k]))
        if hit:
            found += hit
            break
    if not found and len(parts) > 1:  # namespace packages, missing __init__.py
        for k in range(len(parts), 1, -1):
            hit = t.suffixes.get(".".join(parts[:k]))
            if hit and len(hit) == 1:
                found += hit
                break
    here = posixpath.dirname(src)
    if not found and parts and here not in t.init_dirs:  # a script next to its module
        sibling = posixpath.join(here, parts[0] + ".py")
        if sibling in t.by_path:
            found.append(sibling)
    return found


PYTHON = Language(
    name=_NAME,
    extensions=(".py", ".pyi"),
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"import": _import},
    wrappers=frozenset({"decorated_definition"}),
    resolver=_resolver,
    tests=TestPaths(
        extensions=(".py",),  # stubs are never tests
        stem=re.compile(r"^test_|_test$"),
        names=frozenset({"conftest.py"}),
        dirs=TEST_DIRS,
        dirs_exempt=frozenset({"__init__.py"}),
    ),
)
