"""Token streams and sequence rules: how a text (a path, a task) meets the vocabulary. Pure.

A text becomes the identifier pieces of its words in order (``excerpt.index.tokens``), plus,
for each word of several pieces, its joined form spanning them: ``apiKey`` is ``api key`` and
also ``apikey``. A rule is a token sequence; it matches consecutive pieces, where any step
may instead take a whole word by its joined form (``GitHub Actions`` → ``github action``).
A mask is a rule whose matched pieces never count for its concept.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from excerpt.index.tokens import split_identifier

__all__ = ["RuleIndex", "Terms", "terms_of"]

_WORD = re.compile(r"\w+")

Rule = tuple[str, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Terms:
    """The pieces of a text in order; ``joined[i]`` holds ``(joined form, end)`` of each word
    of several pieces that starts at piece ``i``."""

    pieces: tuple[str, ...]
    joined: Mapping[int, tuple[tuple[str, int], ...]]

    def steps(self, at: int) -> Iterator[tuple[str, int]]:
        """Each token readable at piece ``at``, with the piece index after it."""
        if at < len(self.pieces):
            yield self.pieces[at], at + 1
            yield from self.joined.get(at, ())


def _split_joined(found: tuple[str, ...]) -> tuple[tuple[str, ...], str | None]:
    """``split_identifier`` appends the joined form of a word of several pieces; separate it.

    It is recognised by length (at least the sum of the others): a real last piece that long
    would have made a joined form over the 32-character cap, which is then not appended.
    """
    if len(found) >= 2 and len(found[-1]) >= sum(len(p) for p in found[:-1]):
        return found[:-1], found[-1]
    return found, None


def terms_of(text: str) -> Terms:
    """The terms of ``text``: its ``\\w+`` words, each split as an identifier."""
    pieces: list[str] = []
    joined: dict[int, tuple[tuple[str, int], ...]] = {}
    for word in _WORD.findall(text):
        parts, whole = _split_joined(split_identifier(word))
        start = len(pieces)
        pieces.extend(parts)
        if whole is not None:
            joined[start] = ((whole, len(pieces)),)
    return Terms(tuple(pieces), joined)


def _ends(terms: Terms, rest: Rule, at: int) -> Iterator[int]:
    if not rest:
        yield at
        return
    for token, after in terms.steps(at):
        if token == rest[0]:
            yield from _ends(terms, rest[1:], after)


@dataclass(frozen=True, slots=True, eq=False)
class RuleIndex:
    """The rules and masks of several concepts (by index), keyed by their first token."""

    first: Mapping[str, tuple[tuple[int, bool, Rule], ...]]

    @classmethod
    def build(cls, concepts: Sequence[tuple[Iterable[Rule], Iterable[Rule]]]) -> RuleIndex:
        """From ``(rules, masks)`` per concept. A rule of several tokens also matches its
        joined form as one token (``credit card`` → ``creditcard``)."""
        first: dict[str, list[tuple[int, bool, Rule]]] = defaultdict(list)
        for index, (rules, masks) in enumerate(concepts):
            for is_mask, group in ((False, rules), (True, masks)):
                for rule in group:
                    for form in {rule, ("".join(rule),)}:
                        first[form[0]].append((index, is_mask, form[1:]))
        return cls({token: tuple(sorted(set(v))) for token, v in first.items()})

    def concepts(self, terms: Terms) -> frozenset[int]:
        """Indexes of the concepts with at least one rule match free of that concept's masks."""
        hits: dict[int, list[tuple[int, int]]] = defaultdict(list)
        masked: dict[int, set[int]] = defaultdict(set)
        for start in range(len(terms.pieces)):
            for token, after in terms.steps(start):
                for concept, is_mask, rest in self.first.get(token, ()):
                    for end in _ends(terms, rest, after):
                        if is_mask:
                            masked[concept].update(range(start, end))
                        else:
                            hits[concept].append((start, end))
        return frozenset(
            concept
            for concept, spans in hits.items()
            if any(masked[concept].isdisjoint(range(s, e)) for s, e in spans)
        )
