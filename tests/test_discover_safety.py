"""Discovery and the guarded reader against hostile trees (RELIABILITY B1, B3 #23-24, (c)).

Every test here asserts what is *never* done (open a FIFO, follow a link out of the root, read
a sensitive file, leak its bytes into the cache) as well as what is reported instead.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cache_contents import cache_surfaces
from conftest import git, git_commit_all, write_tree
from excerpt.core.settings import Limits
from excerpt.discover import reader, sensitive
from excerpt.discover.reader import FileContent, Omission, read_file
from excerpt.discover.sensitive import is_sensitive_path
from excerpt.index.build import IndexReport, index_repository
from excerpt.index.store import IndexStore
from open_audit import recording_opens

pytestmark = pytest.mark.timeout(30)

MakeRepo = Callable[..., Path]

# -- open audit (the shared session hook of ``open_audit``) ----------------------------------


def opened_realpaths(opened: list[str]) -> set[str]:
    # bare relative names come from dir_fd opens, already recorded with their directory
    return {os.path.realpath(p) for p in opened if os.path.isabs(p)}


# -- helpers -------------------------------------------------------------------------------------


def make_fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def make_socket(path: Path) -> None:
    """Bind an AF_UNIX socket at ``path`` (bound relative to its directory: no 108-byte limit)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.bind(path.name)
    finally:
        os.chdir(cwd)


def make_link(root: Path, rel: str, target: str | Path) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def store_rows(report: IndexReport) -> dict[str, tuple[str, str | None]]:
    """``{path: (encoding, status)}`` of every file row in the index."""
    assert report.cache_dir is not None
    store = IndexStore.open(report.cache_dir)
    try:
        rows = store.conn.execute("SELECT path, encoding, status FROM files").fetchall()
    finally:
        store.close()
    return {str(p): (str(e), s) for p, e, s in rows}


def omitted_map(report: IndexReport) -> dict[str, str]:
    return dict(report.omitted_paths)


def leaks(surfaces: list[tuple[str, bytes]], needle: str) -> list[str]:
    """Where ``needle`` (or its lower-case form) occurs in any surface."""
    forms = {needle.encode(), needle.lower().encode()}
    return [where for where, data in surfaces if any(f in data for f in forms)]


GIT_IDS = [pytest.param(True, id="git"), pytest.param(False, id="no-git")]

# -- the hostile tree ----------------------------------------------------------------------------

# Letters only, camel-cased: the tokenizer's joined, folded form is exactly ``canary.lower()``.
OUTSIDE_CANARY = "ZqxOutsideCanaryKilo"
EVIL_CANARY = "ZqxSiblingEvilCanaryLima"
ENV_CANARY = "ZqxDotenvCanaryMike"
VISIBLE = "ZqxVisibleControlGolf"  # ordinary source text: must reach the cache (the control)


@dataclass(frozen=True)
class Hostile:
    root: Path
    outside: Path
    expected: dict[str, str]  # path -> the reason it must be listed with
    git_may_skip: frozenset[str]  # untracked FIFOs/sockets: git's own list leaves them out
    forbidden: frozenset[str]  # real paths that must never be opened
    indexed: frozenset[str]


def build_hostile(base: Path, *, use_git: bool) -> Hostile:
    outside = write_tree(base / "outside", {"secret.txt": f"{OUTSIDE_CANARY}\n"})
    evil = write_tree(base / "repo_evil", {"secret.txt": f"{EVIL_CANARY}\n"})
    root = write_tree(
        base / "repo",
        {
            "src/app.py": f"def app():\n    return {VISIBLE}\n",
            ".env": f"TOKEN={ENV_CANARY}\n",
            "tracked_pipe.txt": "a regular file at commit time\n",
            "tracked_sock.txt": "a regular file at commit time\n",
        },
    )
    links: dict[str, str | Path] = {
        "link_out": outside / "secret.txt",
        "rel_out": "../outside/secret.txt",
        "src/deep/er/chain": "../../../../outside/secret.txt",
        "dev_zero": "/dev/zero",
        "loop": "loop",
        "a": "b",
        "b": "a",
        "dangling": "does-not-exist.txt",
        "dir_out": outside,
        "root_link": "/",
        "evil": "../repo_evil/secret.txt",
        "docs/cfg": "../.env",
        "pipe_link": "pipe",
    }
    for rel, target in links.items():
        make_link(root, rel, target)
    if use_git:
        git_commit_all(root)  # links are stored as links; the special files come after
    for rel in ("tracked_pipe.txt", "tracked_sock.txt"):
        (root / rel).unlink()
    make_fifo(root / "tracked_pipe.txt")
    make_socket(root / "tracked_sock.txt")
    make_fifo(root / "pipe")
    make_socket(root / "sock")
    expected = {
        "pipe": "not_regular_file",
        "sock": "not_regular_file",
        "tracked_pipe.txt": "not_regular_file",
        "tracked_sock.txt": "not_regular_file",
        "pipe_link": "not_regular_file",
        "loop": "not_regular_file",
        "a": "not_regular_file",
        "b": "not_regular_file",
        "dangling": "not_regular_file",
        "link_out": "symlink_outside_root",
        "rel_out": "symlink_outside_root",
        "src/deep/er/chain": "symlink_outside_root",
        "dev_zero": "symlink_outside_root",
        "dir_out": "symlink_outside_root",
        "root_link": "symlink_outside_root",
        "evil": "symlink_outside_root",
        "docs/cfg": "sensitive",
        ".env": "sensitive",
    }
    forbidden = {
        *(str(root / p) for p in ("pipe", "sock", "tracked_pipe.txt", "tracked_sock.txt", ".env")),
        str(outside),
        str(outside / "secret.txt"),
        str(evil / "secret.txt"),
        "/dev/zero",
        "/",
    }
    return Hostile(
        root=root,
        outside=outside,
        expected=expected,
        git_may_skip=frozenset({"pipe", "sock"} if use_git else ()),
        forbidden=frozenset(os.path.realpath(p) for p in forbidden),
        indexed=frozenset({"src/app.py"}),
    )


@pytest.mark.parametrize("use_git", GIT_IDS)
@pytest.mark.reliability("B1.1", cases=2)
@pytest.mark.reliability("B1.2", cases=2)
@pytest.mark.reliability("B1.3")
@pytest.mark.reliability("B1.4", cases=4)
@pytest.mark.reliability("B1.6", cases=6)
def test_indexing_a_hostile_tree_finishes_and_lists_each_special_path_with_its_reason(
    tmp_path: Path, cache_dir: Path, use_git: bool
) -> None:
    tree = build_hostile(tmp_path, use_git=use_git)
    report = index_repository(tree.root, cache_dir=cache_dir, jobs=1)
    listed = omitted_map(report)
    for path, reason in tree.expected.items():
        if path in tree.git_may_skip and path not in listed:
            continue
        assert listed.get(path) == reason, path
    assert set(store_rows(report)) == set(tree.indexed)
    assert report.files_indexed == len(tree.indexed)


@pytest.mark.parametrize("use_git", GIT_IDS)
@pytest.mark.reliability("B1.1", cases=2)
@pytest.mark.reliability("B1.2", cases=2)
@pytest.mark.reliability("B1.3")
@pytest.mark.reliability("B1.4", cases=4)
@pytest.mark.reliability("B1.6", cases=6)
def test_indexing_a_hostile_tree_never_opens_a_special_outside_or_sensitive_path(
    tmp_path: Path, cache_dir: Path, use_git: bool
) -> None:
    tree = build_hostile(tmp_path, use_git=use_git)
    with recording_opens() as opened:
        index_repository(tree.root, cache_dir=cache_dir, jobs=1)
    seen = opened_realpaths(opened)
    # the audit sees the reader's own opens, so an empty intersection means something
    assert os.path.realpath(tree.root / "src/app.py") in seen
    assert seen & tree.forbidden == set()


@pytest.mark.parametrize("use_git", GIT_IDS)
def test_no_hostile_content_reaches_the_cache(
    tmp_path: Path, cache_dir: Path, use_git: bool
) -> None:
    tree = build_hostile(tmp_path, use_git=use_git)
    index_repository(tree.root, cache_dir=cache_dir, jobs=1)
    surfaces = cache_surfaces(cache_dir, tmp_path / "scratch")
    assert leaks(surfaces, VISIBLE)  # the scan does see indexed content
    for canary in (OUTSIDE_CANARY, EVIL_CANARY, ENV_CANARY):
        assert leaks(surfaces, canary) == [], canary


def _abs_under_root_link(outside: Path) -> str:
    return "root_link/" + str(outside / "secret.txt").lstrip("/")


@pytest.mark.parametrize(
    ("rel", "reason"),
    [
        pytest.param("pipe", "not_regular_file", id="fifo"),
        pytest.param("sock", "not_regular_file", id="unix-socket"),
        pytest.param("pipe_link", "not_regular_file", id="link-to-fifo"),
        pytest.param("link_out", "symlink_outside_root", id="abs-link-outside"),
        pytest.param("rel_out", "symlink_outside_root", id="rel-link-outside"),
        pytest.param("src/deep/er/chain", "symlink_outside_root", id="dotdot-chain-of-3"),
        pytest.param("dev_zero", "symlink_outside_root", id="link-to-dev-zero"),
        pytest.param("loop", "not_regular_file", id="self-loop"),
        pytest.param("a", "not_regular_file", id="two-link-loop"),
        pytest.param("dangling", "not_regular_file", id="dangling"),
        pytest.param("dir_out/secret.txt", "symlink_outside_root", id="through-dir-link"),
        pytest.param("<root_link>", "symlink_outside_root", id="through-link-to-slash"),
        pytest.param("evil", "symlink_outside_root", id="sibling-prefix-dir"),
        pytest.param("../repo_evil/secret.txt", "symlink_outside_root", id="dotdot-sibling"),
        pytest.param("docs/cfg", "sensitive", id="link-to-inside-dotenv"),
        pytest.param(".env", "sensitive", id="dotenv"),
        pytest.param("src/../.env", "sensitive", id="dotenv-via-dotdot"),
    ],
)
@pytest.mark.reliability("B1.1", ids=("abs-link-outside", "rel-link-outside", "sibling-prefix-dir"))
@pytest.mark.reliability("B1.2", ids=("through-dir-link", "through-link-to-slash"))
@pytest.mark.reliability("B1.3", ids=("link-to-inside-dotenv",))
@pytest.mark.reliability(
    "B1.4", ids=("dotdot-chain-of-3", "self-loop", "two-link-loop", "dangling")
)
@pytest.mark.reliability("B1.6", ids=("fifo", "unix-socket", "link-to-fifo", "link-to-dev-zero"))
@pytest.mark.reliability("B3.23", ids=("dotenv", "dotenv-via-dotdot"))
@pytest.mark.reliability("B4.32", ids=("dotdot-sibling",))
def test_read_file_refuses_each_hostile_path_without_opening_it(
    tmp_path: Path, rel: str, reason: str
) -> None:
    tree = build_hostile(tmp_path, use_git=False)
    if rel == "<root_link>":
        rel = _abs_under_root_link(tree.outside)
    with recording_opens() as opened:
        result = read_file(tree.root, rel, Limits())
    assert result == Omission(path=rel, reason=reason)
    assert opened_realpaths(opened) & tree.forbidden == set()


# -- sensitive deny list (RELIABILITY (c)) -------------------------------------------------------

SENSITIVE = [
    ".env", "app/.env", ".ENV", "a/b/.Env", ".env.local", "config/.env.production",
    ".env.prod.local", "prod.env", "deploy/op.env", ".envrc", ".env.d/x", "secrets.json",
    "conf/secrets.yaml", "SECRETS.YML", "secrets.env", "secret.toml", "credentials",
    "credentials.json", "svc/my-credentials-prod.json", "client_secret_123.apps.json",
    "gcp/my-service-account-key.json", "gcp/service_account.json",
    "application_default_credentials.json", ".vault-token", "krb/host.keytab",
    "tmp/krb5cc_1000", ".ssh/config", "home/u/.ssh/known_hosts", "id_rsa", "ID_RSA",
    "keys/id_ed25519", "id_ecdsa", "id_dsa", "deploy_rsa", "backup_ed25519", "tls/server.pem",
    "tls/server.key", "AuthKey_ABC.p8", "cert.p12", "cert.PFX", "store.pkcs12",
    "android/release.jks", "app.keystore", "putty.ppk", ".gnupg/pubring.kbx", "secring.gpg",
    "backup.gpg", "otr.private_key", "db.kdbx", "old.kdb", "login.keychain",
    "1pass.agilekeychain", "vault.psafe3", "kde.kwallet", ".aws/config", ".aws/credentials",
    ".azure/accessTokens.json", ".config/gcloud/credentials.db", ".kube/config", "kubeconfig",
    "prod.kubeconfig", ".docker/config.json", ".dockercfg", ".npmrc", "web/.npmrc", ".pypirc",
    "pip.conf", ".gem/credentials", ".netrc", "_netrc", ".git-credentials", ".pgpass",
    ".my.cnf", ".s3cfg", ".boto", "public/.htpasswd", ".terraformrc", "terraform.rc",
    ".config/gh/hosts.yml", ".config/hub", "doctl/config.yaml", ".pulumi/credentials.json",
    "config/master.key", "Config/Master.KEY", "infra/terraform.tfstate",
    "terraform.tfstate.backup", "prod.tfvars", "x/vars.tfvars.json", ".bash_history",
    "home/.python_history", ".histfile", ".lesshst", "vpn/client.ovpn", "remote.rdp",
    "vpn/Office.tblk/config.ovpn", "etc/shadow", "rootfs/etc/gshadow",
]  # fmt: skip

NOT_SENSITIVE = [
    # C2 exceptions: readable again
    ".env.example", "x/.env.sample", ".env.template", ".env.dist", ".env.defaults",
    ".ENV.Example", "x/terraform.tfvars.example", "id_rsa.pub", "keys/deploy_ed25519.pub",
    "a.example.json", "b.sample.json",
    # C4: token-matched, not substrings
    "config/dev.environments.ts", "env.ts", "environment.yml", "db/migrations/0042_add_index.sql",
    "yarn.lock", "Cargo.lock", "src/payload.py", "docs/keys.md", "tests/test_credentials.py",
    "src/secretary.py", "environment/settings.py", "key.py",
]  # fmt: skip


@pytest.mark.parametrize("path", SENSITIVE, ids=SENSITIVE)
@pytest.mark.reliability("B3.23")
def test_deny_list_path_is_sensitive(path: str) -> None:
    assert is_sensitive_path(path)


@pytest.mark.parametrize("path", NOT_SENSITIVE, ids=NOT_SENSITIVE)
@pytest.mark.reliability(
    "B3.24",
    ids=(
        ".env.example",
        "x/.env.sample",
        ".env.template",
        ".env.dist",
        ".env.defaults",
        ".ENV.Example",
        "x/terraform.tfvars.example",
        "id_rsa.pub",
        "keys/deploy_ed25519.pub",
        "a.example.json",
        "b.sample.json",
    ),
)
def test_exception_or_ordinary_path_is_not_sensitive(path: str) -> None:
    assert not is_sensitive_path(path)


_PIECES = st.sampled_from(
    [".env", "env", ".example", "id_rsa", ".pub", "_rsa", "credentials", ".json", "x",
     ".ssh", ".aws", "config", "secrets", ".yml", ".tfvars", ".tfstate", "krb5cc_", "é",
     "Master.KEY", ".ENV", "service-account", "_history", ".gnupg", "etc", "shadow", "."]
)  # fmt: skip
_NAMES = st.lists(_PIECES, min_size=1, max_size=3).map("".join)


@given(st.lists(_NAMES, min_size=1, max_size=4).map("/".join))
@settings(max_examples=600, deadline=None)
def test_the_sensitive_rules_give_one_verdict_in_re2_and_in_python_re(
    path: str,
) -> None:
    """The combined rules in RE2 (on ASCII paths) and in Python's ``re`` give one verdict on
    every path built of the deny list's own pieces."""
    normal = sensitive._normalise(path)
    assert sensitive._matcher(())(normal) == sensitive._matcher((), linear=False)(normal)


# -- canaries in sensitive files never reach the cache -------------------------------------------

CANARIES = {
    ".env": "ZqxCanaryDotenvAlpha",
    "config/.env.production": "ZqxCanaryEnvProdBravo",
    "keys/id_rsa": "ZqxCanaryIdRsaCharlie",
    "deploy.pem": "ZqxCanaryPemDelta",
    ".aws/credentials": "ZqxCanaryAmazonEcho",
    ".npmrc": "ZqxCanaryNpmrcFoxtrot",
}


@pytest.mark.parametrize("use_git", GIT_IDS)
@pytest.mark.reliability("B3.23", cases=6)
def test_sensitive_file_canaries_never_appear_in_any_cache_byte(
    make_repo: MakeRepo, cache_dir: Path, tmp_path: Path, use_git: bool
) -> None:
    files: dict[str, str | bytes] = {p: f"value = {c}\n" for p, c in CANARIES.items()}
    files["src/app.py"] = f"{VISIBLE} = 1\n"
    repo = make_repo(files, use_git=use_git)
    with recording_opens() as opened:
        report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    assert {p: r for p, r in report.omitted_paths if p in CANARIES} == dict.fromkeys(
        CANARIES, "sensitive"
    )
    sensitive_real = {os.path.realpath(repo / p) for p in CANARIES}
    assert opened_realpaths(opened) & sensitive_real == set()
    surfaces = cache_surfaces(cache_dir, tmp_path / "scratch")
    # control: ordinary content does reach the cache, so the scan can see a leak
    assert leaks(surfaces, VISIBLE)
    for canary in CANARIES.values():
        assert leaks(surfaces, canary) == [], canary
    # listed by name only: no size (nor hash) for a sensitive path
    assert report.cache_dir is not None
    store = IndexStore.open(report.cache_dir)
    try:
        sizes = store.conn.execute("SELECT size FROM omitted WHERE reason = 'sensitive'").fetchall()
    finally:
        store.close()
    assert sizes and all(size is None for (size,) in sizes)


@pytest.mark.reliability("B1.12")
def test_force_added_ignored_dotenv_tracked_by_git_is_still_sensitive(
    make_repo: MakeRepo, cache_dir: Path, tmp_path: Path
) -> None:
    repo = make_repo({".gitignore": ".env\n", "main.py": f"X = '{VISIBLE}'\n"})
    (repo / ".env").write_text(f"TOKEN={ENV_CANARY}\n", encoding="utf-8")
    git(repo, "add", "-f", ".env")
    git(repo, "commit", "-q", "-m", "force-add .env")
    tracked = subprocess.run(
        ["git", "ls-files", "--", ".env"], cwd=repo, capture_output=True, check=True, text=True
    )
    assert tracked.stdout.strip() == ".env"  # the fixture really tracks the ignored file
    with recording_opens() as opened:
        report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    assert omitted_map(report).get(".env") == "sensitive"
    assert ".env" not in store_rows(report)
    assert os.path.realpath(repo / ".env") not in opened_realpaths(opened)
    surfaces = cache_surfaces(cache_dir, tmp_path / "scratch")
    assert leaks(surfaces, VISIBLE)
    assert leaks(surfaces, ENV_CANARY) == []


# -- size limits ---------------------------------------------------------------------------------


def _sparse_5gib(path: Path) -> None:
    with path.open("wb") as f:
        f.truncate(5 * 2**30)


def _real_3mib(path: Path) -> None:
    path.write_bytes(b"x = 1\n" * (3 * 2**20 // 6 + 1))


@pytest.mark.parametrize("use_git", GIT_IDS)
@pytest.mark.parametrize(
    "make_big",
    [
        pytest.param(
            _sparse_5gib,
            id="sparse-5GiB",
        ),
        pytest.param(_real_3mib, id="real-3MiB"),
    ],
)
@pytest.mark.reliability("B1.7")
def test_file_over_the_size_cap_is_omitted_too_large_without_being_opened(
    make_repo: MakeRepo, cache_dir: Path, use_git: bool, make_big: Callable[[Path], None]
) -> None:
    repo = make_repo({"main.py": "X = 1\n"}, use_git=use_git)
    make_big(repo / "big.dat")  # untracked in the git case: git never reads it
    with recording_opens() as opened:
        report = index_repository(repo, cache_dir=cache_dir, jobs=1, limits=Limits())
    assert os.path.realpath(repo / "big.dat") not in opened_realpaths(opened)
    assert omitted_map(report).get("big.dat") == "too_large"
    assert not report.discovery_truncated
    assert set(store_rows(report)) == {"main.py"}


@pytest.mark.reliability("B1.7")
def test_an_over_cap_file_does_not_crowd_ordinary_files_out_of_discovery(
    make_repo: MakeRepo, cache_dir: Path
) -> None:
    repo = make_repo({"zzz.py": "X = 1\n"}, use_git=False)
    with (repo / "aaa.bin").open("wb") as f:
        f.truncate(2 * 2**30 - 1)  # within max_total_bytes on its own, far over max_file_bytes
    report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    assert "zzz.py" in store_rows(report)
    assert omitted_map(report).get("aaa.bin") == "too_large"


# -- binary and encodings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nul_at", "binary"),
    [
        pytest.param(0, True, id="nul-at-0"),
        pytest.param(8191, True, id="nul-at-last-prefix-byte"),
        pytest.param(8192, False, id="nul-just-past-8KiB-prefix"),
        pytest.param(70_001, False, id="nul-after-70000"),
    ],
)
@pytest.mark.reliability("B2.16")
def test_nul_inside_the_first_8kib_makes_a_file_binary_and_only_there(
    make_repo: MakeRepo, cache_dir: Path, nul_at: int, binary: bool
) -> None:
    repo = make_repo({"data.txt": b"a" * nul_at + b"\0" + b"tail\n"}, use_git=False)
    report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    rows = store_rows(report)
    if binary:
        assert rows["data.txt"] == ("binary", "binary")
        assert report.omitted.get("binary") == 1
        assert omitted_map(report).get("data.txt") == "binary"
        assert report.files_indexed == 0
    else:
        assert rows["data.txt"] == ("utf-8", None)
        assert "binary" not in report.omitted
        assert report.files_indexed == 1


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        pytest.param("caf\u00e9 = 1\n".encode("latin-1"), "not_utf8", id="latin-1"),
        pytest.param(b"\xef\xbb\xbfx = 1\n", "utf-8-sig", id="utf-8-bom"),
        pytest.param("caf\u00e9 = 1\n".encode(), "utf-8", id="utf-8"),
        pytest.param(b"\xff\xfe" + "x = 1\n".encode("utf-16-le"), "utf-16-le", id="utf-16-le"),
        pytest.param(b"\xfe\xff" + "x = 1\n".encode("utf-16-be"), "utf-16-be", id="utf-16-be"),
        pytest.param(
            b"x = 1\n" * 500 + b"y = '\xff\xfe'\n" + b"z = 2\n",
            "not_utf8",
            id="invalid-utf8-mid-file",
        ),
    ],
)
@pytest.mark.reliability("B2.15")
def test_text_file_is_indexed_with_its_detected_encoding(
    make_repo: MakeRepo, cache_dir: Path, data: bytes, encoding: str
) -> None:
    repo = make_repo({"mod.py": data}, use_git=False)
    report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    assert store_rows(report)["mod.py"] == (encoding, None)
    assert report.files_indexed == 1


# -- default ignores -----------------------------------------------------------------------------

JUNK = {
    "node_modules/x.js": "module.exports = 1;\n",
    ".venv/lib/y.py": "Y = 1\n",
    "__pycache__/z.py": "Z = 1\n",
}


@pytest.mark.parametrize(
    "hide_build", [pytest.param(True, id="build-gitignored"), pytest.param(False, id="plain")]
)
@pytest.mark.reliability("B1.12", ids=("build-gitignored",))
def test_junk_and_untracked_build_dirs_are_skipped_but_a_tracked_build_file_is_indexed(
    make_repo: MakeRepo, cache_dir: Path, hide_build: bool
) -> None:
    files: dict[str, str | bytes] = {"src/main.py": "M = 1\n", "build/keep.py": "K = 1\n"}
    if hide_build:
        files[".gitignore"] = "build/\n"
    repo = make_repo(files)
    if hide_build:
        git(repo, "add", "-f", "build/keep.py")
        git(repo, "commit", "-q", "-m", "force-add build/keep.py")
    write_tree(repo, {**JUNK, "build/out.js": "var out = 1;\n"})  # all untracked
    report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    rows = store_rows(report)
    assert {"src/main.py", "build/keep.py"} <= set(rows)
    assert not set(rows) & {*JUNK, "build/out.js"}


@pytest.mark.reliability("B1.12")
def test_outside_git_nested_gitignore_files_are_honoured(
    make_repo: MakeRepo, cache_dir: Path
) -> None:
    repo = make_repo(
        {
            ".gitignore": "*.log\n",
            "app.log": "log line\n",
            "src/debug.log": "log line\n",
            "src/main.py": "M = 1\n",
            "sub/.gitignore": "secret_dir/\n",
            "sub/secret_dir/data.py": "D = 1\n",
            "sub/keep.py": "K = 1\n",
            "secret_dir/top.py": "T = 1\n",  # the nested rule applies below sub/ only
            **JUNK,
            "build/out.js": "var out = 1;\n",
        },
        use_git=False,
    )
    report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    rows = set(store_rows(report))
    assert {"src/main.py", "sub/keep.py", "secret_dir/top.py"} <= rows
    assert not rows & {"app.log", "src/debug.log", "sub/secret_dir/data.py", *JUNK, "build/out.js"}


# -- incremental runs ----------------------------------------------------------------------------


def _three_files(make_repo: MakeRepo, use_git: bool) -> Path:
    return make_repo({"a.py": "A = 1\n", "b.py": "B = 1\n", "c.py": "C = 1\n"}, use_git=use_git)


@pytest.mark.parametrize("use_git", GIT_IDS)
def test_editing_one_file_rereads_only_that_file(
    make_repo: MakeRepo, cache_dir: Path, use_git: bool
) -> None:
    repo = _three_files(make_repo, use_git)
    assert index_repository(repo, cache_dir=cache_dir, jobs=1).files_read == 3
    assert index_repository(repo, cache_dir=cache_dir, jobs=1).files_read == 0
    (repo / "b.py").write_text("B = 2  # edited\n", encoding="utf-8")
    report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    assert (report.files_read, report.files_removed) == (1, 0)
    assert report.files_indexed == 3


@pytest.mark.parametrize("use_git", GIT_IDS)
def test_deleting_one_file_removes_it_from_the_index(
    make_repo: MakeRepo, cache_dir: Path, use_git: bool
) -> None:
    repo = _three_files(make_repo, use_git)
    index_repository(repo, cache_dir=cache_dir, jobs=1)
    (repo / "c.py").unlink()
    report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    assert (report.files_read, report.files_removed) == (0, 1)
    assert set(store_rows(report)) == {"a.py", "b.py"}


@pytest.mark.parametrize("use_git", GIT_IDS)
@pytest.mark.reliability("B1.6")
def test_a_file_replaced_by_a_fifo_between_runs_leaves_the_index_as_not_regular_file(
    make_repo: MakeRepo, cache_dir: Path, use_git: bool
) -> None:
    repo = _three_files(make_repo, use_git)
    index_repository(repo, cache_dir=cache_dir, jobs=1)
    (repo / "b.py").unlink()
    make_fifo(repo / "b.py")
    with recording_opens() as opened:
        report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    assert report.files_removed == 1
    assert set(store_rows(report)) == {"a.py", "c.py"}
    assert omitted_map(report).get("b.py") == "not_regular_file"
    assert os.path.realpath(repo / "b.py") not in opened_realpaths(opened)


# -- check/open races (RELIABILITY B1 row 5) -----------------------------------------------------

INSIDE = b"INSIDE = 1\n"
OUTSIDE = b"OUTSIDE_SECRET = 'ZqxRaceOutside'\n"


SWAPPER = """
import os, sys
root, outside, inside = sys.argv[1], sys.argv[2], sys.argv[3].encode()
target = os.path.join(root, "target.py")
link, reg = os.path.join(root, ".swap-link"), os.path.join(root, ".swap-reg")
first = True
while True:
    os.symlink(outside, link)
    os.replace(link, target)
    with open(reg, "wb") as f:
        f.write(inside)
    os.replace(reg, target)
    if first:
        print("swapping", flush=True)
        first = False
"""


@pytest.mark.reliability("B1.5", cases=50)
def test_a_file_swapped_with_an_outside_symlink_never_yields_the_outside_bytes(
    tmp_path: Path,
) -> None:
    outside = write_tree(tmp_path / "outside", {"target.py": OUTSIDE}) / "target.py"
    root = write_tree(tmp_path / "repo", {"target.py": INSIDE})
    # A separate process swaps truly in parallel with the reader (no GIL hand-offs needed).
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root), str(outside), INSIDE.decode()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    results: list[FileContent | Omission] = []
    try:
        assert swapper.stdout is not None
        assert swapper.stdout.readline() == b"swapping\n"  # blocks until the first swap
        for _ in range(50):
            results.append(read_file(root, "target.py", Limits()))
        assert swapper.poll() is None, "the swapper stopped early"
    finally:
        swapper.kill()
        swapper.communicate()
    for result in results:
        if isinstance(result, FileContent):
            assert result.data == INSIDE
        else:
            assert isinstance(result, Omission)
            assert result.reason in ("not_regular_file", "symlink_outside_root")


class _SwapAfterTypeCheck:
    """Stands in for ``os`` inside the reader: runs ``swap`` right after the ``lstat`` check,
    so the swap lands deterministically between the check and the open."""

    def __init__(self, swap: Callable[[], None]) -> None:
        self._swap = swap

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def stat(self, *args: Any, **kwargs: Any) -> os.stat_result:
        result = os.stat(*args, **kwargs)
        self._swap()
        return result


def _swap_to_outside_link(root: Path, outside: Path) -> None:
    os.symlink(outside, root / ".swap")
    os.replace(root / ".swap", root / "target.py")


def _swap_to_new_regular_file(root: Path, outside: Path) -> None:
    (root / ".swap").write_bytes(b"REPLACED = 1\n")
    os.replace(root / ".swap", root / "target.py")


def _swap_to_fifo(root: Path, outside: Path) -> None:
    os.mkfifo(root / ".swap")
    os.replace(root / ".swap", root / "target.py")


@pytest.mark.parametrize(
    "swap",
    [
        pytest.param(_swap_to_outside_link, id="to-outside-symlink"),
        pytest.param(_swap_to_new_regular_file, id="to-another-regular-file"),
        pytest.param(_swap_to_fifo, id="to-fifo"),
    ],
)
@pytest.mark.reliability("B1.5")
def test_a_file_swapped_between_the_check_and_the_open_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: Callable[[Path, Path], None]
) -> None:
    outside = write_tree(tmp_path / "outside", {"target.py": OUTSIDE}) / "target.py"
    root = write_tree(tmp_path / "repo", {"target.py": INSIDE})
    monkeypatch.setattr(reader, "os", _SwapAfterTypeCheck(lambda: swap(root, outside)))
    result = read_file(root, "target.py", Limits())
    assert result == Omission(path="target.py", reason="not_regular_file")


@pytest.mark.reliability("B1.5")
def test_a_parent_dir_swapped_for_an_outside_link_after_the_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = write_tree(tmp_path / "outside", {"f.py": OUTSIDE})
    root = write_tree(tmp_path / "repo", {"sub/f.py": INSIDE})

    def swap_parent() -> None:
        if (root / "sub").is_symlink():
            return
        os.rename(root / "sub", root / "sub-old")
        os.symlink(outside, root / "sub")

    # the swap lands right after the file's type check, before its open
    monkeypatch.setattr(reader, "os", _SwapAfterTypeCheck(swap_parent))
    result = read_file(root, "sub/f.py", Limits())
    assert (root / "sub").is_symlink()  # the swap did happen
    assert not (isinstance(result, FileContent) and result.data == OUTSIDE)
    # the directory was held by descriptor: what is read is the inode that was checked
    assert isinstance(result, Omission) or result.data == INSIDE
    # and a fresh read now sees the link and refuses it
    assert read_file(root, "sub/f.py", Limits()) == Omission(
        path="sub/f.py", reason="symlink_outside_root"
    )


@pytest.mark.reliability("B1.12", cases=3)
def test_inside_git_negations_nested_ignore_files_and_a_tracked_ignored_file_follow_git(
    make_repo: MakeRepo, cache_dir: Path
) -> None:
    """Inside a work tree git's own list is the truth: a negation re-includes, a nested
    ``.gitignore`` overrides its parent, and a tracked file stays though a rule ignores it."""
    repo = make_repo(
        {
            ".gitignore": "*.log\n!keep.log\nbuild/\n",
            "src/app.py": "A = 1\n",
            "src/.gitignore": "*.tmp.py\n!*.log\n",
            "tracked.log": "tracked before the rule\n",
        }
    )
    git(repo, "add", "-f", "tracked.log")
    git(repo, "commit", "-q", "-m", "track an ignored file")
    write_tree(
        repo,
        {
            "keep.log": "kept\n",
            "drop.log": "dropped\n",
            "build/out.py": "OUT = 1\n",
            "src/scratch.tmp.py": "S = 1\n",
            "src/debug.log": "re-included below src\n",
        },
    )
    report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    rows = set(store_rows(report))
    assert {"keep.log", "tracked.log", "src/app.py", "src/debug.log"} <= rows
    assert rows.isdisjoint({"drop.log", "build/out.py", "src/scratch.tmp.py"})


@pytest.mark.reliability("B1.3", cases=3)
@pytest.mark.parametrize("link", ["notes.txt", "config/app_settings.txt", "deep/er/dir/copy.cfg"])
def test_a_hard_link_to_a_sensitive_file_under_a_neutral_name_is_sensitive(
    make_repo: MakeRepo, cache_dir: Path, tmp_path: Path, link: str
) -> None:
    """A hard link is the same file under another name: it is denied as its sensitive
    name is, by discovery (anywhere in the tree) and by a lone read (``get``) beside it or at
    the root."""
    repo = make_repo({"src/app.py": f"{VISIBLE} = 1\n", ".env": f"TOKEN={ENV_CANARY}\n"})
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    os.link(repo / ".env", repo / link)
    with recording_opens() as opened:
        report = index_repository(repo, cache_dir=cache_dir, jobs=1)
    assert omitted_map(report).get(link) == "sensitive"
    assert link not in store_rows(report)
    assert os.path.realpath(repo / link) not in opened_realpaths(opened)
    surfaces = cache_surfaces(cache_dir, tmp_path / "scratch")
    assert leaks(surfaces, VISIBLE) and leaks(surfaces, ENV_CANARY) == []
    refused = read_file(repo, link, Limits())
    assert isinstance(refused, Omission) and refused.reason == "sensitive"
