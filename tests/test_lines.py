"""Line semantics: splitting keeps every byte, and a pattern's matching lines are found by
one scan whatever the density of matches."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from excerpt.core.lines import (
    line_count,
    lines_containing,
    lines_matching,
    slice_lines,
    split_lines,
)

_TEXT = st.text(alphabet="ab\n\r xé.(*\U0001f600", max_size=300)


@given(st.lists(st.sampled_from([b"a", b"b", b"\n", b"\r"]), max_size=200).map(b"".join))
@pytest.mark.reliability("B2.14", cases=200)
def test_split_lines_keeps_every_byte_and_counts_as_line_count(data: bytes) -> None:
    lines = split_lines(data)
    assert b"".join(lines) == data
    assert len(lines) == line_count(data)
    assert all(line.endswith(b"\n") for line in lines[:-1])
    if lines:
        assert slice_lines(lines, 1, len(lines)) == data


@given(_TEXT, st.sampled_from(["a", "ab|x", "b b", "(?!)", "^a", "a$"]))
def test_lines_matching_is_the_lines_where_a_match_starts(text: str, source: str) -> None:
    pattern = re.compile(source, re.M)
    expected = []
    for number, line in enumerate(text.split("\n"), start=1):
        if pattern.search(line):
            expected.append(number)
    assert lines_matching(pattern, text) == expected


def test_lines_matching_on_a_text_where_every_line_matches() -> None:
    text = "key = 1\n" * 20_000
    assert lines_matching(re.compile("key"), text) == list(range(1, 20_001))


@pytest.mark.parametrize("linear", [True, False], ids=["re2", "find"])
@given(
    text=_TEXT,
    needles=st.lists(
        st.sampled_from(["a", "ab", "b b", "x", "ba", "r", "é", "a.", "(*"]), max_size=4
    ),
)
def test_lines_containing_is_lines_matching_of_the_alternation(
    linear: bool, text: str, needles: list[str]
) -> None:
    pattern = re.compile("|".join(re.escape(n) for n in needles) or "(?!)")
    assert lines_containing(needles, text, linear=linear) == lines_matching(pattern, text)


def test_lines_containing_refuses_a_needle_across_lines() -> None:
    with pytest.raises(ValueError, match="one line"):
        lines_containing(["a\nb"], "a\nb")
