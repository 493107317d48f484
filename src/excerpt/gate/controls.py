"""Schema controls, Version and changelog, Validation policy: what a risky change must carry.

Pure functions of the change and the base policy. Which paths are schema or migration files
is the risk vocabulary's call (``schema/migration``), not a list of our own.
"""

from __future__ import annotations

import configparser
import json
import re
from collections.abc import Callable
from typing import Any

from excerpt.discover.ignore import IgnoreRules
from excerpt.gate.change import Change, ChangedFile
from excerpt.gate.policy import Policy
from excerpt.gate.report import CheckResult, Status
from excerpt.index.lang import is_test_path
from excerpt.risk import classify_path

__all__ = ["check_schema", "check_validation", "check_version", "version_of"]

_SCHEMA = "schema/migration"
# A migration that carries its own way back (Alembic, Rails, goose, sql-migrate, dbmate,
# Knex/TypeORM, Laravel, Flyway's undo script is a file of its own).
_DOWN_IN_FILE = re.compile(
    r"def downgrade\(|def down\b|def reverse\b|\+goose Down|\+migrate Down|migrate:down"
    r"|exports\.down\b|async down\(|public function down\(|\bdown\s*\(\s*\)\s*\{",
    re.I,
)
_DOWN_NAME = re.compile(r"(?:^|[._-])(?:down|rollback|revert|undo)(?:[._-]|$)|^U\d", re.I)
_DJANGO = re.compile(r"class Migration\(migrations\.Migration\)")
_IRREVERSIBLE = re.compile(r"RunPython\(|RunSQL\(")
_REVERSE_GIVEN = re.compile(
    r"reverse_code\s*=|reverse_sql\s*=|RunPython\.noop|,\s*migrations\.RunPython"
)


def _fail_or(policy: Policy, check: str, failing: bool) -> Status:
    if not failing:
        return "PASS"
    return "FAIL" if policy.severity(check) == "fail" else "WARN"


def _reversible(file: ChangedFile) -> bool:
    text = file.new_text or ""
    if _DOWN_IN_FILE.search(text):
        return True
    if _DJANGO.search(text):  # Django reverses its operations, except code it cannot see
        return not _IRREVERSIBLE.search(text) or bool(_REVERSE_GIVEN.search(text))
    return False


def _rollback(file: ChangedFile, change: Change) -> bool:
    if _DOWN_NAME.search(file.path.rsplit("/", 1)[-1]):
        return True  # the rollback script itself
    if _reversible(file):
        return True
    return any(
        other.exists
        and other.path != file.path
        and _DOWN_NAME.search(other.path.rsplit("/", 1)[-1])
        for other in change.files
    )


def _marked(change: Change, marker: str) -> bool:
    for file in change.files:
        if file.new_text is None or marker not in file.new_text:
            continue
        lines = file.new_text.split("\n")
        if any(marker in lines[n - 1] for n in file.added):
            return True
    return False


def _is_migration(path: str) -> bool:
    """A schema or migration file of the product: not a test's fixture, not a package marker."""
    name = path.rsplit("/", 1)[-1]
    return (
        name not in ("__init__.py", "README.md", ".gitkeep")
        and not is_test_path(path)
        and _SCHEMA in classify_path(path)
    )


def check_schema(change: Change, policy: Policy) -> CheckResult:
    """Schema controls: each changed schema or migration file needs the policy's controls."""
    if policy.severity("schema") == "off":
        return CheckResult(id="schema", status="PASS", summary="turned off by the base policy")
    schema = [f for f in change.files if f.exists and _is_migration(f.path)]
    if not schema:
        return CheckResult(
            id="schema", status="PASS", summary="no schema or migration files changed"
        )
    rules = policy.rules.schema_
    tests = any(f.exists and is_test_path(f.path) for f in change.files)
    marked = "marker" in rules.require and _marked(change, rules.marker)
    details: list[dict[str, Any]] = []
    for file in schema:
        missing = []
        if "rollback" in rules.require and not _rollback(file, change):
            missing.append("rollback")
        if "marker" in rules.require and not marked:
            missing.append(f"marker {rules.marker!r}")
        if "tests" in rules.require and not tests:
            missing.append("tests")
        if missing:
            details.append({"path": file.path, "missing": missing})
    status = _fail_or(policy, "schema", bool(details))
    if details:
        summary = f"{len(details)} of {len(schema)} schema file(s) without the required controls"
    else:
        summary = (
            f"{len(schema)} schema file(s) carry the required controls ({', '.join(rules.require)})"
        )
    return CheckResult(id="schema", status=status, summary=summary, details=tuple(details))


# --- version and changelog ----------------------------------------------------------------

_CHANGELOG_NAME = re.compile(
    r"^(?:change[-_ ]?log|changes|history|news|release[-_ ]?notes|whatsnew)(?:\.[\w.-]+)?$", re.I
)
_CHANGELOG_DIRS = {
    "changelog.d", "changes", "newsfragments", ".changeset", "changelog", "changelogs",
    "release-notes", "releasenotes", "whatsnew",
}  # fmt: skip
_PY_VERSION = re.compile(r"^__version__\s*[:=][^=\n]*?['\"]([^'\"\n]{1,64})['\"]", re.M)
_GRADLE_VERSION = re.compile(r"^\s*version\s*[:=]?\s*['\"]?([\w.+-]{1,64})['\"]?\s*$", re.M)
# Blocks of a POM whose <version> is not the project's own
_POM_NESTED = re.compile(
    r"<(parent|dependencies|dependencyManagement|build|plugins|profiles|reporting)\b.*?</\1>", re.S
)
_POM_VERSION = re.compile(r"<version>\s*([^<\s]{1,64})\s*</version>")


def _pom_version(text: str) -> str | None:
    match = _POM_VERSION.search(_POM_NESTED.sub("", text[:200_000]))
    return match.group(1) if match else None


def _toml_version(text: str) -> str | None:
    import tomllib

    try:
        doc = tomllib.loads(text)
    except (ValueError, RecursionError):
        return None
    for table in ("project", "package"):
        value = doc.get(table, {}).get("version") if isinstance(doc.get(table), dict) else None
        if isinstance(value, str):
            return value
    poetry = doc.get("tool", {}).get("poetry", {}) if isinstance(doc.get("tool"), dict) else {}
    value = poetry.get("version") if isinstance(poetry, dict) else None
    workspace = doc.get("workspace", {}) if isinstance(doc.get("workspace"), dict) else {}
    package = workspace.get("package", {}) if isinstance(workspace.get("package"), dict) else {}
    value = value or package.get("version")
    return value if isinstance(value, str) else None


def _json_version(text: str) -> str | None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    value = doc.get("version") if isinstance(doc, dict) else None
    return value if isinstance(value, str) else None


def _cfg_version(text: str) -> str | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser.get("metadata", "version", fallback=None)


def _regex_version(pattern: re.Pattern[str]) -> Callable[[str], str | None]:
    def read(text: str) -> str | None:
        match = pattern.search(text[:200_000])
        return match.group(1) if match else None

    return read


_VERSION_FILES: dict[str, Callable[[str], str | None]] = {
    "package.json": _json_version,
    "pyproject.toml": _toml_version,
    "Cargo.toml": _toml_version,
    "setup.cfg": _cfg_version,
    "build.gradle": _regex_version(_GRADLE_VERSION),
    "build.gradle.kts": _regex_version(_GRADLE_VERSION),
    "gradle.properties": _regex_version(_GRADLE_VERSION),
    "pom.xml": _pom_version,
}
_PY_VERSION_FILES = {"__init__.py", "_version.py", "version.py", "__about__.py", "__version__.py"}


def version_of(path: str, text: str) -> str | None:
    """The version a metadata file declares (``package.json``, ``pyproject.toml``,
    ``Cargo.toml``, ``setup.cfg``, Gradle, Maven, a Python ``__version__``); None if none."""
    name = path.rsplit("/", 1)[-1]
    if name in _PY_VERSION_FILES:
        return _regex_version(_PY_VERSION)(text)
    read = _VERSION_FILES.get(name)
    return read(text) if read is not None else None


def _is_changelog(path: str, extra: tuple[str, ...]) -> bool:
    parts = path.split("/")
    if _CHANGELOG_NAME.match(parts[-1]) or any(p.lower() in _CHANGELOG_DIRS for p in parts[:-1]):
        return True
    if parts[-1] == "changelog" and parts[:-1] == ["debian"]:
        return True
    if extra:
        return IgnoreRules.from_lines(extra).ignores(path)
    return False


def check_version(change: Change, policy: Policy) -> CheckResult:
    """Version and changelog: version metadata changed needs a changelog entry in the change."""
    if policy.severity("version") == "off":
        return CheckResult(id="version", status="PASS", summary="turned off by the base policy")
    bumps: list[dict[str, Any]] = []
    for file in change.files:
        if not file.exists or file.old_text is None or file.new_text is None:
            continue
        old, new = version_of(file.path, file.old_text), version_of(file.path, file.new_text)
        if old is not None and new is not None and old != new:
            bumps.append({"path": file.path, "reason": f"version {old} → {new}"})
    extra = policy.rules.version.changelog
    logs = [f.path for f in change.files if f.exists and _is_changelog(f.path, extra)]
    if not bumps:
        return CheckResult(id="version", status="PASS", summary="no version metadata changed")
    if logs:
        summary = f"{len(bumps)} version change(s) with a changelog entry ({logs[0]})"
        return CheckResult(id="version", status="PASS", summary=summary, details=tuple(bumps))
    status = _fail_or(policy, "version", True)
    summary = f"{len(bumps)} version change(s) without a changelog entry"
    return CheckResult(id="version", status=status, summary=summary, details=tuple(bumps))


# --- validation policy --------------------------------------------------------------------

_POLICY_FILES = ("excerpt.toml", "pyproject.toml")


def _policy_edited(change: Change) -> list[str]:
    out = []
    for file in change.files:
        if file.path not in _POLICY_FILES:
            continue
        old, new = file.old_text or "", file.new_text or ""
        if (file.path == "excerpt.toml" or "excerpt" in old + new) and old != new:
            out.append(file.path)
    return out


def check_validation(change: Change, policy: Policy, requested: tuple[str, ...]) -> CheckResult:
    """Validation policy: every requested validation command must be in the base policy."""
    allowed = set(policy.rules.validation)
    details: list[dict[str, Any]] = [
        {"command": cmd, "reason": "not in the base commit's policy"}
        for cmd in requested
        if cmd not in allowed
    ]
    edited = _policy_edited(change)
    for path in edited:
        details.append(
            {"path": path, "reason": "the change edits the policy; the base commit's applies"}
        )
    refused = [d for d in details if "command" in d]
    status: Status
    if refused:
        status = _fail_or(policy, "validation", True)
        summary = f"{len(refused)} of {len(requested)} requested command(s) not in the base policy"
    elif edited:
        status = "WARN" if policy.severity("validation") != "off" else "PASS"
        summary = "the change edits the gate policy; it takes effect once merged"
    elif requested:
        status, summary = "PASS", f"{len(requested)} requested command(s) in the base policy"
    else:
        status = "PASS"
        summary = f"no validation requested ({len(allowed)} command(s) in the base policy)"
    return CheckResult(id="validation", status=status, summary=summary, details=tuple(details))
