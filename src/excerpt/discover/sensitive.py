"""The default sensitive-path deny list: such paths are never opened, only named.

Gitignore-style globs over the workspace-relative POSIX path, matched case-insensitively after
NFC normalisation, by whole path components (``config/dev.environments.ts`` is not ``.env*``).
``{a,b}`` is brace shorthand expanded on load. Exceptions (``!…``) make a path readable again;
its content is still scanned by later stages.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache

import pathspec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from excerpt.discover.wildmatch import LINEAR, compile_matcher

__all__ = ["DEFAULT_DENY", "is_sensitive_path", "sensitive_spec"]

DEFAULT_DENY = """
**/.env
**/.env.*
**/*.env
**/.envrc
**/secrets.{json,yml,yaml,toml,ini,xml,env}
**/secret.{json,yml,yaml,toml}
**/credentials
**/credentials.{json,yml,yaml,xml,toml,ini}
**/*credentials*.json
**/client_secret*.json
**/*service[-_]account*.json
**/application_default_credentials.json
**/.vault-token
**/*.keytab
**/krb5cc_*
**/.ssh/**
**/id_rsa
**/id_dsa
**/id_ecdsa
**/id_ed25519
**/*_rsa
**/*_dsa
**/*_ecdsa
**/*_ed25519
**/*.pem
**/*.key
**/*.p8
**/*.p12
**/*.pfx
**/*.pkcs12
**/*.jks
**/*.keystore
**/*.ppk
**/.gnupg/**
**/secring.*
**/*.gpg
**/otr.private_key
**/*.kdb
**/*.kdbx
**/*.keychain
**/*.agilekeychain
**/*.psafe3
**/*.kwallet
**/.aws/**
**/.azure/**
**/.config/gcloud/**
**/.kube/config
**/kubeconfig
**/*.kubeconfig
**/.docker/config.json
**/.dockercfg
**/.npmrc
**/.pypirc
**/pip.conf
**/.gem/credentials
**/.netrc
**/_netrc
**/.git-credentials
**/.pgpass
**/.my.cnf
**/.s3cfg
**/.boto
**/.htpasswd
**/.terraformrc
**/terraform.rc
**/.config/gh/hosts.yml
**/.config/hub
**/doctl/config.yaml
**/.pulumi/credentials.json
**/config/master.key
**/*.tfstate
**/*.tfstate.*
**/*.tfvars
**/*.tfvars.json
**/.*_history
**/.histfile
**/.lesshst
**/*.ovpn
**/*.rdp
**/*.tblk/**
**/etc/shadow
**/etc/gshadow
!**/.env.example
!**/.env.sample
!**/.env.template
!**/.env.dist
!**/.env.defaults
!**/*.tfvars.example
!**/*.example.json
!**/*.sample.json
!**/*.pub
"""

_BRACES = re.compile(r"\{([^{}]*)\}")


def _expand_braces(line: str) -> list[str]:
    match = _BRACES.search(line)
    if match is None:
        return [line]
    head, tail = line[: match.start()], line[match.end() :]
    return [out for alt in match.group(1).split(",") for out in _expand_braces(head + alt + tail)]


def _normalise(path: str) -> str:
    return unicodedata.normalize("NFC", path).casefold()


def _lines(extra: tuple[str, ...]) -> list[str]:
    lines: list[str] = []
    for raw in (*DEFAULT_DENY.splitlines(), *extra):
        line = raw.strip()
        if line and not line.startswith("#"):
            lines.extend(_normalise(x) for x in _expand_braces(line))
    return lines


@lru_cache(maxsize=8)
def sensitive_spec(extra: tuple[str, ...] = ()) -> pathspec.GitIgnoreSpec:
    """The compiled deny list, optionally extended by policy lines (same syntax)."""
    return pathspec.GitIgnoreSpec.from_lines(_lines(extra))


@lru_cache(maxsize=8)
def _matcher(extra: tuple[str, ...], *, linear: bool = True) -> Callable[[str], bool]:
    """One combined regex per polarity when every exception follows every deny rule (as in
    the default list, where last-match-wins reduces to "denied and not excepted"); else the
    general gitignore evaluation. The rules are translated, not compiled one by one: one
    compiled expression per polarity is what every process start pays. ``linear``: ASCII
    paths go to RE2 (False: Python's ``re`` for every path, as the tests compare)."""
    translated = [GitIgnoreSpecPattern.pattern_to_regex(line) for line in _lines(extra)]
    rules = [(regex, include) for regex, include in translated if regex and include is not None]
    includes = [include for _, include in rules]
    if False in includes and True in includes[includes.index(False) :]:
        spec = sensitive_spec(extra)
        return lambda path: bool(spec.match_file(path))
    deny_source = _combined([regex for regex, include in rules if include])
    allow_source = _combined([regex for regex, include in rules if not include])
    deny, allow = re.compile(deny_source), re.compile(allow_source)
    fast_deny, fast_allow = _ascii_prefix(deny_source), _ascii_prefix(allow_source)
    if not linear or fast_deny is None or fast_allow is None:
        return lambda path: deny.match(path) is not None and allow.match(path) is None

    def matches(path: str) -> bool:
        if not path.isascii():
            return deny.match(path) is not None and allow.match(path) is None
        data = path.encode("ascii")
        return fast_deny(data) and not fast_allow(data)

    return matches


def _combined(sources: Iterable[str]) -> str:
    parts = [source.replace("(?P<ps_d>", "(?:") for source in sources]
    return "|".join(f"(?:{s})" for s in parts) or r"(?!)"


def _ascii_prefix(source: str) -> Callable[[bytes], bool] | None:
    """A matcher anchored at the start of an ASCII subject, in RE2 (a tree of 100,000 paths
    is asked once a path on every refresh: RE2's one pass over the combined rules is several
    times faster than backtracking through each); None without RE2, for a pattern holding a
    character outside ASCII (over bytes it could mean something else), or one RE2 refuses.
    On an ASCII subject, ASCII patterns mean the same to both engines, as ``re`` on text."""
    if source == r"(?!)":
        return lambda data: False
    if not LINEAR or not source.isascii():
        return None
    return compile_matcher(source, whole=False)


# a refresh asks once for every path of the tree: the cache holds a 100,000-file tree's
# paths with room to spare (a smaller one is emptied in a cycle and answers nothing)
@lru_cache(maxsize=1 << 18)
def is_sensitive_path(path: str, extra: tuple[str, ...] = ()) -> bool:
    """True when the workspace-relative POSIX ``path`` is on the deny list."""
    # NFC leaves ASCII as it is, and casefolds it as ``lower`` does
    return _matcher(extra)(path.lower() if path.isascii() else _normalise(path))
