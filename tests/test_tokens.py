"""Exact o200k counts (core/tokens): always the package's own count of the whole text, for a
text of any length, without importing the package's Python layer and its vocabularies."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from excerpt.core import tokens

ROOT = Path(__file__).resolve().parents[1]


def reference(text: str) -> int:
    """bpe-openai's public count of the whole text (special tokens as ordinary text)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        encoding: Any = bpe_openai.get_encoding("o200k_base")
    return len(encoding.encode(text, disallowed_special=()))


def merged(text: str) -> int:
    """An independent count: tiktoken's byte-pair merge over the published pre-tokenizer,
    in Python, from the vocabulary's merge ranks."""
    import regex
    from bpe_openai import registry

    vocabulary = registry.o200k_base()
    ranks = vocabulary["mergeable_ranks"]
    total = 0
    for piece in regex.findall(vocabulary["pat_str"], text):
        parts = [bytes([b]) for b in piece.encode("utf-8")]
        while len(parts) > 1:
            pairs = [(ranks.get(parts[i] + parts[i + 1]), i) for i in range(len(parts) - 1)]
            best = min(((r, i) for r, i in pairs if r is not None), default=None)
            if best is None:
                break
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        total += len(parts)
    return total


@pytest.fixture(autouse=True)
def fresh_memo() -> None:
    """Each test starts as a new process would: nothing remembered in memory."""
    tokens._texts.clear()


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
    if len(text) <= 1000:  # the Python merge is quadratic in a piece's length
        assert tokens.o200k_count(text) == merged(text)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_any_text_counts_as_the_tokenizer_counts_it(text: str) -> None:
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates
    assert tokens.o200k_count(text) == reference(text)


def test_the_project_s_own_sources_count_as_an_independent_merge_counts_them() -> None:
    sources = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "src").rglob("*.py"))[:40]]
    assert [tokens.o200k_count(t) for t in sources] == [merged(t) for t in sources]


@pytest.mark.parametrize(
    ("text", "cut"),
    [(" x" * 600_000, 100_000), ("a" * 1_200_000, 100_000), ("x = 1\n" * 250_000, 60_000)],
    ids=["one-million-short-words", "one-million-letters", "many-lines"],
)
def test_a_text_past_a_million_characters_or_200k_tokens_is_counted(text: str, cut: int) -> None:
    # the package's public encoder refuses such a text; a 1 MB file is still a file
    with pytest.raises(ValueError):
        reference(text)
    expected = sum(reference(text[i : i + cut]) for i in range(0, len(text), cut))
    assert tokens.o200k_count(text) == expected  # each cut falls between two pieces


def test_a_megabyte_of_blanks_is_counted() -> None:
    # one piece of 1.2 million characters: refused above, counted here
    count = tokens.o200k_count(" " * 1_200_000)
    assert 0 < count < tokens.o200k_count(" " * 1_200_000 + "x") + 1


def test_a_lone_surrogate_counts_as_its_escape() -> None:
    assert tokens.o200k_count("name\udcff.py") == reference("name\\udcff.py")


def test_counting_loads_no_vocabulary_in_python() -> None:
    probe = (
        "import sys, time\n"
        "from excerpt.core.tokens import o200k_count\n"
        "o200k_count('def main() -> None: pass')\n"
        "print(sorted(m for m in sys.modules if m.startswith('bpe_openai')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "['bpe_openai._bindings']"  # the extension alone, not its package


def test_without_the_direct_load_the_package_s_extension_counts_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing() -> Any:
        raise ImportError("moved")

    monkeypatch.setattr(tokens, "_extension", missing)
    tokens._tokenizer.cache_clear()
    try:
        assert tokens.o200k_count(SAMPLES[3]) == reference(SAMPLES[3])
    finally:
        tokens._tokenizer.cache_clear()
