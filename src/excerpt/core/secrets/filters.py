"""What a candidate must pass to be reported: not a placeholder, enough entropy, not prose,
and for some formats a structural check (a JWT's header is JSON, a Basic credential decodes
to ``user:password``).

The natural-language filter: a candidate whose characters average 2.5 or more per o200k
token is text a tokenizer has seen (words, identifiers, paths), not a random key. Exact
counts need the o200k vocabulary (about a second to load), so a caller that must stay fast
passes ``approximate_tokens``, a vocabulary-free estimate that errs towards "not prose":
it splits a candidate the way o200k's pre-tokenizer does and charges each piece that does
not look like a word one token per two characters.
"""

from __future__ import annotations

import binascii
import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Callable

__all__ = [
    "PROSE_CHARS_PER_TOKEN",
    "approximate_tokens",
    "basic_credential",
    "discord_token",
    "entropy",
    "is_placeholder",
    "is_prose",
    "jwt_token",
    "names_placeholder",
    "printable_base64",
    "url_password",
]

PROSE_CHARS_PER_TOKEN = 2.5

_PLACEHOLDER = re.compile(
    r"example|xxxx|\*\*\*|\.\.\.|changeme|change_me|change-me|dummy|placeholder|"
    r"your[_ -]|yourkey|yourtoken|yoursecret|sample|redacted|insert[_ -]|replace[_ -]?me|"
    r"\$\{|\$\(|\{\{|\}\}|<|>|%\(|%s\b",
    re.I,
)
# a template's marks inside a value (a JWT's claims)
_TEMPLATE = re.compile(r"\$\{|\{\{|\}\}|<[^>]*>|%\(|%s\b|xxxx|your[_ -]|changeme|redacted", re.I)
# values that name a thing instead of being one (generic rules)
_STOPWORDS = frozenset(
    (
        "password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "apikey",
        "api_key", "null", "none", "nil", "undefined", "true", "false", "empty", "string",
        "required", "optional", "hidden", "masked", "default",
    )
)  # fmt: skip
# a value holding one of these names or marks a fixture, not a credential
_NAMING = re.compile(r"passw(?:or)?d|secret|token|dummy|fake|mock|sample|test")
# a regular expression or a call, not a value
_CODE = re.compile(r"\\[wdsb]|\(\?|\[\^|^[\[(]|\)$")
_SAME_RUN = re.compile(r"(.)\1{5,}")
_WORDISH = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]{1,3}|[^A-Za-z0-9\s]+|\s+")
_VOWELS = frozenset("aeiouAEIOU")
_CONSONANT_RUN = re.compile(r"[^aeiouy0-9\W_]{3,}", re.I)
_CLUSTERS = frozenset(
    [
        "str",
        "tch",
        "sch",
        "chr",
        "ngth",
        "nst",
        "ndl",
        "ngs",
        "nts",
        "rst",
        "rch",
        "ght",
        "thr",
        "mpl",
        "ntr",
        "ckn",
    ]
)
_RARE = re.compile(r"[jqxz]", re.I)
_HEX_ONLY = re.compile(r"[a-f]+", re.I)


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character (0 for empty text)."""
    if not text:
        return 0.0
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in Counter(text).values())


def _runs_of_four() -> frozenset[str]:
    alphabets = ("abcdefghijklmnopqrstuvwxyz", "0123456789")
    grams = {a[i : i + 4] for a in alphabets for i in range(len(a) - 3)}
    return frozenset(grams | {g[::-1] for g in grams})


_RUNS_OF_FOUR = _runs_of_four()  # a quick no for almost every real secret


def _sequential(text: str) -> bool:
    """Whether ``text`` holds a sequential alphabet: characters stepping by +1 or -1
    (``abcdef``, ``123456``, ``ZYXWVU``, case-insensitively), six in a row or four making
    half of it."""
    low = text.lower()
    if not any(low[i : i + 4] in _RUNS_OF_FOUR for i in range(len(low) - 3)):
        return False
    run = min(6, max(4, (len(low) + 1) // 2))
    up = down = 1
    for a, b in itertools.pairwise(low):
        step = ord(b) - ord(a)
        up = up + 1 if step == 1 else 1
        down = down + 1 if step == -1 else 1
        if up >= run or down >= run:
            return True
    return False


def names_placeholder(secret: str) -> bool:
    """A template word in the value (``EXAMPLE``, ``xxxx``, ``${VAR}``, ``<key>``) or a
    sequential alphabet: the test for a key block's body, where runs of one character
    (``AAAA`` in an OpenSSH key) are ordinary."""
    return _PLACEHOLDER.search(secret) is not None or _sequential(secret)


def is_placeholder(secret: str, *, generic: bool = False) -> bool:
    """A template value, not a secret: ``EXAMPLE``, ``xxxx``, ``${VAR}``, ``{{ var }}``,
    ``<your-key>``, ``changeme``, ``dummy``, a run of one character, a sequential alphabet;
    for generic rules also a word naming the value (``password``, ``null``, ``test``) or
    a regular expression."""
    if _PLACEHOLDER.search(secret) or _SAME_RUN.search(secret) or _sequential(secret):
        return True
    if not generic:
        return False
    low = secret.strip("\"'").lower()
    return low in _STOPWORDS or _NAMING.search(low) is not None or _CODE.search(low) is not None


def _wordlike(piece: str) -> bool:
    """A piece a tokenizer is likely to hold whole: a short pronounceable word (vowels a
    quarter to three fifths of it, no rare letter in a short one, no three consonants in a
    row but common clusters and doubled letters, not only the letters of hexadecimal)."""
    if not piece.isalpha() or len(piece) > 12 or (piece.isupper() and len(piece) > 4):
        return False
    if len(piece) < 3:
        return True
    vowels = sum(1 for c in piece if c in _VOWELS)
    if not 0.25 <= vowels / len(piece) <= 0.6:
        return False
    if (len(piece) < 6 and _RARE.search(piece)) or (len(piece) >= 4 and _HEX_ONLY.fullmatch(piece)):
        return False
    run = _CONSONANT_RUN.search(piece)
    if run is None:
        return True
    letters = run.group().lower()
    return letters in _CLUSTERS or any(a == b for a, b in itertools.pairwise(letters))


def approximate_tokens(text: str) -> int:
    """A vocabulary-free o200k token estimate that tends to count too many rather than too
    few: a word-like piece is one token, any other piece one per two characters."""
    total = 0
    for piece in _WORDISH.findall(text):
        if len(piece) <= 2 or _wordlike(piece):
            total += 1
        else:
            total += (len(piece) + 1) // 2
    return max(total, 1)


def is_prose(secret: str, tokens: Callable[[str], int]) -> bool:
    """Whether ``secret`` reads as language (>= 2.5 characters per token)."""
    return len(secret) >= PROSE_CHARS_PER_TOKEN * max(tokens(secret), 1)


_WHITESPACE = str.maketrans("\t\r\n", "   ")


def _b64decode(text: str) -> bytes | None:
    """``text`` as standard or URL-safe base64, padded if need be; None if it is not."""
    padded = (text + "=" * (-len(text) % 4)).replace("-", "+").replace("_", "/")
    try:
        return binascii.a2b_base64(padded.encode("ascii"), strict_mode=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return None


def printable_base64(text: str) -> str | None:
    """``text`` decoded from base64 when that gives printable ASCII text, else None."""
    raw = _b64decode(text.rstrip("="))
    if raw is None or not raw:
        return None
    try:
        decoded = raw.decode("ascii")
    except UnicodeDecodeError:
        return None
    return decoded if decoded.translate(_WHITESPACE).isprintable() else None


def basic_credential(secret: str, _match: str) -> bool:
    """A Basic credential: base64 of ``user:password`` with a real password."""
    decoded = printable_base64(secret)
    if decoded is None or ":" not in decoded:
        return False
    user, _, password = decoded.partition(":")
    return bool(user) and len(password) >= 3 and not is_placeholder(password, generic=True)


def jwt_token(secret: str, _match: str) -> bool:
    """A JWT whose header is JSON naming an algorithm, unless it is the documentation sample
    (jwt.io's ``John Doe``) or a claim holds a template mark (``${user}``, ``<sub>``).

    The claims are judged by their string values alone: a payload's numbers (``"exp":
    1700000000``) and issuer URLs are what real tokens hold, not signs of a placeholder."""
    header, payload, *_ = [*secret.split("."), "", ""]
    head = _b64decode(header.rstrip("="))
    body = _b64decode(payload.rstrip("="))
    try:
        parsed = json.loads(head or b"")
    except (ValueError, UnicodeDecodeError):
        return False
    if not isinstance(parsed, dict) or "alg" not in parsed:
        return False
    try:
        claims = json.loads(body or b"")
    except (ValueError, UnicodeDecodeError):
        return True  # a signed payload that is no JSON: still a token
    if not isinstance(claims, dict):
        return True
    values = [v for v in claims.values() if isinstance(v, str)]
    if claims.get("sub") == "1234567890" or any(v.lower() == "john doe" for v in values):
        return False
    return not any(_TEMPLATE.search(v) for v in values)


def discord_token(secret: str, _match: str) -> bool:
    """A Discord bot token's first part is the base64 of the bot's numeric id."""
    decoded = printable_base64(secret.split(".", 1)[0])
    return decoded is not None and decoded.isdigit() and len(decoded) >= 17


def url_password(secret: str, match: str) -> bool:
    """A URL's password, unless it repeats the user name (``guest:guest``, a local default),
    the host is a documentation one, or it is a short word of lower-case letters alone
    (``github://org:repo@sha/…`` names its parts; a password draws on more than one
    alphabet or runs longer)."""
    user = match.partition("://")[2].partition(":")[0]
    host = match.rpartition("@")[2].lower()
    if secret.isalpha() and secret.islower() and len(secret) < 8:
        return False
    return secret != user and not host.startswith(("example", "host"))


# a name, a dotted or scoped reference (``self.password``, ``settings::PASS``): code, not a value
_REFERENCE = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+")
# the case shapes of identifiers and words: camelCase, CamelCase, snake_case, UPPER_CASE
_NAME_SHAPE = re.compile(
    r"_*(?:[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[a-z]+(?:_[a-z0-9]+)*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)_*"
)
# English words that end in a password's name, and escapes written in code
_NOT_A_KEY = re.compile(r"(?:by|com|sur|tres|over|under|encom|im)pass\b", re.I)
_ESCAPES = re.compile(r"\\[xuU0-7]")


def _classes(text: str) -> int:
    """How many of the four alphabets ``text`` draws on: lower, upper, digits, others."""
    return (
        any(c.islower() for c in text)
        + any(c.isupper() for c in text)
        + any(c.isdigit() for c in text)
        + any(not c.isalnum() for c in text)
    )


def password_written(secret: str, match: str) -> bool:
    """A password written out in prose or a document (``PW:dipPr10Gg!``, ``password is
    NsIdksKJdj``), judged by its alphabet rather than its Shannon entropy, which a short
    value cannot reach: three alphabets, or two over ten characters that are not a name's
    case shape; never a number, a reference or a name."""
    value = secret.rstrip(".,;:")  # the end of a sentence
    if not _value_like(value, match):
        return False
    classes = _classes(value)
    return classes >= 3 or (classes == 2 and len(value) >= 10)


def password_literal(secret: str, match: str) -> bool:
    """A string literal assigned to, compared with or defaulted for a password-named target
    (``pwd = "cackle!"``, ``password !== "PaS5w0rD2#"``): any value that is not a word, a
    name or a reference, so a digit or a sign in six characters is enough."""
    return _value_like(secret, match) and _classes(secret) >= 2


def _value_like(value: str, match: str) -> bool:
    """Not a number, a reference, a name or escapes, and named by a password's name rather
    than a word ending in one (``bypass``, ``compass``)."""
    if value.isdigit() or _REFERENCE.fullmatch(value) or _NAME_SHAPE.fullmatch(value):
        return False
    return _ESCAPES.search(value) is None and _NOT_A_KEY.search(match) is None
