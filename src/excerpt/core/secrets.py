"""A first secret detector: private-key blocks, provider-prefixed tokens, URL passwords.

Lines where it fires are never served and never indexed. The gitleaks recipe in small: a
keyword prefilter, one regex per rule with the secret in a group, a Shannon-entropy floor on
that group, and placeholder stopwords. Long lines are only scanned in windows around keyword
hits, so a minified file cannot make it slow. Never returns a secret's text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from excerpt.core.lines import lines_matching

__all__ = ["RULES", "Finding", "secret_lines"]

_WINDOW = 512
_MAX_LINE = 4096
_PLACEHOLDER = re.compile(
    r"example|xxxx|\*\*\*|changeme|dummy|placeholder|your[_-]|<|\$\{|\{\{", re.I
)


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    keywords: tuple[str, ...]
    pattern: re.Pattern[str]
    min_entropy: float = 0.0


RULES: tuple[Rule, ...] = (
    Rule("aws-access-key", ("akia", "asia"), re.compile(r"\b((?:AKIA|ASIA)[0-9A-Z]{16})\b"), 3.0),
    Rule("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
         re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{36,255})\b"), 3.0),
    Rule("github-fine-grained", ("github_pat_",),
         re.compile(r"\b(github_pat_[A-Za-z0-9_]{40,255})\b"), 3.0),
    Rule("gitlab-token", ("glpat-",), re.compile(r"\b(glpat-[A-Za-z0-9_-]{20,})"), 3.0),
    Rule("slack-token", ("xox",), re.compile(r"\b(xox[abposr]-[A-Za-z0-9-]{10,})"), 3.0),
    Rule("stripe-key", ("sk_live", "rk_live", "sk_test", "rk_test"),
         re.compile(r"\b([rs]k_(?:live|test)_[A-Za-z0-9]{16,})"), 3.0),
    Rule("anthropic-key", ("sk-ant-",), re.compile(r"\b(sk-ant-[A-Za-z0-9_-]{32,})"), 3.5),
    Rule("openai-key", ("sk-",), re.compile(r"\b(sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,})"), 3.5),
    Rule("google-api-key", ("aiza",), re.compile(r"\b(AIza[0-9A-Za-z_-]{35})"), 3.0),
    Rule("npm-token", ("npm_",), re.compile(r"\b(npm_[A-Za-z0-9]{36})\b"), 3.0),
    Rule("pypi-token", ("pypi-",), re.compile(r"\b(pypi-AgE[A-Za-z0-9_-]{50,})"), 3.0),
    Rule("sendgrid-key", ("sg.",),
         re.compile(r"\b(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})"), 3.0),
    Rule("url-password", ("://",),
         re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@'\"]{1,64}:([^\s/:@'\"]{3,128})@"), 2.5),
)  # fmt: skip
_KEYWORDS = re.compile(
    "|".join(re.escape(k) for rule in RULES for k in rule.keywords) + r"|PRIVATE KEY", re.I
)
# The same keywords for lower-cased text: case-sensitive scanning is an order of magnitude
# faster than re.I over a whole file.
_KEYWORDS_LOWER = re.compile(
    "|".join(re.escape(k.lower()) for rule in RULES for k in rule.keywords) + r"|private key"
)
_KEY_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret on lines ``start..end`` (1-based, inclusive), by rule id; never its text."""

    rule: str
    start_line: int
    end_line: int
    severity: str = "fail"
    preview: str = ""
    fingerprint: str = ""


def _entropy(text: str) -> float:
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _windows(line: str) -> list[str]:
    if len(line) <= _MAX_LINE:
        return [line]
    return [line[max(0, m.start() - _WINDOW) : m.end() + _WINDOW] for m in _KEYWORDS.finditer(line)]


def _line_rule(line: str) -> str | None:
    for window in _windows(line):
        lowered = window.lower()
        for rule in RULES:
            if not any(k in lowered for k in rule.keywords):
                continue
            for match in rule.pattern.finditer(window):
                secret = match.group(1)
                if _PLACEHOLDER.search(secret) or _entropy(secret) < rule.min_entropy:
                    continue
                return rule.id
    return None


def _scan_order(hits: list[int], lines: list[str]) -> list[int]:
    """Lines to look at: keyword lines, and every line after a key block's BEGIN until END."""
    wanted: set[int] = set(hits)
    for number in hits:
        if _KEY_BEGIN.search(lines[number - 1]) and not _KEY_END.search(lines[number - 1]):
            end = next(
                (n for n in range(number + 1, len(lines) + 1) if _KEY_END.search(lines[n - 1])),
                len(lines),
            )
            wanted.update(range(number, end + 1))
    return sorted(wanted)


def secret_lines(text: str) -> list[Finding]:
    """Every secret finding in ``text``, by line (``\\n``-separated, 1-based)."""
    hits = lines_matching(_KEYWORDS_LOWER, text.lower())  # one pass; usually nothing to do
    if not hits:
        return []
    findings: list[Finding] = []
    lines = text.split("\n")
    in_key: int | None = None
    for number in _scan_order(hits, lines):
        line = lines[number - 1]
        if in_key is not None:
            if _KEY_END.search(line):
                findings.append(Finding("private-key", in_key, number))
                in_key = None
            continue
        if _KEY_BEGIN.search(line):
            if _KEY_END.search(line):
                findings.append(Finding("private-key", number, number))
            else:
                in_key = number
            continue
        if _KEYWORDS.search(line):
            rule = _line_rule(line)
            if rule is not None:
                findings.append(Finding(rule, number, number))
    if in_key is not None:  # an unterminated block: everything after BEGIN
        findings.append(Finding("private-key", in_key, len(lines)))
    return findings


def decode_for_scan(data: bytes) -> str | None:
    """Interim: UTF-8, else latin-1; None when a NUL sits in the first 8 KiB."""
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def scan_text(text: str, *, salt: bytes | None = None) -> list[Finding]:
    """Interim: the line findings."""
    return secret_lines(text)
