"""Exact o200k_base token counts, offline (``bpe-openai`` ships the vocabulary).

What a model is charged for a text is its token count; every model-facing rendering
reports it beside its byte size.

The count comes from ``bpe-openai``'s Rust tokenizer, which carries o200k's vocabulary in the
extension itself: built in about 0.1 s, it counts a whole text of any length in linear time
(special tokens as ordinary text, as a client forwards a tool result). The package's Python
layer is not imported for it: importing that layer decodes three vocabularies (about 3 s)
and refuses texts of a million characters, neither of which a count needs. The extension is
loaded from the installed package by its import machinery; if that ever fails, the package is
imported the ordinary way and the same extension counts.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import re
import warnings
from typing import Any

from excerpt.core.memo import Memo, register

__all__ = ["TokenCounter", "o200k_count"]

_SURROGATE = re.compile("[\ud800-\udfff]")
# Whole texts counted lately: a pack's excerpts and its rendering are counted again as the
# figures settle and across budgets (bounded, least recently used first out).
_texts: Memo[str, int] = register(Memo("token_counts", max_entries=1024))
_EXTENSION = "bpe_openai._bindings"


def _extension() -> Any:
    """``bpe_openai._bindings`` without running ``bpe_openai/__init__.py``."""
    package = importlib.util.find_spec("bpe_openai")
    if package is None or not package.submodule_search_locations:
        raise ImportError("bpe-openai is not installed")
    spec = importlib.machinery.PathFinder.find_spec(
        _EXTENSION, list(package.submodule_search_locations)
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"{_EXTENSION} is not in the installed bpe-openai")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def _tokenizer() -> Any:
    try:
        bindings = _extension()
    except (ImportError, OSError, AttributeError):
        with warnings.catch_warnings():  # it loads its vocabularies with a deprecated API
            warnings.simplefilter("ignore", DeprecationWarning)
            bindings = importlib.import_module(_EXTENSION)
    return bindings.tokenizer_for_encoding("o200k_base")


class TokenCounter:
    """Exact o200k counts, the texts counted lately remembered in the process."""

    def __call__(self, text: str) -> int:
        return _texts.get_or_make(text, lambda: _count(text))


def _count(text: str) -> int:
    # a lone surrogate (an undecodable byte of a file name) is counted as the ``\\uXXXX``
    # escape every rendering writes in its place
    return int(_tokenizer().count(_SURROGATE.sub(_escape, text)))


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def o200k_count(text: str) -> int:
    """The exact number of o200k_base tokens of ``text`` (special tokens counted as text)."""
    return TokenCounter()(text)
