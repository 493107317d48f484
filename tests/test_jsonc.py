"""JSON with comments read, and edited at one key with every other byte kept."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from excerpt.core.jsonc import JsoncError, loads, set_at

_KEYS = st.text(st.sampled_from('abcxyz_-é"\\ /'), min_size=1, max_size=6)
_SCALARS = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
_OBJECTS = st.dictionaries(_KEYS, _VALUES, max_size=4)


def _commented(value: Any, indent: int, n: list[int]) -> str:
    """``value`` as JSONC: one comment of each kind around every property, trailing commas."""
    pad = "  " * (indent + 1)
    if isinstance(value, dict) and value:
        n[0] += 1
        parts = [f"{pad}// c{n[0]}\n{pad}{json.dumps(k)}: /* v{n[0]} */ "
                 f"{_commented(v, indent + 1, n)}," for k, v in value.items()]  # fmt: skip
        return "{\n" + "\n".join(parts) + "\n" + "  " * indent + "}"
    if isinstance(value, list) and value:
        return "[" + ", ".join(_commented(v, indent + 1, n) for v in value) + ",]"
    return json.dumps(value)


_MISSING = object()


def _set(doc: dict[str, Any], path: list[str], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        if value is None and key not in node:
            return out  # nothing to take out
        node = node.setdefault(key, {})
    if value is None:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return out


def _comments(text: str) -> list[str]:
    """The comments of a JSONC text (a ``//`` inside a string is none)."""
    found = re.findall(r'"(?:[^"\\]|\\.)*"|(//[^\n]*|/\*.*?\*/)', text, re.S)
    return [c for c in found if c]


@given(_OBJECTS)
def test_jsonc_reads_as_json_does_comments_and_trailing_commas_aside(doc: dict[str, Any]) -> None:
    assert loads(json.dumps(doc, indent=2)) == doc
    assert loads(_commented(doc, 0, [0])) == doc


def _paths(value: Any, at: tuple[str, ...] = ()) -> list[list[str]]:
    """Every path of object keys in ``value``."""
    if not isinstance(value, dict):
        return []
    out = []
    for key, inner in value.items():
        out += [[*at, key], *_paths(inner, (*at, key))]
    return out


@settings(max_examples=300)
@given(_OBJECTS, st.data(), _VALUES, st.booleans())
def test_setting_a_value_changes_that_value_alone_and_keeps_every_comment(
    doc: dict[str, Any], data: st.DataObject, value: Any, commented: bool
) -> None:
    # a path the document has (replaced or taken out), or a new one (objects made on the way)
    existing = _paths(doc)
    new = st.lists(_KEYS, min_size=1, max_size=3)
    path = data.draw(st.sampled_from(existing) | new if existing else new)
    # a path whose objects exist where the document has them: a value in the way is an error
    node: Any = doc
    for key in path[:-1]:
        if not isinstance(node, dict) or key not in node:
            break
        node = node[key]
    if not isinstance(node, dict):
        with pytest.raises(JsoncError, match="is not an object"):
            set_at(json.dumps(doc), path, value)
        return
    text = _commented(doc, 0, [0]) + "\n" if commented else json.dumps(doc, indent=2) + "\n"
    after = set_at(text, path, value)
    assert loads(after) == _set(doc, path, value)
    if value is not None:
        assert set_at(after, path, value) == after  # setting it again changes nothing
    # every comment stays but those inside the value replaced (as many as it held) and, for a
    # property taken out, the one between its key and its value
    old: Any = doc
    for key in path:
        old = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
    held = 0
    if commented and old is not _MISSING:
        held = len(_comments(_commented(old, 0, [0]))) + (value is None)
    before, now = _comments(text), _comments(after)
    assert set(now) <= set(before) and len(before) - len(now) <= held


def test_a_new_server_goes_after_the_last_one_in_the_file_s_own_layout() -> None:
    text = (
        '// user settings\n{\n    "theme": "dark", // mine\n    "mcpServers": {\n'
        '        "other": {"command": "o"},\n    },\n}\n'
    )
    after = set_at(text, ["mcpServers", "excerpt"], {"command": "/x/excerpt", "args": ["mcp"]})
    assert after == (
        '// user settings\n{\n    "theme": "dark", // mine\n    "mcpServers": {\n'
        '        "other": {"command": "o"},\n'
        '        "excerpt": {\n            "command": "/x/excerpt",\n'
        '            "args": [\n                "mcp"\n            ]\n        },\n    },\n}\n'
    )
    assert set_at(after, ["mcpServers", "excerpt"], None) == text


def test_a_missing_file_or_key_gets_the_objects_along_the_path() -> None:
    assert loads(set_at("", ["context_servers", "excerpt"], {"command": "x"})) == {
        "context_servers": {"excerpt": {"command": "x"}}
    }
    text = "{\n  // nothing yet\n}\n"
    after = set_at(text, ["servers", "excerpt"], {"type": "stdio"})
    assert "// nothing yet" in after
    assert loads(after) == {"servers": {"excerpt": {"type": "stdio"}}}


def test_taking_out_the_last_property_takes_the_comma_before_it() -> None:
    text = '{\n  "a": 1, // one\n  "b": 2\n}\n'
    assert set_at(text, ["b"], None) == '{\n  "a": 1 // one\n}\n'
    assert set_at('{"a": 1, "b": 2}', ["a"], None) == '{"b": 2}'
    assert set_at('{"a": 1}', ["z"], None) == '{"a": 1}'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1,, }', "line 1, column 9"),
        ('{"a": 1}\n{"b": 2}', "more after the value at line 2"),
        ("{\n  'a': 1\n}", "unexpected character at line 2, column 3"),
        ('{"a": 1', "unexpected end"),
    ],
)
def test_text_that_is_not_jsonc_is_an_error_with_its_place(text: str, message: str) -> None:
    with pytest.raises(JsoncError, match=re.escape(message)):
        loads(text)


def test_a_path_through_a_value_that_is_no_object_is_refused() -> None:
    with pytest.raises(JsoncError, match="mcpServers is not an object"):
        set_at('{"mcpServers": []}', ["mcpServers", "excerpt"], {"command": "x"})
    with pytest.raises(JsoncError, match="the top level is not an object"):
        set_at("[1]", ["mcpServers"], {})
