"""The language registry: every parsed language, one ``Language`` record each (``base.py``).

In: a path (and for manifests its bytes). Out: the path's language, its grammar, whether it is
a test, what its manifest declares. Nothing outside this package knows a language by name.

To add a language:

1. Write one module here, ``lang/<language>.py``, exposing a ``Language`` (copy the closest
   existing module): its extensions and file names; a grammar loader that imports the grammar
   wheel inside the function (so importing the index loads no grammar); its definitions (the
   wheel's ``TAGS_QUERY``, or tags patterns of our own when the wheel ships none); an import
   query whose captures ``import_hooks`` turn into ``Import`` records; the extraction hooks it
   needs (``wrappers``, ``declarators``, ``container``, ``owner``, ``package_hook``, and
   ``prepare`` where the grammar's scanner misreads some input); a ``resolver`` from imports to
   workspace files, or None where imports do not name files; ``manifests`` it reads; and its
   ``TestPaths``.
2. Add it to ``LANGUAGES`` below.
3. Add its grammar wheel to ``[project] dependencies`` in ``pyproject.toml`` (a pinned range)
   and the wheel's module to the mypy ``ignore_missing_imports`` override there.

Its extensions override any entry in ``unparsed.py``. ``tests/test_extract.py`` then asks for
a definitions-and-imports case of the new language (``CASES``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable
from functools import cache
from typing import Final, TypeVar

from excerpt.index.lang import unparsed
from excerpt.index.lang.base import Language, ManifestReader, TestPaths
from excerpt.index.lang.c import C
from excerpt.index.lang.cpp import CPP
from excerpt.index.lang.csharp import CSHARP
from excerpt.index.lang.go import GO
from excerpt.index.lang.grammar import Grammar, load_grammar
from excerpt.index.lang.java import JAVA
from excerpt.index.lang.javascript import JAVASCRIPT, TSX, TYPESCRIPT
from excerpt.index.lang.kotlin import KOTLIN
from excerpt.index.lang.lua import LUA
from excerpt.index.lang.php import PHP
from excerpt.index.lang.python import PYTHON
from excerpt.index.lang.ruby import RUBY
from excerpt.index.lang.rust import RUST
from excerpt.index.lang.scala import SCALA
from excerpt.index.lang.shell import SHELL
from excerpt.index.lang.swift import SWIFT

__all__ = [
    "LANGUAGES",
    "PARSED_LANGUAGES",
    "Grammar",
    "Language",
    "by_name",
    "extraction_signature",
    "grammar",
    "is_test_path",
    "language_of",
    "manifest_of",
    "rules_for_tests",
]

LANGUAGES: Final[tuple[Language, ...]] = (
    PYTHON, JAVASCRIPT, TYPESCRIPT, TSX, GO, RUST, JAVA,
    C, CPP, CSHARP, RUBY, PHP,
    KOTLIN, SWIFT, SCALA, LUA, SHELL,
)  # fmt: skip
PARSED_LANGUAGES: Final = tuple(lang.name for lang in LANGUAGES)
# Raise when a query or hook changes what an unchanged file yields: an index made under
# another ``extraction_signature()`` re-extracts every file once.
EXTRACTION_VERSION: Final = 2

_V = TypeVar("_V")


def _table(pairs: Iterable[tuple[str, _V]], what: str) -> dict[str, _V]:
    """A lookup table; two languages claiming one key for different values is a bug."""
    out: dict[str, _V] = {}
    for key, value in pairs:
        if key in out and out[key] != value:
            raise ValueError(f"two languages claim the {what} {key!r}")
        out[key] = value
    return out


_BY_NAME: Final = _table(((lang.name, lang) for lang in LANGUAGES), "name")
_EXTENSIONS: Final = unparsed.EXTENSIONS | _table(
    ((ext, lang.name) for lang in LANGUAGES for ext in lang.extensions), "extension"
)
_NAMES: Final = unparsed.NAMES | _table(
    ((name, lang.name) for lang in LANGUAGES for name in lang.filenames), "file name"
)
_TESTS: Final[dict[str, TestPaths]] = _table(
    ((ext, lang.tests) for lang in LANGUAGES for ext in lang.test_extensions), "test extension"
)
_MANIFESTS: Final[dict[str, ManifestReader]] = _table(
    ((name, read) for lang in LANGUAGES for name, read in lang.manifests.items()), "manifest"
)


@cache
def extraction_signature() -> str:
    """What the registry extracts, as a digest: the languages, the files each claims, their
    test rules, and ``EXTRACTION_VERSION``. An index records it; a new one means that files
    stored before (e.g. a ``.rb`` file from before Ruby was parsed) must be read again."""
    doc = [
        EXTRACTION_VERSION,
        *(
            [lang.name, lang.family, lang.extensions, lang.filenames, _canonical(lang.tests)]
            for lang in LANGUAGES
        ),
    ]
    return hashlib.sha256(json.dumps(doc, default=_canonical).encode("utf-8")).hexdigest()


def _canonical(value: object) -> object:
    """A JSON form independent of set order and hash seed."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, frozenset | set):
        return sorted(str(_canonical(v)) for v in value)
    if isinstance(value, tuple | list):
        return [_canonical(v) for v in value]
    if isinstance(value, re.Pattern):
        return [value.pattern, value.flags]
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)


def by_name(name: str) -> Language | None:
    """The parsed language called ``name``; None for an unparsed or unknown one."""
    return _BY_NAME.get(name)


def language_of(path: str) -> str:
    """Language name from the path's extension or file name; ``other`` when unknown."""
    name = path.rsplit("/", 1)[-1]
    if name in _NAMES:
        return _NAMES[name]
    dot = name.rfind(".")
    return _EXTENSIONS.get(name[dot:].lower(), "other") if dot > 0 else "other"


@cache
def grammar(name: str) -> Grammar:
    """The grammar of a parsed language (loaded once per process).

    Raises:
        KeyError: ``name`` is not a parsed language.
    """
    return load_grammar(_BY_NAME[name])


def rules_for_tests(path: str) -> TestPaths | None:
    """The test-path rules for ``path``'s extension (exact case), if a language has any."""
    return _TESTS.get("." + path.rsplit("/", 1)[-1].rpartition(".")[2])


def is_test_path(path: str) -> bool:
    """True for test files by the naming conventions of the supported ecosystems."""
    rules = rules_for_tests(path)
    return rules is not None and rules.matches(path)


def manifest_of(path: str, data: bytes) -> str | None:
    """What a manifest file (``go.mod``, ``package.json``, ``Cargo.toml``, …) declares."""
    read = _MANIFESTS.get(path.rsplit("/", 1)[-1])
    return read(data) if read is not None else None
