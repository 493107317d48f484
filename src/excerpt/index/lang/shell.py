"""Shell (parsed as Bash): ``source`` and ``.`` of a path resolve to the sourced file.

The path's literal part is resolved: ``./lib/x.sh`` and ``lib/x.sh`` from the sourcing
file's directory, then from the root; after a leading expansion (``"$DIR/x.sh"``,
``"$(dirname "$0")/x.sh"``, ``"${BASH_SOURCE%/*}/x.sh"``) the rest is also matched as a
path suffix when exactly one file ends so. A path built any other way is not followed. The
grammar wheel ships no tags query: functions are the definitions. Bats files (``.bats``)
are parsed too, since their ``load``/``source`` lines and helper functions are Bash.
"""

from __future__ import annotations

import posixpath
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

__all__ = ["SHELL"]

_NAME = "shell"
_EXTENSIONS = (".sh", ".bash", ".bats")


def _grammar() -> object:
    import tree_sitter_bash

    return tree_sitter_bash.language()


_DEFINITIONS = "(function_definition name: (word) @name) @definition.function"


def _definitions() -> tuple[str, ...]:
    return (_DEFINITIONS,)


# Commands are told apart in the hook, not by query predicates: a predicate decodes the
# captured text as UTF-8, and a shell word may be any bytes.
_IMPORTS = "(command name: (command_name (word)) . argument: (_)) @command"


def _command(node: ts.Node) -> list[Import]:
    """``source p`` / ``. p``: the path; Bats ``load helper``: ``helper.bash`` beside it."""
    name = node.child_by_field_name("name")
    argument = node.child_by_field_name("argument")
    command = name.text if name is not None else None
    if argument is None or command not in (b"source", b".", b"load"):
        return []
    spec = node_text(argument)
    if argument.type in ("string", "raw_string"):
        spec = spec[1:-1]
    if command == b"load" and spec and not spec.endswith((".bash", ".sh")):
        spec += ".bash"
    return [Import(module=spec, names=(), line=line_of(argument))] if spec else []


# tree-sitter-bash (0.23 to 0.25) reads a brace expansion ``{1..9}`` with C ``isdigit`` on
# the lookahead code point: one past U+00FF after ``{`` (or ``{1..``) indexes far outside
# the ctype table and may crash the process. Such a character there is rewritten to ``_``
# bytes, at equal length, before parsing.
_BRACE_THEN_WIDE = re.compile(rb"(\{[0-9]*(?:\.\.[0-9]*)?)([\x80-\xff]+)")


def _prepare(data: bytes) -> bytes:
    if b"{" not in data:
        return data
    return _BRACE_THEN_WIDE.sub(lambda m: m.group(1) + b"_" * len(m.group(2)), data)


def _literal_tail(spec: str) -> tuple[str, bool] | None:
    """The literal path after a leading expansion, and whether there was one; None when the
    path is built otherwise (an expansion inside it, a glob, a command)."""
    prefixed = spec.startswith("$")
    if prefixed:
        end = _expansion_end(spec)
        if end is None:
            return None
        spec = spec[end:].lstrip("/")
    if not spec or re.search(r"[$`*?\[\]\s\"'{}()]", spec):
        return None
    return spec, prefixed


def _expansion_end(spec: str) -> int | None:
    """Where the expansion at the start of ``spec`` ends: ``$x``, ``${…}``, ``$(…)``."""
    if spec[1:2] in ("{", "("):
        close = "}" if spec[1] == "{" else ")"
        depth = 0
        for i, ch in enumerate(spec[1:], start=1):
            depth += ch == spec[1]
            depth -= ch == close
            if depth == 0:
                return i + 1
        return None
    match = re.match(r"\$\w+", spec)
    return match.end() if match else None


def _resolver(ws: Workspace) -> Resolve:
    files = {p for p in ws.paths if ws.by_path[p].language == _NAME}
    suffixes: dict[str, list[str]] = defaultdict(list)
    for path in sorted(files):
        parts = path.split("/")
        for k in range(1, len(parts)):
            suffixes["/".join(parts[k:])].append(path)
    return partial(_resolve, files, suffixes)


def _resolve(files: set[str], suffixes: dict[str, list[str]], src: str, imp: Import) -> list[str]:
    tail = _literal_tail(imp.module)
    if tail is None:
        return []
    rel, prefixed = tail
    if rel.startswith("/"):  # absolute: outside the workspace
        return []
    for base in (posixpath.dirname(src), ""):
        candidate = posixpath.normpath(posixpath.join(base, rel))
        if candidate in files:
            return [candidate]
    if not prefixed:
        return []
    # the expansion names some directory: a path ending so, when only one does
    hits = suffixes.get(re.sub(r"^(\.\./)+", "", posixpath.normpath(rel)), [])
    return hits if len(hits) == 1 else []


SHELL = Language(
    name=_NAME,
    extensions=_EXTENSIONS,
    grammar=_grammar,
    definitions=_definitions,
    imports=_IMPORTS,
    import_hooks={"command": _command},
    prepare=_prepare,
    resolver=_resolver,
    tests=TestPaths(
        stem=re.compile(r"^test_|_test$"),
        dirs=TEST_DIRS,
        bare_names=True,  # bats: test/utils.bats tests lib/utils.bash
    ),
)
