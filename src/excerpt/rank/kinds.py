"""What a file is for, from its path: the tables ranking demotes and falls back by. Pure.

Each demotion names the ``Weights`` field holding its factor; the patterns are conventions
of layout shared across ecosystems (a ``vendor/`` directory, a ``.lock`` file, a
``CHANGELOG``), never the names of one repository's files. The names of manifests and lock
files are ``excerpt.core.manifests``'s, the table every consumer of them reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from excerpt.core import manifests

__all__ = [
    "DATA_LANGUAGES",
    "DEMOTIONS",
    "DOCS",
    "EXAMPLES",
    "MANIFESTS",
    "NOTES",
    "OVERVIEW",
    "TEST_DATA",
]


def _any_of(names: Iterable[str]) -> str:
    """A regex alternation of exact file names."""
    return "|".join(re.escape(n) for n in sorted(names))


# (label, path pattern, the Weights field of its factor), first match wins
DEMOTIONS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "translation catalog",
        re.compile(r"(^|/)(locale|locales|i18n|l10n|translations)/|\.(po|pot|mo|xliff|xlf)$"),
        "demote_translation",
    ),
    (
        "generated file",
        re.compile(
            r"\.min\.(js|css)$|\.map$|_pb2\.py$|\.pb\.go$|\.generated\.|\.bundle\.js$"
            r"|(^|/)(generated|dist|build|out)/"
        ),
        "demote_generated",
    ),
    (
        "vendored code",
        re.compile(r"(^|/)(vendor|_vendor|vendored|third[-_]?party|3rdparty|node_modules|extern)/"),
        "demote_vendored",
    ),
    (
        "lock file",
        re.compile(rf"(^|/)({_any_of(manifests.names(kinds=('lock',)))})$|\.lock$"),
        "demote_lock",
    ),
    (
        "fixture or snapshot",
        re.compile(r"(^|/)(fixtures?|testdata|__snapshots__)/|\.snap$"),
        "demote_fixture",
    ),
    (
        "library copy",
        # ``jquery-3.5.1.js``, or a library that web projects copy into their asset directory
        # by its own name (in its own repository it lives in ``src/`` or at the root)
        re.compile(
            r"-\d+(\.\d+)+(\.min)?\.(js|css)$"
            r"|(^|/)(_?static|assets|public|js)/(.+/)?"
            r"(jquery|underscore|lodash|backbone|bootstrap|modernizr|popper|require)"
            r"([-.][\w.-]*)?\.(js|css)$",
            re.I,
        ),
        "demote_library_copy",
    ),
    ("repository metadata", re.compile(r"(^|/)\.github/"), "demote_repository_metadata"),
)
TEST_DATA = re.compile(r"(^|/)(tests?|testing|spec)/")
DOCS = re.compile(
    r"(^|/)(changes|changelog|history|news|authors|contributors|release[-_]?notes)(\.[\w.]+)?$"
    r"|\.(md|rst|txt|adoc)$|(^|/)docs?/"
    r"|\.[1-9](\.in)?$|(^|/)man/",  # a manual page (``fd.1``, ``bat.1.in``)
    re.I,
)
# What describes the project rather than makes it: a changelog holds the words of every task
# and the code of none.
NOTES = re.compile(
    r"(^|/)(?P<word>changes|changelog|history|news|authors|contributors|credits|thanks"
    r"|licen[cs]e|copying|notice|code[-_]of[-_]conduct|contributing|release[-_]?notes)"
    r"([-_.][\w.-]+)?$|(^|/)(?P<dir>release[-_]?notes)/",
    re.I,
)
EXAMPLES = re.compile(r"(^|/)_?(?P<word>examples?|samples?|demos?|benchmarks?)/", re.I)
# What declares a project or its dependencies, and nothing more: a manifest that is a program
# (``setup.py``) may be the code a task is about. (``requirements.txt`` is documentation
# first, by its ``.txt``.)
MANIFESTS = re.compile(
    rf"(^|/)({_any_of(manifests.names(kinds=('package', 'dependencies'), programs=False))})$"
)
DATA_LANGUAGES = frozenset({"json", "yaml", "toml", "ini", "xml", "gettext", "other"})
# A repository's own overview: what a task that matches nothing is offered. Its README, the
# manifests that declare it, and the Makefile that builds it.
OVERVIEW = re.compile(
    rf"^(readme(\.\w+)?|{_any_of(manifests.names(kinds=('package',)))}"
    rf"|{_any_of(manifests.names(ecosystem='make'))})$",
    re.I,
)
