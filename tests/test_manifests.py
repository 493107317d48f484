"""One table of manifest file names (``excerpt.core.manifests``), and every consumer reads it:
ranking's demotions and fallback overview, the index's manifest readers, the harness."""

from __future__ import annotations

import pytest

from excerpt.core.manifests import (
    KINDS,
    MANIFESTS,
    Ecosystem,
    Manifest,
    names,
    package_manifest,
    project_files,
)
from excerpt.index.lang import LANGUAGES, Language, manifest_of
from excerpt.rank import kinds

LOCK_FILE = next(pattern for label, pattern, _ in kinds.DEMOTIONS if label == "lock file")


def test_names_are_file_names_listed_once() -> None:
    assert len(names()) == len(set(names())) == len(MANIFESTS)
    with pytest.raises(ValueError, match="file name"):
        Manifest(name="sub/go.mod", ecosystem="go", kind="package")


def test_every_kind_has_names() -> None:
    assert all(names(kinds=(kind,)) for kind in KINDS)


@pytest.mark.parametrize("name", names(kinds=("package", "dependencies"), programs=False))
def test_a_manifest_is_demoted_as_one_at_any_depth(name: str) -> None:
    assert kinds.MANIFESTS.search(name)
    assert kinds.MANIFESTS.search(f"crates/sub/{name}")
    assert not LOCK_FILE.search(name)


def test_a_manifest_that_is_a_program_is_not_demoted_as_a_manifest() -> None:
    programs = [m.name for m in MANIFESTS.values() if m.program]
    assert "setup.py" in programs
    assert not any(kinds.MANIFESTS.search(name) for name in programs)
    assert kinds.OVERVIEW.match("setup.py")  # still the overview of a project it declares


@pytest.mark.parametrize("name", names(kinds=("lock",)))
def test_a_lock_file_is_demoted_as_one_and_is_no_manifest(name: str) -> None:
    assert LOCK_FILE.search(f"sub/{name}")
    assert not kinds.MANIFESTS.search(name)


@pytest.mark.parametrize("name", [*names(kinds=("package",)), *project_files("make")])
def test_a_package_manifest_or_makefile_is_part_of_the_overview(name: str) -> None:
    assert kinds.OVERVIEW.match(name)


@pytest.mark.parametrize("name", names(kinds=("dependencies", "build", "lock")))
def test_a_name_close_to_a_manifest_is_not_one(name: str) -> None:
    assert not kinds.MANIFESTS.search(f"x{name}")
    assert not kinds.MANIFESTS.search(f"{name}.bak")


@pytest.mark.parametrize(
    "lang", [lang for lang in LANGUAGES if lang.manifests], ids=lambda lang: lang.name
)
def test_a_language_reads_package_manifests_of_the_table(lang: Language) -> None:
    assert all(MANIFESTS[name].kind == "package" for name in lang.manifests)


@pytest.mark.parametrize(
    ("ecosystem", "data", "declared"),
    [
        pytest.param("go", b"module example.com/app\n", "example.com/app", id="go"),
        pytest.param("rust", b'[package]\nname = "app"\n', "app", id="rust"),
        pytest.param("node", b'{"name": "@scope/app"}', "@scope/app", id="node"),
    ],
)  # fmt: skip
def test_the_index_reads_a_manifest_by_the_table_s_name(
    ecosystem: Ecosystem, data: bytes, declared: str
) -> None:
    name = package_manifest(ecosystem)
    assert manifest_of(f"sub/{name}", data) == declared
    assert manifest_of(f"sub/{name}.orig", data) is None


def test_an_ecosystem_with_several_package_manifests_has_no_single_one() -> None:
    with pytest.raises(ValueError, match="python has 3 package manifests"):
        package_manifest("python")


def test_project_files_leave_out_lock_files_in_the_tool_s_order() -> None:
    assert project_files("make") == ("GNUmakefile", "Makefile", "makefile")
    assert "uv.lock" in names(ecosystem="python") and "uv.lock" not in project_files("python")
    assert project_files("gradle")[:2] == ("build.gradle", "build.gradle.kts")
