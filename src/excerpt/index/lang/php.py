"""PHP: ``require``/``include`` of a path, and ``use A\\B\\C`` through PSR-4 autoloading.

An include is read when its path is a string, optionally after ``__DIR__`` or
``dirname(__FILE__)`` (``dirname(__DIR__, 2)`` goes up); other expressions are not read. A
``use`` maps by the ``autoload.psr-4`` (and ``autoload-dev``) prefixes of each
``composer.json``; a name no prefix maps goes to the one workspace file whose path ends in
its namespace path (``src/B/C.php`` for ``A\\B\\C``). Classes used from their own namespace
without a ``use`` give no edge.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from excerpt.core.manifests import package_manifest
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

__all__ = ["PHP"]

_MANIFEST = package_manifest("php")  # composer.json

_NAME = "php"


def _grammar() -> object:
    import tree_sitter_php

    return tree_sitter_php.language_php()


def _definitions() -> tuple[str, ...]:
    import tree_sitter_php

    return (
        tree_sitter_php.TAGS_QUERY,
        "(enum_declaration name: (name) @name) @definition.class",
    )


_IMPORTS = """
    (namespace_use_declaration) @use
    (require_expression) @include
    (require_once_expression) @include
    (include_expression) @include
    (include_once_expression) @include
"""


def _use(node: ts.Node) -> list[Import]:
    """``use A\\B``, ``use A\\{B, C as D}``, ``use function A\\f`` (one import per name)."""
    prefix = ""
    group = node.child_by_field_name("body")
    if group is not None:
        prefix = next(
            (node_text(c) + "\\" for c in node.named_children if c.type == "namespace_name"), ""
        )
    clauses = (group or node).named_children
    declared = _is_function(node)
    out: list[Import] = []
    for clause in clauses:
        if clause.type != "namespace_use_clause":
            continue
        name = next(
            (c for c in clause.named_children if c.type in ("qualified_name", "name")), None
        )
        module = (prefix + node_text(name)).lstrip("\\")
        kind = "function" if declared or _is_function(clause) else "use"
        if module:
            out.append(Import(module=module, names=(), line=line_of(clause), kind=kind))
    return out


def _is_function(node: ts.Node) -> bool:
    """``use function …`` or ``use const …``: names no class, so no file by PSR-4."""
    return any(c.type in ("function", "const") for c in node.children)


def _include(node: ts.Node) -> list[Import]:
    path = _path_of(node.named_children[0]) if node.named_children else None
    if not path:
        return []
    return [Import(module=path, names=(), line=line_of(node), kind="include")]


def _path_of(node: ts.Node) -> str | None:
    """The path an include expression names (``./``-relative when anchored at the file)."""
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node.type in ("string", "encapsed_string"):
        parts = node.named_children
        if any(p.type != "string_content" for p in parts):
            return None
        return "".join(node_text(p) for p in parts) or None
    if node.type == "binary_expression":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        rest = _path_of(right) if right is not None else None
        base = _anchor(left) if left is not None else None
        if base is None or rest is None:
            return None
        path = posixpath.normpath(posixpath.join(base, rest.lstrip("/")))
        return path if path.startswith("../") else "./" + path
    return None


def _anchor(node: ts.Node) -> str | None:
    """Where an include is anchored: ``__DIR__`` and ``dirname(__FILE__)`` -> ``.``,
    ``dirname(__DIR__, 2)`` -> ``../..``; None for anything else."""
    text = re.sub(r"\s+", "", node_text(node))
    if text in ("__DIR__", "dirname(__FILE__)"):
        return "."
    match = re.fullmatch(r"dirname\((__DIR__|dirname\(__FILE__\))(?:,(\d+))?\)", text)
    if match is None:
        return None
    return "/".join([".."] * int(match.group(2) or 1))


def _psr4(data: bytes) -> str | None:
    """A ``composer.json``'s PSR-4 prefixes, as a JSON list of ``[prefix, dir]`` pairs."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's depth
        return None
    pairs: list[tuple[str, str]] = []
    for section in ("autoload", "autoload-dev"):
        block = doc.get(section) if isinstance(doc, dict) else None
        mapping = block.get("psr-4") if isinstance(block, dict) else None
        if not isinstance(mapping, dict):
            continue
        for prefix, dirs in mapping.items():
            for d in [dirs] if isinstance(dirs, str) else dirs if isinstance(dirs, list) else []:
                if isinstance(prefix, str) and isinstance(d, str):
                    pairs.append((prefix.strip("\\"), d.strip("/")))
    return json.dumps(sorted(set(pairs))) if pairs else None


@dataclass(frozen=True, slots=True)
class _Tables:
    files: frozenset[str]
    prefixes: tuple[tuple[str, str], ...]  # (namespace prefix, dir), longest prefix first
    by_name: dict[str, list[str]]  # file name -> its paths


def _resolver(ws: Workspace) -> Resolve:
    files = frozenset(p for p in ws.paths if ws.by_path[p].language == _NAME)
    prefixes: list[tuple[str, str]] = []
    for path in ws.paths:
        directory, name = posixpath.split(path)
        manifest = ws.by_path[path].manifest
        if name == _MANIFEST and manifest:
            for prefix, d in json.loads(manifest):
                prefixes.append((prefix, posixpath.normpath(posixpath.join(directory, d))))
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in sorted(files):
        by_name[path.rsplit("/", 1)[-1]].append(path)
    ordered = tuple(sorted(prefixes, key=lambda pd: (-len(pd[0]), pd)))
    return partial(_resolve, _Tables(files, ordered, dict(by_name)))


def _resolve(t: _Tables, src: str, imp: Import) -> list[str]:
    if imp.kind == "include":
        spec = imp.module
        options = [posixpath.join(posixpath.dirname(src), spec)]
        if not spec.startswith(("./", "../")):  # include_path: the project root
            options.append(spec)
        for option in options:
            path = posixpath.normpath(option)
            if path in t.files and path != src:
                return [path]
        return []
    if imp.kind != "use":
        return []
    parts = imp.module.split("\\")
    for prefix, directory in t.prefixes:
        if prefix and imp.module != prefix and not imp.module.startswith(prefix + "\\"):
            continue
        rest = imp.module[len(prefix) :].lstrip("\\").replace("\\", "/")
        path = posixpath.normpath(posixpath.join(directory, rest + ".php"))
        if path in t.files:
            return [path]
    # no prefix maps it: the one file whose path ends in the longest tail of the name
    candidates = t.by_name.get(parts[-1] + ".php", [])
    for k in range(len(parts), 1, -1):
        tail = "/" + "/".join(parts[-k:]) + ".php"
        hits = [p for p in candidates if ("/" + p).endswith(tail)]
        if len(hits) == 1:
            return hits if hits[0] != src else []
        if hits:
            break
    return []


PHP = Language(
    name=_NAME,
    extensions=(".php",),
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"use": _use, "include": _include},
    resolver=_resolver,
    manifests={_MANIFEST: _psr4},
    tests=TestPaths(
        stem=re.compile(r"(?<=[a-z0-9])Test$"),
        dirs=frozenset({"tests", "test"}),
    ),
)
