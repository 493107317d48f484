"""The closed vocabularies: defined once, equal to the shipped schema, enforced on records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from excerpt.core.vocabulary import (
    EdgeKind,
    GraphIntegrity,
    GraphSource,
    ItemKind,
    OmissionReason,
    Signal,
    WarningCode,
    members,
)
from excerpt.pack import Item, Omitted, pack_schema
from excerpt.pack.model import BudgetDict, ItemDict, OmittedDict, PackDict, ReasonDict
from excerpt.pipeline import export_graph


def _enum(*path: str) -> list[Any]:
    node: Any = pack_schema()
    for key in path:
        node = node[key]
    enum: list[Any] = node["enum"]
    return enum


@pytest.mark.parametrize(
    ("vocabulary", "where"),
    [
        pytest.param(ItemKind, ("$defs", "item", "properties", "kind"), id="item-kind"),
        pytest.param(
            OmissionReason, ("$defs", "omitted", "properties", "reason"), id="omission-reason"
        ),
        pytest.param(Signal, ("$defs", "reason", "properties", "signal"), id="signal"),
        pytest.param(WarningCode, ("$defs", "warning", "properties", "code"), id="warning-code"),
        pytest.param(
            GraphSource, ("properties", "graph", "oneOf", 1, "properties", "source"), id="source"
        ),
        pytest.param(
            GraphIntegrity,
            ("properties", "graph", "oneOf", 1, "properties", "integrity"),
            id="integrity",
        ),
    ],
)
def test_a_vocabulary_lists_the_schema_enum_in_order(
    vocabulary: object, where: tuple[Any, ...]
) -> None:
    assert list(members(vocabulary)) == _enum(*where)


def test_an_omission_outside_the_vocabulary_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown omission reason"):
        Omitted(path="a.py", reason="because")  # type: ignore[arg-type]
    assert Omitted(path="a.py", reason="budget").to_dict() == {"path": "a.py", "reason": "budget"}


def test_an_item_kind_outside_the_vocabulary_is_refused() -> None:
    fields: dict[str, Any] = dict(
        rank=1, path="a.py", start_line=1, end_line=1, source_sha256="0" * 64,
        excerpt_sha256="0" * 64, bytes=2, handle="a.py#L1-L1@" + "0" * 16, truncated=False,
        score=1.0, reasons=(), text="x\n",
    )  # fmt: skip
    with pytest.raises(ValueError, match="unknown item kind"):
        Item(kind="chunk", **fields)  # type: ignore[arg-type]
    assert Item(kind="window", **fields).to_dict()["kind"] == "window"


def test_the_index_graph_has_only_known_edge_kinds(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (repo / "pkg" / "core.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    (repo / "pkg" / "api.py").write_text("from pkg.core import f\n", encoding="utf-8")
    (repo / "tests" / "test_core.py").write_text("from pkg.core import f\n", encoding="utf-8")
    doc = export_graph(repo, cache_dir=tmp_path / "cache")
    kinds = {edge["kind"] for edge in doc["edges"]}
    assert kinds == set(members(EdgeKind))


def _keys(typed: Any) -> set[str]:
    return set(typed.__required_keys__) | set(typed.__optional_keys__)


@pytest.mark.parametrize(
    ("typed", "where"),
    [
        pytest.param(PackDict, (), id="pack"),
        pytest.param(BudgetDict, ("properties", "budget"), id="budget"),
        pytest.param(ItemDict, ("$defs", "item"), id="item"),
        pytest.param(OmittedDict, ("$defs", "omitted"), id="omitted"),
        pytest.param(ReasonDict, ("$defs", "reason"), id="reason"),
    ],
)
def test_a_wire_typeddict_has_the_schema_properties(typed: Any, where: tuple[str, ...]) -> None:
    node: Any = pack_schema()
    for key in where:
        node = node[key]
    assert _keys(typed) == set(node["properties"])
