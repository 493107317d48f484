"""The secret detector, shared by the gate, the pack and the index (which never hold a
secret, not even as terms).

In: text (or bytes, through ``decode_for_scan``). Out: ``Finding`` records by line: rule,
severity, a masked preview and, given a salt, a salted fingerprint. Never the secret's text,
never its plain hash.

The gitleaks recipe with a natural-language filter: a keyword prefilter (one pass over the
lower-cased text), one pattern per rule with the secret in a group, then filters —
placeholders (``EXAMPLE``, ``xxxx``, ``${VAR}``, ``{{ var }}``, ``<your-key>``, runs of one
character, sequential alphabets), a Shannon-entropy floor, structural checks, and for rules
without a fixed prefix the natural-language filter (a candidate averaging >= 2.5 characters
per o200k token is prose or an identifier, not a key). Patterns run on RE2 (linear time)
when it can be imported, else on ``re`` within bounded windows. A line carrying
``excerpt:allow`` is not reported.

``scan_text`` counts tokens exactly (the vocabulary is loaded the first time a candidate
reaches that filter) unless given a counter; ``secret_lines``, on the pack's and the index's
path, uses a vocabulary-free estimate that errs towards keeping a candidate, so what it
excludes is at least what the exact filter reports, give or take the estimate's misses.
"""

from __future__ import annotations

from collections.abc import Callable

from excerpt.core.secrets.decode import decode_for_scan
from excerpt.core.secrets.filters import approximate_tokens
from excerpt.core.secrets.rules import RULES, Rule, Severity
from excerpt.core.secrets.scan import ALLOW_MARK, SCAN_LIMIT, Finding, scan

__all__ = [
    "ALLOW_MARK",
    "RULES",
    "SCAN_LIMIT",
    "Finding",
    "Rule",
    "Severity",
    "decode_for_scan",
    "scan_text",
    "secret_lines",
    "without_secret_lines",
]


def _exact_tokens(text: str) -> int:
    from excerpt.core.tokens import o200k_count  # the vocabulary, only when needed

    return o200k_count(text)


def scan_text(
    text: str, *, salt: bytes | None = None, tokens: Callable[[str], int] | None = None
) -> list[Finding]:
    """Every finding in ``text`` (``\\n``-separated lines, 1-based), fail and warn.

    ``salt`` keys the fingerprints (none without it); ``tokens`` counts o200k tokens for the
    natural-language filter (default: exact counts, e.g. pass a ``TokenCounter`` with a
    store to avoid loading the vocabulary).
    """
    return scan(text, tokens=tokens or _exact_tokens, salt=salt)


def secret_lines(text: str) -> list[Finding]:
    """What the pack and the index exclude: every finding (fail and warn), unsalted, with
    the natural-language filter estimated without the vocabulary (fast, and on the side of
    excluding)."""
    return scan(text, tokens=approximate_tokens, salt=None)


def without_secret_lines(text: str) -> str:
    """``text`` with every line ``secret_lines`` flags blanked (the line breaks kept): what
    the index may hold, not even a secret's terms."""
    findings = secret_lines(text)
    if not findings:
        return text
    lines = text.split("\n")
    for finding in findings:
        for number in range(finding.start_line, min(finding.end_line, len(lines)) + 1):
            lines[number - 1] = ""
    return "\n".join(lines)
