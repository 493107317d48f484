"""The detector around its rules: decoding, line numbers, inline allows, key blocks across
lines, one level of base64, escaped JSON, what a finding may show, salted fingerprints,
the natural-language filter, and inputs built to make a scanner slow."""

from __future__ import annotations

import base64
import codecs
import dataclasses
import hashlib
import json
import random
import string

import pytest

from excerpt.core.secrets import SCAN_LIMIT, Finding, decode_for_scan, scan_text, secret_lines
from excerpt.core.secrets.filters import approximate_tokens, is_prose
from excerpt.core.secrets.scan import scan

_RNG = random.Random(1515)
B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"


def _random(alphabet: str, n: int) -> str:
    return "".join(_RNG.choices(alphabet, k=n))


GH = "ghp_" + _random(B62, 36)
AWS = "AKIA" + _random(string.ascii_uppercase + "234567", 16)
KEY_LINES = [_random(B64, 64) for _ in range(5)]
BEGIN, END = "-----BEGIN OPENSSH PRIVATE KEY-----", "-----END OPENSSH PRIVATE KEY-----"
TEXT = (
    f'"""Deploy settings."""\n\nGITHUB = "{GH}"\nREGION = \'eu-west-1\'\nAWS_KEY_ID = \'{AWS}\'\n'
)


def _rules(findings: list[Finding]) -> list[tuple[str, int, int]]:
    return [(f.rule, f.start_line, f.end_line) for f in findings]


@pytest.mark.parametrize(
    "codec",
    ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1"],
)
@pytest.mark.reliability("B3.28")
def test_a_secret_is_found_in_any_common_encoding(codec: str) -> None:
    text = TEXT + "# café crème, ½ price\n"  # latin-1 bytes that are not UTF-8
    decoded = decode_for_scan(text.encode(codec))
    assert decoded is not None
    assert _rules(scan_text(decoded)) == [("github-pat", 3, 3), ("aws-access-key-id", 5, 5)]


@pytest.mark.reliability("B3.28", cases=2)
def test_utf16_with_its_byte_order_mark_and_utf32_are_decoded_not_binary() -> None:
    for data in (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), TEXT.encode("utf-32-be")):
        assert decode_for_scan(data) is not None
    assert decode_for_scan(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)) * 4) is None


@pytest.mark.reliability("B3.28")
def test_crlf_line_ends_keep_line_numbers_and_key_blocks() -> None:
    text = TEXT.replace("\n", "\r\n") + "\r\n".join(["", BEGIN, *KEY_LINES, END, "x = 1"])
    assert _rules(secret_lines(text)) == [
        ("github-pat", 3, 3), ("aws-access-key-id", 5, 5), ("private-key", 7, 13),
    ]  # fmt: skip


def test_a_line_marked_excerpt_allow_is_not_reported_and_the_next_one_is() -> None:
    text = f'FIXTURE = "{GH}"  # excerpt:allow\nREAL = "{GH}"\n'
    assert _rules(scan_text(text)) == [("github-pat", 2, 2)]


def test_a_key_block_runs_from_begin_to_end_or_to_its_last_body_line() -> None:
    block = [BEGIN, *KEY_LINES, END]
    assert _rules(secret_lines("intro\n" + "\n".join(block) + "\ntail\n")) == [
        ("private-key", 2, 8)
    ]
    cut = "docs\n\n" + "\n".join([BEGIN, *KEY_LINES[:3]]) + "\n\nThe rest of the page.\n"
    assert _rules(secret_lines(cut)) == [("private-key", 3, 6)]
    encrypted = [
        "-----BEGIN RSA PRIVATE KEY-----", "Proc-Type: 4,ENCRYPTED",
        "DEK-Info: AES-128-CBC,0A1B2C3D4E5F60718293A4B5C6D7E8F9", "", *KEY_LINES,
        "-----END RSA PRIVATE KEY-----",
    ]  # fmt: skip
    assert _rules(secret_lines("\n".join(encrypted))) == [("private-key", 1, 10)]
    java = ['String key = "-----BEGIN PRIVATE KEY-----\\n"']
    java += [f'    + "{line}\\n"' for line in KEY_LINES] + ['    + "-----END PRIVATE KEY-----";']
    assert _rules(secret_lines("\n".join(java))) == [("private-key", 1, 7)]


def test_a_key_on_one_line_with_escaped_newlines_is_found() -> None:
    body = "\\n".join(KEY_LINES)
    account = {
        "type": "service_account",
        "private_key_id": _random("0123456789abcdef", 40),
        "private_key": "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n",
    }
    text = json.dumps(account, indent=2)
    assert {f.rule for f in scan_text(text)} == {"gcp-private-key-id", "private-key"}


@pytest.mark.reliability("B3.28")
def test_a_provider_secret_inside_a_base64_value_is_found_once_decoded() -> None:
    inner = base64.b64encode(f"[default]\naws_access_key_id = {AWS}\n".encode()).decode()
    text = f"data:\n  credentials: {inner}\n"
    assert _rules(scan_text(text)) == [("aws-access-key-id", 2, 2)]


@pytest.mark.reliability("B3.28")
def test_a_token_written_with_json_unicode_escapes_is_found() -> None:
    escaped = "".join(f"\\u{ord(c):04x}" for c in GH[:4]) + GH[4:]
    assert _rules(scan_text(f'{{"token": "{escaped}"}}\n')) == [("github-pat", 1, 1)]


def test_no_finding_field_holds_the_secret_and_the_preview_shows_at_most_a_quarter() -> None:
    secrets = [GH, AWS, "".join(KEY_LINES)]
    text = TEXT + "\n".join([BEGIN, *KEY_LINES, END]) + "\n"
    findings = scan_text(text, salt=b"repository salt")
    assert len(findings) == 3
    for finding in findings:
        for field in dataclasses.fields(finding):
            value = str(getattr(finding, field.name))
            for secret in secrets:
                assert secret not in value
                assert secret[4:12] not in value
        shown = finding.preview.split("…")[0]
        length = int(finding.preview.split("(")[1].split()[0])
        assert len(shown) <= min(4, length // 4)


def test_fingerprints_are_salted_never_the_plain_hash() -> None:
    text = f'GITHUB = "{GH}"\n'
    one = scan_text(text, salt=b"salt one")[0].fingerprint
    again = scan_text(text, salt=b"salt one")[0].fingerprint
    other = scan_text(text, salt=b"salt two")[0].fingerprint
    assert one == again and one != other and len(one) == 16
    plain = {
        hashlib.sha256(GH.encode()).hexdigest()[:16],
        hashlib.sha256(f"github-pat\0{GH}".encode()).hexdigest()[:16],
    }
    assert not {one, other} & plain
    assert scan_text(text)[0].fingerprint == ""
    assert secret_lines(text)[0].fingerprint == ""


def test_the_natural_language_filter_counts_with_the_counter_given() -> None:
    text = 'api_key = "rotateEveryNinetyDays"\n'
    assert not scan_text(text)  # exact o200k counts: an identifier, not a key
    assert _rules(scan_text(text, tokens=len)) == [("generic-api-key", 1, 1)]  # 1 char/token
    random_key = f'api_key = "{_random(B62, 24)}"\n'
    assert _rules(scan_text(random_key)) == [("generic-api-key", 1, 1)]


@pytest.mark.parametrize(
    "candidate",
    ["getAccessTokenFromEnvironment", "my_secret_password", "correct-horse-battery-staple",
     "django-insecure-change-me-later", "/etc/app/secret.conf", "SessionTokenProvider"],
)  # fmt: skip
def test_identifiers_and_prose_read_as_prose_by_estimate_and_by_count(candidate: str) -> None:
    from excerpt.core.tokens import o200k_count

    assert is_prose(candidate, o200k_count)
    assert is_prose(candidate, approximate_tokens)


def test_random_keys_are_seldom_read_as_prose_by_the_estimate() -> None:
    # the estimate reads about 0.3% of random 16-character keys as words (a key is judged
    # by more than this filter); measured on keys of its own, so the other tests' draws of
    # the shared generator never decide it
    rng = random.Random(20261204)
    for alphabet, n in ((B62, 16), (B62, 40), (B64, 40), ("0123456789abcdef", 32)):
        keys = ["".join(rng.choices(alphabet, k=n)) for _ in range(2000)]
        assert sum(is_prose(k, approximate_tokens) for k in keys) <= 20, (alphabet, n)


HOSTILE = {
    "begin-lines": "-----BEGIN RSA PRIVATE KEY-----\n" * 10_000,
    "akia-line": "AKIA" * 262_144,
    "sk-line": "sk-" * 174_762,
    "minified": "".join(_RNG.choices(B62 + " .,;(){}=+-*/'\"", k=1_000_000)),
    "keyword-dense": 'token="aB3dE5gH7jK9mN1p" ' * 40_000,
}


@pytest.mark.timeout(60)  # a quadratic scan of these takes minutes
@pytest.mark.parametrize("linear", [True, False], ids=["re2", "re"])
@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.reliability("T2")
def test_inputs_built_to_be_slow_are_scanned_in_bounded_time(name: str, linear: bool) -> None:
    found = scan(HOSTILE[name], tokens=approximate_tokens, salt=None, linear=linear)
    if name == "keyword-dense":  # every match is a candidate: a bounded number is reported
        assert found and {f.rule for f in found} <= {"generic-token", SCAN_LIMIT}
        assert len(found) <= 16
    elif name == "minified":
        # a megabyte of random signs holds ``pw=`` before a value of mixed alphabets by
        # chance, which the written-password rule takes (it judges a value by its alphabet)
        assert {f.rule for f in found} <= {"password-written", SCAN_LIMIT}
        assert len(found) <= 16
    else:
        assert {f.rule for f in found} <= {SCAN_LIMIT}


@pytest.mark.parametrize(
    "prefix",
    ["2026-04-26 12:36:01 ", "#6 0.245 ", " * ", '    + "', "\t"],
    ids=["log-timestamp", "build-log", "comment", "string-concatenation", "indented"],
)
def test_a_key_block_is_found_whatever_prefixes_its_lines(prefix: str) -> None:
    """Logs, comments and string literals put text before each line of a key: the block is
    still BEGIN to END, every line of it excluded."""
    body = [prefix + line + ('\\n" +' if '"' in prefix else "") for line in KEY_LINES]
    lines = [prefix + "-----BEGIN PRIVATE KEY-----", *body, prefix + "-----END PRIVATE KEY-----"]
    text = "print(1)\n" + "\n".join(lines) + "\nprint(2)\n"
    assert _rules(scan_text(text)) == [("private-key", 2, 8)]
    assert _rules(secret_lines(text)) == [("private-key", 2, 8)]


def test_an_openssh_key_s_runs_of_one_character_do_not_make_it_a_placeholder() -> None:
    body = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gt"]
    body += [_random(B64, 70) for _ in range(3)]
    text = "\n".join(
        ["-----BEGIN OPENSSH PRIVATE KEY-----", *body, "-----END OPENSSH PRIVATE KEY-----"]
    )
    assert _rules(scan_text(text)) == [("private-key", 1, 6)]


def test_a_password_parameter_beside_a_host_parameter_is_no_connection_string() -> None:
    assert scan_text("    def __init__(self, host, port=PORT, user=None, password=None,\n") == []


@pytest.mark.parametrize(
    "line",
    [
        "+DB_PASSWORD={v}",  # a diff's added line
        "2026-01-01T10:00:00Z resolved DB_PASSWORD={v} for the pool",  # a log line
        "Password:{v}#@",  # a # inside the value is part of it
        "password: {v}  # the staging one",  # after a space, a comment
    ],
)
def test_a_generic_password_is_found_in_diffs_logs_and_bare_assignments(line: str) -> None:
    text = line.format(v=_random(B62, 14))
    assert [(f.rule, f.severity) for f in scan_text(text)] == [("generic-password", "warn")]


def test_a_key_body_line_with_plus_signs_or_a_short_last_line_stays_in_the_block() -> None:
    """Base64 holds ``+``: a body line with several is the body's own, not literals joined;
    and the last body line is often a few characters before END."""
    plus = ["+".join(line[i : i + 15] for i in range(0, 60, 15)) for line in KEY_LINES]
    block = [BEGIN, *plus, "hNUKS5pmUGE=", END]
    assert _rules(secret_lines("x = 1\n" + "\n".join(block) + "\ny = 2\n")) == [
        ("private-key", 2, 2 + len(block) - 1)
    ]
