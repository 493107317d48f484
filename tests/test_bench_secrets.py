"""The secret benchmark's plumbing: the generated corpus, CredSweeper labels, metrics, masking.

``scripts/bench_secrets.py`` compares detectors on three corpora; these tests check what it
computes from them (fake detectors, layouts built at test time), never a detector's quality.
"""

from __future__ import annotations

import base64
import importlib
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import git_commit_all, write_tree

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _load(name: str) -> ModuleType:
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module(name)


corpus = _load("secret_corpus")
bench = _load("bench_secrets")


# -- the generated corpus --------------------------------------------------------------------


def test_the_corpus_is_the_same_for_a_seed_and_another_for_another_seed() -> None:
    first, again, other = corpus.generate(15), corpus.generate(15), corpus.generate(16)
    assert first == again
    assert [s.id for s in first] == [s.id for s in other]
    assert all(a.secrets != b.secrets for a, b in zip(first, other, strict=True))


def test_the_corpus_spans_forty_providers_eight_contexts_and_three_hundred_positives() -> None:
    samples = corpus.generate()
    assert len(samples) >= 300
    assert len({s.provider for s in samples}) >= 40
    assert {s.context for s in samples} == {
        "python", "js", "yaml", "env", "json", "ini", "log", "diff"
    }  # fmt: skip
    values = [s.secrets[0] for s in samples]
    assert len(set(values)) == len(values)


def test_each_credential_sits_on_its_labelled_lines_and_nowhere_else() -> None:
    for sample in corpus.generate():
        lines = sample.text.split("\n")
        inside = "\n".join(lines[sample.start_line - 1 : sample.end_line])
        outside = "\n".join(lines[: sample.start_line - 1] + lines[sample.end_line :])
        for secret in sample.secrets:
            first_row = secret.split("\n")[0]
            assert first_row[:24] in inside.replace("\\n", "\n"), sample.id
            assert first_row[-16:] not in outside, sample.id


def _value(provider: str, context: str = "env") -> str:
    (sample,) = corpus.generate(providers=[provider], contexts=[context])
    return str(sample.secrets[0])


def _b62(number: int) -> str:
    chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rem = divmod(number, 62)
        out = chars[rem] + out
    return out.rjust(6, "0")


def test_provider_formats_follow_their_published_shapes() -> None:
    assert re.fullmatch(r"AKIA[A-Z2-7]{16}", _value("aws-access-key"))
    token = _value("github-classic-pat")
    assert re.fullmatch(r"ghp_[A-Za-z0-9]{36}", token)
    assert token[-6:] == _b62(zlib.crc32(token[4:-6].encode()))
    assert re.fullmatch(r"xoxb-\d+-\d+-[A-Za-z0-9]{24}", _value("slack-bot"))
    assert re.fullmatch(r"SG\.[\w-]{22}\.[\w-]{43}", _value("sendgrid"))
    assert re.fullmatch(r"dop_v1_[0-9a-f]{64}", _value("digitalocean-pat"))
    header, payload, _ = _value("jwt").split(".")
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "HS256", "typ": "JWT"}
    assert "exp" in json.loads(base64.urlsafe_b64decode(payload + "=="))
    key = _value("rsa-private-key")
    assert key.startswith("-----BEGIN RSA PRIVATE KEY-----\nMII")
    assert key.endswith("-----END RSA PRIVATE KEY-----")
    assert re.fullmatch(r"postgres://\w+:\S+@[\w.-]+:5432/orders", _value("postgres-url"))


def test_a_url_credential_lists_its_password_as_a_secret_part() -> None:
    (sample,) = corpus.generate(providers=["postgres-url"], contexts=["env"])
    url, password = sample.secrets
    assert f":{password}@" in url


# -- CredSweeper labels ----------------------------------------------------------------------

REPORT = [
    {
        "rule": "Token",
        "line_data_list": [
            {"path": "./tests/samples/token_p", "line_num": 2},
            {"path": "./tests/samples/token_p", "line_num": 3},
        ],
    },
    {"rule": "Password", "line_data_list": [{"path": "./tests/samples/token_p", "line_num": 3}]},
    {"rule": "Key", "line_data_list": [{"path": "./tests/samples/utf16", "line_num": 1}]},
]
LAYOUT: dict[str, str | bytes] = {
    "tests/samples/token_p": "a = 1\ntoken = 'x'\npassword = 'y'\n",
    "tests/samples/token_n": "nothing here\n",
    "tests/samples/image.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "tests/samples/utf16": "key = 'z'\n".encode("utf-16"),
    "tests/data/output.json": json.dumps(REPORT),
    "README.md": "not a sample\n",
}


def test_labels_are_the_lines_the_expected_report_names_with_their_rules() -> None:
    labels = bench.parse_credsweeper_labels(REPORT)
    assert labels == {
        "tests/samples/token_p": {2: {"Token"}, 3: {"Token", "Password"}},
        "tests/samples/utf16": {1: {"Key"}},
    }


@pytest.mark.parametrize("bare", [False, True], ids=["checkout", "bare-git-dir"])
def test_a_checkout_and_a_bare_git_dir_give_the_same_labelled_corpus(
    tmp_path: Path, bare: bool
) -> None:
    root = write_tree(tmp_path / "cs", LAYOUT)
    if bare:
        git_commit_all(root)
        subprocess.run(["git", "clone", "-q", "--bare", str(root), str(tmp_path / "bare")],
                       check=True, capture_output=True)  # fmt: skip
        root = tmp_path / "bare"
    files, report, _ = bench.read_credsweeper(root, bench.LABELS_DEFAULT)
    assert sorted(files) == sorted(p for p in LAYOUT if p.startswith("tests/samples/"))
    assert files["tests/samples/image.png"] == LAYOUT["tests/samples/image.png"]
    docs, _, binary = bench.credsweeper_corpus(files, report, bench._fallback_decode)
    assert binary == ["tests/samples/image.png"]
    by_path = {d.path: d for d in docs}
    assert by_path["tests/samples/token_p"].labels == {2, 3}
    assert by_path["tests/samples/token_n"].labels == frozenset()
    assert by_path["tests/samples/utf16"].text == "key = 'z'\n"


# -- the negative corpus ---------------------------------------------------------------------


def test_the_negative_corpus_takes_text_files_and_skips_caches_metadata_and_excerpt(
    tmp_path: Path,
) -> None:
    root = write_tree(tmp_path / "site-packages", {
        **{f"pkg/m{i}.py": f"x = {i}\n" for i in range(6)},
        "pkg/__pycache__/m0.cpython-311.pyc": "cached\n",
        "pkg-1.0.dist-info/RECORD": "pkg/m0.py,sha256=abc\n",
        "excerpt/core.py": "ours\n",
        "__editable__.excerpt-0.1.0.pth": "/src\n",
        "pkg/blob.bin": b"\x00\x01\x02",
        "pkg/big.txt": "y" * 2000,
    })  # fmt: skip
    docs, skipped = bench.negative_corpus(
        [root], limit=100, max_bytes=1000, decode=bench._fallback_decode
    )
    assert [d.path for d in docs] == [f"site-packages/pkg/m{i}.py" for i in range(6)]
    assert skipped["binary"] == 1
    assert skipped["large or link"] == 1
    few, _ = bench.negative_corpus([root], limit=3, max_bytes=1000, decode=bench._fallback_decode)
    again, _ = bench.negative_corpus([root], limit=3, max_bytes=1000, decode=bench._fallback_decode)
    assert len(few) == 3
    assert few == again
    assert [d.path for d in few] == sorted(d.path for d in few)


# -- metrics ---------------------------------------------------------------------------------


def hit(start: int, end: int | None = None, severity: str = "fail", rule: str = "r") -> Any:
    return bench.Hit(rule=rule, severity=severity, start_line=start, end_line=end or start,
                     preview="")  # fmt: skip


def test_line_and_file_scores_count_what_they_should() -> None:
    docs = [
        bench.Doc("p1", "", frozenset({2, 3, 9})),  # a key block 2-3 found, line 9 missed
        bench.Doc("p2", "", frozenset({1})),  # missed
        bench.Doc("n1", ""),  # a false positive (warn)
        bench.Doc("n2", ""),  # clean
    ]
    results = {
        "p1": [hit(2, 3), hit(5)],
        "p2": [],
        "n1": [hit(4, severity="warn")],
        "n2": [],
    }
    lines = bench.line_score(docs, results, "any")
    assert (lines.tp, lines.fn, lines.fp, lines.tp_found) == (2, 2, 2, 1)
    assert lines.recall == pytest.approx(0.5)
    assert lines.precision == pytest.approx(1 / 3)
    assert lines.f1 == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))
    files = bench.file_score(docs, results, "any")
    assert (files.tp, files.fp, files.fn) == (1, 1, 1)
    strict = bench.file_score(docs, results, "fail")
    assert (strict.tp, strict.fp, strict.fn) == (1, 0, 1)
    assert strict.precision == 1.0


def test_an_empty_score_is_not_a_division_by_zero() -> None:
    score = bench.Score(tp=0, fp=0, fn=0)
    assert (score.precision, score.recall, score.f1) == (1.0, 1.0, 1.0)
    assert bench.Score(tp=0, fp=3, fn=2).f1 == 0.0


def test_sample_recall_rolls_up_by_provider_and_context() -> None:
    docs = [
        bench.Doc("a", "", frozenset({3}), group="aws", context="env"),
        bench.Doc("b", "", frozenset({3, 4}), group="aws", context="json"),
        bench.Doc("c", "", frozenset({1}), group="jwt", context="env"),
    ]
    results = {"a": [hit(1)], "b": [hit(4, severity="warn")], "c": [hit(1)]}
    assert bench.sample_recall(docs, results, "any") == {
        "aws": [1, 2], "jwt": [1, 1], "context:env": [1, 2], "context:json": [1, 1]
    }  # fmt: skip
    assert bench.sample_recall(docs, results, "fail")["aws"] == [0, 2]


def test_negative_stats_are_findings_per_thousand_files_by_level() -> None:
    docs = [bench.Doc(f"f{i}", "") for i in range(2000)]
    results: dict[str, list[Any]] = {d.path: [] for d in docs}
    results["f1"] = [hit(3, rule="private-key"), hit(3, rule="private-key"), hit(9, rule="k")]
    results["f2"] = [hit(1, severity="warn", rule="generic")]
    stats = bench.negative_stats(docs, results)
    assert stats.findings == {"fail": 2, "warn": 1}
    assert stats.per_1000("fail") == pytest.approx(1.0)
    assert stats.per_1000("warn") == pytest.approx(0.5)
    assert stats.files_flagged == {"fail": 1, "warn": 1}
    assert stats.rules[0] == {"rule": "generic", "severity": "warn", "count": 1,
                              "examples": ["f2:1"]}  # fmt: skip


def test_disagreements_are_findings_the_other_tool_has_nothing_near() -> None:
    docs = [bench.Doc("p", "", frozenset({2}))]
    mine = {"p": [hit(2, rule="aws"), hit(7, rule="url")]}
    theirs = {"p": [hit(1, 3, severity="warn", rule="generic"), hit(12, rule="jwt")]}
    out = bench.disagreements(docs, ("excerpt", mine), ("betterleaks", theirs))
    assert [(d["found_by"], d["line"], d["rules"], d["labelled"]) for d in out] == [
        ("excerpt", 7, ["url"], False),
        ("betterleaks", 12, ["jwt"], False),
    ]
    missed = bench.recall_differences(docs, [("excerpt", mine), ("b", {"p": []})], per_line=True)
    assert missed == [{"path": "p", "line": 2, "found_by": ["excerpt"]}]


# -- masking ---------------------------------------------------------------------------------


@given(st.text(max_size=300))
def test_a_mask_shows_at_most_a_quarter_and_four_characters(secret: str) -> None:
    shown = bench.mask(secret).split("…")[0]
    assert secret.startswith(shown)
    assert len(shown) <= min(4, len(secret) // 4)
    assert f"({len(secret)} chars)" in bench.mask(secret)


class FindsEverySecret:
    """A detector that reports each generated credential, as a real one would."""

    name = "oracle"
    version = "1"

    def __init__(self, samples: list[Any]) -> None:
        self._by_text = {s.text: s for s in samples}

    def scan(self, text: str) -> list[Any]:
        sample = self._by_text.get(text)
        if sample is None:
            return []
        preview = bench.mask(sample.secrets[0])
        return [bench.Hit(rule="x", severity="fail", start_line=sample.start_line,
                          end_line=sample.end_line, preview=preview)]  # fmt: skip


def test_no_report_ever_prints_a_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    samples = corpus.generate()
    fake_module = SimpleNamespace(
        __version__="0", __upstream_version__="0",
        scan_string=lambda text: [
            SimpleNamespace(rule_id="leak", confidence="high", secret=s.secrets[0],
                            location=SimpleNamespace(start_line=s.start_line,
                                                     end_line=s.end_line))
            for s in samples if s.text == text
        ],
    )  # fmt: skip
    monkeypatch.setitem(sys.modules, "betterleaks", fake_module)
    # (a file discovery refuses by its name, never read, and one it reads)
    root = write_tree(
        tmp_path / "site-packages", {"leak.env": samples[0].text, "leak.txt": samples[0].text}
    )
    args = bench.parse_args(["--negative-root", str(root), "--list", "1000"])
    detectors = [FindsEverySecret(samples), bench.BetterleaksDetector()]
    report = bench.build_report(args, detectors)
    assert report["generated"]["tools"]["betterleaks"]["any"]["recall"] == 1.0
    assert report["negative"]["tools"]["oracle"]["findings"] == {"fail": 1, "warn": 0}
    assert report["negative"]["skipped"]["sensitive path"] == 1
    printed = bench.render(report, 1000) + json.dumps(report)
    for sample in samples:
        for secret in sample.secrets:
            for row in secret.split("\n"):
                assert len(row) < 12 or row not in printed, sample.id


def test_the_script_says_how_to_install_betterleaks_when_it_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "betterleaks", None)  # import fails
    detectors = bench.load_detectors()
    assert [d.name for d in detectors] == ["excerpt"]
    assert "pip install 'excerpt[compare]'" in capsys.readouterr().err


def test_excerpts_own_detector_is_read_through_the_adapter() -> None:
    (sample,) = corpus.generate(providers=["github-classic-pat"], contexts=["python"])
    hits = bench.ExcerptDetector().scan(sample.text)
    assert [(h.start_line, h.severity) for h in hits] == [(sample.start_line, "fail")]
    assert all(sample.secrets[0] not in h.preview for h in hits)
