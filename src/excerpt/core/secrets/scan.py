"""The scan: one keyword pass over the lower-cased text finds the lines worth a look; on
each, the rules whose keywords occur run their patterns, and each candidate secret must
pass the filters. Private-key blocks are followed across lines.

With RE2 every pattern runs in linear time on whole lines. Without it, lines longer than
4 KiB are only matched in windows around keyword hits, and a line with too many windows to
scan is reported as ``scan-limit``, never passed over in silence.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass

from excerpt.core.linear import LINEAR, Pattern, compile_pattern
from excerpt.core.secrets.filters import (
    entropy,
    is_placeholder,
    is_prose,
    names_placeholder,
    printable_base64,
)
from excerpt.core.secrets.rules import RULES, Rule, Severity

__all__ = ["ALLOW_MARK", "SCAN_LIMIT", "Finding", "scan"]

ALLOW_MARK = "excerpt:allow"
SCAN_LIMIT = "scan-limit"  # the rule id of a line the bounded (non-RE2) scan could not finish
_MAX_LINE = 4096  # without RE2: longer lines are matched in windows around keyword hits
_WINDOW = 512
_MAX_WINDOW_CHARS = 1 << 18  # without RE2: window text per line and rule
_MAX_CANDIDATES = 256  # matches looked at per rule and line
_MAX_FINDINGS = 16  # findings per rule and line
_DECODE_MIN = 32  # base64 values at least this long are decoded once
_KEY_BEGIN = re.compile(rb"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(rb"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_HEADER = re.compile(rb"\s*[A-Za-z][A-Za-z-]{0,40}:")  # Proc-Type:, DEK-Info:, Comment:
# a key inside string literals: escapes, quotes, and a ``+`` that joins literals (one inside
# the base64, between its characters, is the body's own)
_KEY_BODY_JUNK = re.compile(rb"\\[nr]|[\"'`,;()]|\+(?![A-Za-z0-9/=])|(?<![A-Za-z0-9/=])\+")
_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/=]{16,}")
_BASE64_TAIL = re.compile(rb"[A-Za-z0-9+/=]{2,}")
_KEY_ENTROPY_CLOSED = 3.5
_KEY_ENTROPY_OPEN = 4.5
_KEY_MAX_LINES = 400  # a body longer than any key's (ML-DSA-87's is about 100 lines)
_BASE64_LINE = re.compile(rb"[A-Za-z0-9+/=]*")
_ESCAPED = re.compile(r"\\u00([2-7][0-9a-fA-F])|\\/")
_ALLOW = ALLOW_MARK.encode()
_KEYWORDS = tuple(dict.fromkeys(k.encode() for rule in RULES for k in rule.keywords))


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """A secret on lines ``start_line..end_line`` (1-based, inclusive); never its text."""

    rule: str
    severity: Severity
    start_line: int
    end_line: int
    preview: str  # the first few characters (at most 4, at most a quarter) and the length
    fingerprint: str  # HMAC-SHA256(salt, rule NUL secret), 16 hex; "" without a salt


@dataclass(frozen=True, slots=True)
class _Compiled:
    rules: tuple[Rule, ...]
    compiled: list[Pattern | None]  # each rule's pattern, compiled the first time it runs
    prefilter: Pattern  # every rule's keywords (or prefilter fragments), one pass
    keyword_pass: Pattern  # the literal keywords, longest first
    by_keyword: dict[bytes, tuple[int, ...]]  # a keyword found -> rules to run (its own and
    # those of the keywords inside it, which a non-overlapping pass does not report), filled
    # as keywords are found
    linear: bool

    def pattern(self, index: int) -> Pattern:
        found = self.compiled[index]
        if found is None:
            found = self.compiled[index] = compile_pattern(
                self.rules[index].pattern, linear=self.linear
            )
        return found


def _fragments(rule: Rule) -> tuple[str, ...]:
    return rule.prefilter or tuple(re.escape(k) for k in rule.keywords)


@functools.cache
def compiled(linear: bool = LINEAR) -> _Compiled:
    """The rule table for one engine: its keyword passes compiled now, and each rule's
    pattern when first needed (a pack scans a few files, and most rules never run)."""
    fragments = dict.fromkeys(f for rule in RULES for f in _fragments(rule))
    keywords = sorted({k for rule in RULES for k in rule.keywords}, key=lambda k: (-len(k), k))
    return _Compiled(
        rules=RULES,
        compiled=[None] * len(RULES),
        prefilter=compile_pattern("|".join(fragments), linear=linear),
        keyword_pass=compile_pattern("|".join(re.escape(k) for k in keywords), linear=linear),
        by_keyword={},
        linear=linear,
    )


@functools.lru_cache(maxsize=256)
def _partial_prefilter(indices: tuple[int, ...]) -> Pattern:
    """Without RE2: the keyword pass over only the rules whose keywords occur in a text (one
    alternation of a hundred branches is slow in ``re``)."""
    fragments = dict.fromkeys(f for i in indices for f in _fragments(RULES[i]))
    return compile_pattern("|".join(fragments), linear=False)


def _rules_on(engine: _Compiled, low: bytes) -> list[int]:
    """The rules whose keywords occur in a lower-cased line, in table order (a long line is
    searched for each keyword: one pass per keyword beats a match object per hit)."""
    if len(low) > _MAX_LINE:
        found = {k for k in _KEYWORDS if k in low}
    else:
        found = set(engine.keyword_pass.findall(low))
    rules: set[int] = set()
    for keyword in found:
        indices = engine.by_keyword.get(keyword)
        if indices is None:
            word = keyword.decode()
            indices = engine.by_keyword[keyword] = tuple(
                i for i, rule in enumerate(engine.rules) if any(k in word for k in rule.keywords)
            )
        rules.update(indices)
    return sorted(rules)


def _preview(secret: str) -> str:
    shown = min(4, len(secret) // 4)
    return f"{secret[:shown]}… ({len(secret)} chars)"


def _fingerprint(rule: str, secret: str, salt: bytes | None) -> str:
    if not salt:
        return ""
    message = f"{rule}\0{secret}".encode("utf-8", "surrogatepass")
    return hmac.new(salt, message, hashlib.sha256).hexdigest()[:16]


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


class _Scan:
    """One text's scan: its findings and what the filters need."""

    def __init__(self, engine: _Compiled, tokens: Callable[[str], int], salt: bytes | None) -> None:
        self.engine = engine
        self.tokens = tokens
        self.salt = salt
        self.findings: list[Finding] = []

    def add(self, rule: str, severity: Severity, lines: tuple[int, int], secret: str) -> None:
        self.findings.append(
            Finding(
                rule=rule, severity=severity, start_line=lines[0], end_line=lines[1],
                preview=_preview(secret) if secret else "",
                fingerprint=_fingerprint(rule, secret, self.salt) if secret else "",
            )
        )  # fmt: skip

    def accepts(self, rule: Rule, secret: str, match: str) -> bool:
        """Whether a candidate is a secret by the rule's filters (cheapest first)."""
        if is_placeholder(secret, generic=rule.stopwords):
            return False
        if rule.entropy and entropy(secret) < rule.entropy:
            return False
        if rule.check is not None and not rule.check(secret, match):
            return False
        return not (rule.prose and is_prose(secret, self.tokens))

    def decoded(self, secret: str, number: int) -> bool:
        """One level of base64: a long value that decodes to text holding a provider
        secret is reported as that secret."""
        if len(secret) < _DECODE_MIN:
            return False
        text = printable_base64(secret)
        if text is None:
            return False
        before = len(self.findings)
        data = text.encode("utf-8", "surrogatepass")
        for index in _rules_on(self.engine, data.lower()):
            if self.engine.rules[index].severity == "fail":
                self.line_rule(index, data, data.lower(), number, [])
        return len(self.findings) > before

    def line_rule(
        self, index: int, line: bytes, low: bytes, number: int, taken: list[tuple[int, int]]
    ) -> None:
        """The findings of one rule on one line; ``taken`` holds the spans already reported
        on it (a span an earlier rule reported is not reported again)."""
        rule = self.engine.rules[index]
        pattern = self.engine.pattern(index)
        found = looked = 0
        for offset, part in self.parts(rule, line, low, number):
            for spans in pattern.spans(part):
                looked += 1
                if looked > _MAX_CANDIDATES or found >= _MAX_FINDINGS:
                    return
                start, end = next((s for s in reversed(spans[1:]) if s[0] >= 0), spans[0])
                span = (offset + start, offset + end)
                if any(s < span[1] and span[0] < e for s, e in taken):
                    continue
                secret = _text(part[start:end])
                if rule.decode and self.decoded(secret, number):
                    taken.append(span)
                    continue
                if self.accepts(rule, secret, _text(part[spans[0][0] : spans[0][1]])):
                    taken.append(span)
                    self.add(rule.id, rule.severity, (number, number), secret)
                    found += 1

    def parts(self, rule: Rule, line: bytes, low: bytes, number: int) -> list[tuple[int, bytes]]:
        """What a rule's pattern runs on: the whole line, or (without RE2, on a long line)
        merged windows around its keywords."""
        if self.engine.linear or len(line) <= _MAX_LINE:
            return [(0, line)]
        spans: list[list[int]] = []
        for keyword in rule.keywords:
            word = keyword.encode()
            at = low.find(word)
            while at >= 0:
                spans.append([max(0, at - _WINDOW), at + len(word) + _WINDOW])
                at = low.find(word, at + 1)
        spans.sort()
        merged: list[list[int]] = []
        for span in spans:
            if merged and span[0] <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], span[1])
            else:
                merged.append(span)
        out, total = [], 0
        for start, end in merged:
            total += end - start
            if total > _MAX_WINDOW_CHARS:
                self.add(SCAN_LIMIT, "warn", (number, number), "")
                break
            out.append((start, line[start:end]))
        return out


def _lines_matching(pattern: Pattern, data: bytes) -> list[int]:
    """1-based numbers of the lines of ``data`` where ``pattern`` matches, one search per
    matching line (``excerpt.core.lines.lines_matching`` over bytes)."""
    found: list[int] = []
    number, counted, at = 1, 0, 0
    while (start := pattern.search(data, at)) >= 0:
        number += data.count(b"\n", counted, start)
        counted = start
        found.append(number)
        end = data.find(b"\n", start)
        if end < 0:
            break
        at = end + 1
    return found


def _hit_lines(engine: _Compiled, low: bytes) -> list[int]:
    if engine.linear:
        return _lines_matching(engine.prefilter, low)
    present = tuple(
        i for i, rule in enumerate(engine.rules) if any(k.encode() in low for k in rule.keywords)
    )
    if not present:
        return []
    return _lines_matching(_partial_prefilter(present), low)


def _unescape(text: str) -> str:
    """JSON/JavaScript ``\\u00XX`` escapes of printable ASCII and ``\\/`` undone (one line
    stays one line), so an escaped token reads as itself."""
    if "\\u00" not in text and "\\/" not in text:
        return text
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else "/", text)


def _key_blocks(scan: _Scan, lines: list[bytes], begins: list[int]) -> None:
    """Private-key blocks whose body is on the lines after BEGIN: BEGIN to END, or to the
    last body line when END is missing. Each line is walked at most once."""
    walked = 0
    for number in begins:
        if number <= walked:
            continue
        line = lines[number - 1]
        match = _KEY_BEGIN.search(line)
        if match is None or _ALLOW in line or _KEY_END.search(line, match.end()):
            continue  # not a BEGIN line, allowed, or a whole key on one line (a rule's)
        body: list[bytes] = []
        last, end_line = number, None
        for n in range(number + 1, len(lines) + 1):
            walked = n
            text = lines[n - 1]
            if _KEY_END.search(text):
                end_line = n
                break
            if _KEY_BEGIN.search(text):
                walked = n - 1
                break
            if _KEY_HEADER.match(text) or not text.strip():
                continue
            # the body's base64, wherever it sits on the line: after a log line's timestamp,
            # inside a string literal, behind a comment's `` * ``
            cleaned = _KEY_BODY_JUNK.sub(b" ", text)
            runs = _BASE64_RUN.findall(cleaned)
            if not runs and n < len(lines) and _KEY_END.search(lines[n]):
                runs = _BASE64_TAIL.findall(cleaned)  # the body's short last line
            if not runs or n - number > _KEY_MAX_LINES:
                break
            body.append(max(runs, key=len))
            last = n
        secret = _text(b"".join(body))
        # a whole BEGIN..END block is a key unless its body is a placeholder; a body cut off
        # (no END) must also look random
        floor = _KEY_ENTROPY_CLOSED if end_line is not None else _KEY_ENTROPY_OPEN
        if len(secret) < 40 or names_placeholder(secret[:4096]) or entropy(secret[:4096]) < floor:
            continue
        if end_line is not None and _ALLOW in lines[end_line - 1]:
            continue
        scan.add("private-key", "fail", (number, end_line or last), secret)


def scan(
    text: str, *, tokens: Callable[[str], int], salt: bytes | None, linear: bool = LINEAR
) -> list[Finding]:
    """Every finding in ``text``, by line; ``tokens`` counts o200k tokens for the
    natural-language filter."""
    data = _unescape(text).encode("utf-8", "surrogatepass")
    low = data.lower()  # ASCII only: every keyword is ASCII, and offsets stay put
    engine = compiled(linear)
    hits = _hit_lines(engine, low)
    if not hits:
        return []
    lines = data.split(b"\n")
    lows = low.split(b"\n")
    result = _Scan(engine, tokens, salt)
    begins = []
    for number in hits:
        line, lowl = lines[number - 1], lows[number - 1]
        if b"private key" in lowl:
            begins.append(number)
        if _ALLOW in line:
            continue
        taken: list[tuple[int, int]] = []
        for index in _rules_on(engine, lowl):
            result.line_rule(index, line, lowl, number, taken)
    _key_blocks(result, lines, begins)
    return sorted(result.findings, key=lambda f: (f.start_line, f.end_line, f.rule))
