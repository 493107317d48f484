"""C++: the C family's ``#include`` resolution and test layout, with C++'s own definitions.

Definitions are our own patterns for the reasons ``c.py`` gives. A member function defined
outside its class (``void Stack::push()``) is a method qualified by its scope; namespaces are
not definitions (a qualified name is the class's, as in Java), and a declaration without a
body (a prototype, a forward ``class X;``) is not one either.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from excerpt.index.lang.base import Language, node_text
from excerpt.index.lang.c import (
    C_FAMILY,
    C_TESTS,
    FAMILY_MEMBERS,
    INCLUDES,
    TYPE_DEFINITIONS,
    function_definition,
    include_resolver,
    includes,
)

if TYPE_CHECKING:
    import tree_sitter as ts

__all__ = ["CPP"]

_NAME = "cpp"


def _grammar() -> object:
    import tree_sitter_cpp

    return tree_sitter_cpp.language()


_LEAVES = (
    "(identifier) @name (destructor_name) @name (operator_name) @name"
    " (template_function name: (identifier) @name)"
)
_PLAIN = f"[{_LEAVES} (field_identifier) @name]"
_QUALIFIED = (
    f"(qualified_identifier name: [{_LEAVES} (qualified_identifier name: [{_LEAVES}"
    f" (qualified_identifier name: [{_LEAVES}])])])"
)
_DECLARATOR_WRAPPERS = ("pointer_declarator", "reference_declarator")


def _definitions() -> tuple[str, ...]:
    return (
        function_definition(_PLAIN, references=True)
        + function_definition(_QUALIFIED, "method", references=True)
        + TYPE_DEFINITIONS
        + """
    (class_specifier name: (type_identifier) @name body: (_)) @definition.class
    (alias_declaration name: (type_identifier) @name) @definition.type
    """,
    )


def _scope_name(node: ts.Node) -> str:
    if node.type == "template_type":
        return node_text(node.child_by_field_name("name"))
    return re.sub(r"<.*", "", node_text(node), flags=re.DOTALL)


def _scope(node: ts.Node, kind: str) -> str | None:
    """An out-of-class member is qualified by its written scope (``a::Stack<T>::push`` ->
    ``a.Stack``)."""
    if kind != "method":
        return None
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type in _DECLARATOR_WRAPPERS:
        decl = decl.child_by_field_name("declarator") or next(
            (c for c in decl.named_children if c.type == "function_declarator"), None
        )
    decl = decl.child_by_field_name("declarator") if decl is not None else None
    scopes: list[str] = []
    while decl is not None and decl.type == "qualified_identifier":
        scope = decl.child_by_field_name("scope")
        if scope is not None:
            scopes.append(_scope_name(scope))
        decl = decl.child_by_field_name("name")
    return ".".join(s for s in scopes if s) or None


CPP = Language(
    name=_NAME,
    family=C_FAMILY,
    extensions=(".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"),
    grammar=_grammar,
    definitions=_definitions,
    imports=INCLUDES,
    import_hooks=includes,
    wrappers=frozenset({"template_declaration"}),
    owner=_scope,
    resolver=include_resolver,
    tests=C_TESTS,
)
if CPP.name not in FAMILY_MEMBERS:  # pragma: no cover - a renamed record
    raise ValueError("c.FAMILY_MEMBERS must name the C++ record")
