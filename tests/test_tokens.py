"""Exact o200k counts (core/tokens): the sum over o200k's own pieces, remembered in a store
whose merge ranks count new pieces without the vocabulary, always equal to the tokenizer's
count of the whole text."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from excerpt.core import tokens

ROOT = Path(__file__).resolve().parents[1]


def reference(text: str) -> int:
    """bpe-openai's own count of the whole text (special tokens as ordinary text)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        encoding: Any = bpe_openai.get_encoding("o200k_base")
    return len(encoding.encode(text, disallowed_special=()))


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process would: nothing remembered in memory."""
    monkeypatch.setattr(tokens, "_memo", {})
    monkeypatch.setattr(tokens, "_texts", OrderedDict())


SAMPLES = [
    "",
    "hello world",
    "<|endoftext|> is text here <|endofprompt|>",
    "héllo wörld 日本語 🎉 \r\n\t  x\n\n\n    indented",
    "a" * 5000,
    " \n" * 300,
    "camelCaseName snake_case_name SCREAMING_CASE 12345678901 0xDEADbeef",
    "don't it's we'll THEY'RE I'M you've he'd",
]


@pytest.mark.parametrize("text", SAMPLES, ids=range(len(SAMPLES)))
def test_the_count_is_the_tokenizers_count_of_the_whole_text(text: str) -> None:
    assert tokens.o200k_count(text) == reference(text)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_any_text_counts_as_the_tokenizer_counts_it(text: str) -> None:
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates
    assert tokens.o200k_count(text) == reference(text)


def test_a_seeded_store_counts_new_pieces_by_merging_without_the_vocabulary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "pieces.sqlite3"
    tokens._encoding.cache_clear()  # a first process: loads the vocabulary, seeds the store
    tokens.TokenCounter(store)("seed the store")
    sources = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "src").rglob("*.py"))]
    sources.append((ROOT / "README.md").read_text(encoding="utf-8"))
    expected = [reference(text) for text in sources]
    monkeypatch.setattr(tokens, "_memo", {})  # a later process: nothing loaded
    monkeypatch.setattr(tokens, "_texts", OrderedDict())
    tokens._encoding.cache_clear()

    def no_vocabulary(piece: str) -> int:
        raise AssertionError(f"the vocabulary was needed for {piece!r}")

    monkeypatch.setattr(tokens, "_count_piece", no_vocabulary)
    later = tokens.TokenCounter(store)
    assert [later(text) for text in sources] == expected


def test_a_store_that_cannot_be_written_changes_no_count(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    counter = tokens.TokenCounter(blocked / "pieces.sqlite3")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert counter(text) == reference(text)
    assert counter.store is None  # given up, counted without it


def test_a_lone_surrogate_counts_as_its_escape() -> None:
    assert tokens.o200k_count("name\udcff.py") == reference("name\\udcff.py")
