"""Ranking as data: the shipped weights are complete and documented, a variant file names
only what it changes, and a bad one is refused with the key named."""

from __future__ import annotations

import dataclasses
import re
from importlib import resources
from pathlib import Path

import pytest

from excerpt.errors import UsageError
from excerpt.pack.build import REGION_FEATURES
from excerpt.rank.weights import Weights, default_weights, load_weights


def _shipped() -> str:
    return resources.files("excerpt.rank").joinpath("weights.toml").read_text("utf-8")


def test_the_shipped_file_sets_every_weight_once_each_after_a_comment_saying_why() -> None:
    lines = _shipped().splitlines()
    keys = []
    for number, line in enumerate(lines):
        found = re.match(r"^(\w+) = ", line)
        if found:
            keys.append(found.group(1))
            above = next(x for x in reversed(lines[:number]) if not re.match(r"^\w+ = ", x))
            assert above.startswith("# "), f"{found.group(1)} has no comment above it"
    assert sorted(keys) == sorted(f.name for f in dataclasses.fields(Weights))
    assert len(keys) == len(set(keys))


def test_a_variant_changes_only_the_keys_it_names(tmp_path: Path) -> None:
    variant = tmp_path / "w.toml"
    variant.write_text("lexical_gain = 1\nwhole_shares = [0.5]\n", encoding="utf-8")
    got = load_weights(variant)
    assert got.lexical_gain == 1.0 and isinstance(got.lexical_gain, float)
    assert got.whole_shares == (0.5,)
    expected = dataclasses.replace(default_weights(), lexical_gain=1.0, whole_shares=(0.5,))
    assert got == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("lexical_gian = 1\n", "unknown weight lexical_gian"),
        ("lexical_limit = 1.5\n", "lexical_limit must be a whole number"),
        ("lexical_limit = -1\n", "lexical_limit must be a whole number"),
        ("lexical_gain = true\n", "lexical_gain must be a number"),
        ("whole_shares = 0.7\n", "whole_shares must be a list of numbers"),
        ("lexical_gain = \n", "is not valid TOML"),
        ("region_coefficients = [1.0, 2.0]\n", "region_coefficients needs 6 numbers"),
    ],
    ids=["unknown", "fraction", "negative", "bool", "not-a-list", "not-toml", "coefficients"],
)
def test_a_bad_variant_is_a_usage_error_naming_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    variant = tmp_path / "w.toml"
    variant.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(message)):
        load_weights(variant)


def test_an_unreadable_variant_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read weights"):
        load_weights(tmp_path / "missing.toml")


def test_the_region_coefficients_are_one_per_region_feature() -> None:
    assert len(default_weights().region_coefficients) == len(REGION_FEATURES)
