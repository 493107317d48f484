"""The retrieval corpus and its fixture repositories are well-formed data (no packing here)."""

from __future__ import annotations

import json
import posixpath
from collections import Counter
from importlib import resources
from typing import Any

import pytest

DATA = resources.files("excerpt.evals").joinpath("data")
FIXTURES = DATA.joinpath("fixtures")
MAX_FIXTURE_BYTES = 64 * 1024
MIN_CASES = 40
CASE_KEYS = {"id", "repoFixtures", "task", "expectedPrimary", "expectedAnyOf", "tags", "changed"}
REQUIRED_TAGS = {
    "cross-language-naming": 3,
    "plural-folding": 3,
    "route": 3,
    "error-message": 3,
    "stack-trace": 3,
    "named-file": 3,
    "translation-demotion": 3,
    "locale-folding": 3,
    "multi-repo": 3,
    "fallback": 3,
}
# One fixture at least in each language, judged by file extension.
LANGUAGES = {"python": ".py", "typescript": ".ts", "go": ".go", "rust": ".rs", "java": ".java"}


def _corpus() -> dict[str, Any]:
    corpus: dict[str, Any] = json.loads(DATA.joinpath("retrieval.json").read_text("utf-8"))
    return corpus


def _fixture_names() -> list[str]:
    return sorted(p.name[: -len(".json")] for p in FIXTURES.iterdir() if p.name.endswith(".json"))


def _files(name: str) -> dict[str, str]:
    files: dict[str, str] = json.loads(FIXTURES.joinpath(f"{name}.json").read_text("utf-8"))[
        "files"
    ]
    return files


CORPUS = _corpus()
CASES = CORPUS["cases"]


def _referenced() -> list[str]:
    return sorted({name for case in CASES for name in case["repoFixtures"]})


def test_corpus_header() -> None:
    assert CORPUS["suite"] == "accuracy"
    assert isinstance(CORPUS["k"], int) and CORPUS["k"] >= 1
    assert isinstance(CORPUS["budget"], int) and CORPUS["budget"] > 0
    assert set(CORPUS["thresholds"]) == {"pass_rate", "precision@k", "recall@k", "mrr"}
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in CORPUS["thresholds"].values())


def test_case_count_and_unique_ids() -> None:
    ids = [case["id"] for case in CASES]
    assert len(ids) >= MIN_CASES
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert duplicates == []


def test_required_tag_families_are_covered() -> None:
    counts = Counter(tag for case in CASES for tag in case["tags"])
    short = {tag: counts[tag] for tag, least in REQUIRED_TAGS.items() if counts[tag] < least}
    assert short == {}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_case_shape(case: dict[str, Any]) -> None:
    assert set(case) <= CASE_KEYS
    assert {"id", "repoFixtures", "task", "expectedPrimary", "tags"} <= set(case)
    assert case["task"].strip()
    assert case["repoFixtures"] and len(set(case["repoFixtures"])) == len(case["repoFixtures"])
    for key in ("expectedPrimary", "expectedAnyOf", "tags"):
        values = case.get(key, [])
        assert isinstance(values, list) and all(isinstance(v, str) and v for v in values)
        assert len(set(values)) == len(values)
    assert not set(case["expectedPrimary"]) & set(case.get("expectedAnyOf", []))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_expected_paths_exist_in_fixtures(case: dict[str, Any]) -> None:
    names = case["repoFixtures"]
    available = set(_fixture_names())
    assert set(names) <= available, f"missing fixtures: {sorted(set(names) - available)}"
    if len(names) == 1:
        paths = set(_files(names[0]))
    else:
        paths = {f"{name}/{rel}" for name in names for rel in _files(name)}
    for path in case["expectedPrimary"] + case.get("expectedAnyOf", []) + case.get("changed", []):
        assert path in paths, path


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_tags_match_case_kind(case: dict[str, Any]) -> None:
    tags = set(case["tags"])
    expected = case["expectedPrimary"] + case.get("expectedAnyOf", [])
    if "fallback" in tags:
        assert expected == [], "pure-fallback cases expect nothing in particular"
    else:
        assert case["expectedPrimary"], "only pure-fallback cases may leave expectedPrimary empty"
    assert ("multi-repo" in tags) == (len(case["repoFixtures"]) > 1)
    if not tags & {"named-file", "stack-trace"}:
        # a task names its expected files only when the case is about named-file pinning
        # (or quotes a stack trace, whose frames name them)
        task = case["task"]
        for path in expected:
            rel = path.split("/", 1)[1] if len(case["repoFixtures"]) > 1 else path
            assert rel not in task and posixpath.basename(rel) not in task, path


@pytest.mark.parametrize("name", _fixture_names())
def test_fixture_parses_and_is_small(name: str) -> None:
    raw = FIXTURES.joinpath(f"{name}.json").read_bytes()
    assert len(raw) < MAX_FIXTURE_BYTES
    doc = json.loads(raw.decode("utf-8"))
    assert isinstance(doc.get("description"), str)
    files = doc["files"]
    assert isinstance(files, dict) and files
    for rel, text in files.items():
        assert isinstance(text, str)
        assert rel == posixpath.normpath(rel) and not rel.startswith(("/", "../"))
        assert ".." not in rel.split("/") and "\\" not in rel


@pytest.mark.parametrize("name", _referenced())
def test_referenced_fixture_is_a_small_repository(name: str) -> None:
    files = _files(name)
    assert 8 <= len(files) <= 40
    assert any(posixpath.basename(p).lower().startswith("readme") for p in files)


def test_every_language_has_a_fixture() -> None:
    extensions = {posixpath.splitext(p)[1] for name in _referenced() for p in _files(name)}
    missing = [lang for lang, ext in LANGUAGES.items() if ext not in extensions]
    assert missing == []


def test_translation_catalogs_are_present() -> None:
    paths = {p for name in _referenced() for p in _files(name)}
    assert any(p.startswith("locale/") and p.endswith("/LC_MESSAGES/messages.po") for p in paths)
    assert any(p.startswith("locales/") and p.endswith(".json") for p in paths)
