"""``excerpt get``: exact bytes for a fresh handle, a refusal for anything else.

SPEC §3.3 (handles and retrieval) and §11 (``get --json``); RELIABILITY B4 rows 29-35 and
B1 rows 1-4 and 11. Every refusal test also asserts what was *never* done: no file outside
the repository root and no sensitive file was opened, and no canary byte reached the output.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from excerpt.cli import main
from excerpt.deliver import prepare, remember_pack
from excerpt.pack import Pack, PackRequest
from excerpt.pack.build import select
from excerpt.pack.handles import Handle, format_handle, parse_handle
from excerpt.pack.retrieve import Retrieved, refusal_reason, retrieve
from excerpt.pipeline import get_excerpts
from open_audit import recording_opens

pytestmark = pytest.mark.timeout(30)

MakeRepo = Callable[..., Path]

STATUSES = {"fresh", "stale", "missing", "refused"}
GET_KEYS = {
    "handle",
    "status",
    "path",
    "start_line",
    "end_line",
    "text",
    "excerpt_sha256",
    "moved_to",
}
CANARY = "CANARY-7f3a9c2e-never-served"
ZERO_DIGEST = "0" * 16


def absolute_opens(opened: list[str]) -> set[Path]:
    # bare relative names come from dir_fd opens, already recorded absolutely by the proxy
    return {Path(os.path.realpath(p)) for p in opened if os.path.isabs(p)}


def opened_outside(opened: list[str], root: Path) -> list[Path]:
    return sorted(p for p in absolute_opens(opened) if p != root and not p.is_relative_to(root))


# -- helpers -------------------------------------------------------------------------------------

REFUNDS = (
    '"""Refund handling."""\n'
    "\n"
    "import logging\n"
    "\n"
    "log = logging.getLogger(__name__)\n"
    "\n"
    "\n"
    "def compute_fee(amount):\n"
    "    return amount // 100\n"
    "\n"
    "\n"
    "def refund_payment(payment, amount):\n"
    "    if amount > payment.total:\n"
    '        raise ValueError("too much")\n'
    "    fee = compute_fee(amount)\n"
    "    return amount - fee\n"
    "\n"
    "\n"
    "def unrelated():\n"
    "    return None\n"
)
REFUNDS_PATH = "billing/refunds.py"
TASK = "refund_payment raises ValueError on large amounts"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest_of(path: Path) -> str:
    return sha256(path.read_bytes())[:16]


def handle_for(path: str, start: int, end: int, data: bytes) -> str:
    return format_handle(path, start, end, sha256(data))


def get_json(
    capsys: pytest.CaptureFixture[str], repo: Path, *handles: str
) -> tuple[int, list[dict[str, Any]], str]:
    """Run ``excerpt get --json``; return the exit code, the parsed list and all output."""
    code = main(["get", "--repo", str(repo), "--json", "--", *handles])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, json.loads(captured.out), captured.out + captured.err


def _selected(request: PackRequest) -> Pack:
    """The selection beneath the rendering (excerpt text within the budget, which a budget
    this small needs), its handles remembered as a served pack's are."""
    prep = prepare(request)
    pack = select(prep, request.task, request.budget)
    remember_pack(prep, pack)
    return pack


@pytest.fixture
def packed(make_repo: MakeRepo, cache_dir: Path) -> tuple[Path, dict[str, Any]]:
    """A repository and the pack item holding ``refund_payment`` (served, so remembered)."""
    repo = make_repo({REFUNDS_PATH: REFUNDS, "README.md": "# Billing\n"})
    # the file takes more than 0.7 of the budget: it comes as excerpts, not whole
    budget = len(REFUNDS.encode()) * 5 // 4
    pack = _selected(PackRequest(repo=repo, task=TASK, budget=budget, cache_dir=cache_dir))
    items = [
        it
        for it in pack.to_dict()["items"]
        if it["path"] == REFUNDS_PATH and "def refund_payment" in it["text"]
    ]
    assert len(items) == 1, pack.to_dict()["items"]
    # preconditions of the stale tests: the excerpt holds the raise, not ``unrelated``
    assert '"too much"' in items[0]["text"]
    assert "def unrelated" not in items[0]["text"]
    return repo, dict(items[0])


# -- fresh ---------------------------------------------------------------------------------------


@pytest.mark.reliability("B4.29")
def test_every_handle_a_pack_hands_out_returns_exactly_its_text_and_hash(
    make_repo: MakeRepo, cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({REFUNDS_PATH: REFUNDS, "README.md": "# Billing\n"})
    # the file takes more than 0.7 of the budget: it comes as excerpts, not whole
    budget = len(REFUNDS.encode()) * 5 // 4
    pack = _selected(PackRequest(repo=repo, task=TASK, budget=budget, cache_dir=cache_dir))
    items = pack.to_dict()["items"]
    assert any("def refund_payment" in it["text"] for it in items)

    got = get_excerpts(repo, [it["handle"] for it in items], cache_dir=cache_dir)

    assert [g.status for g in got] == ["fresh"] * len(items)
    for item, res in zip(items, got, strict=True):
        assert res.text == item["text"]
        assert res.excerpt_sha256 == item["excerpt_sha256"] == sha256(item["text"].encode())
        assert (res.path, res.start_line, res.end_line) == (
            item["path"],
            item["start_line"],
            item["end_line"],
        )
        assert res.moved_to is None
    code, doc, _ = get_json(capsys, repo, *[it["handle"] for it in items])
    assert code == 0
    assert [d["text"] for d in doc] == [it["text"] for it in items]


@pytest.mark.reliability("B4.34", cases=3)
def test_a_hand_made_handle_for_another_range_of_the_same_verified_file_is_served(
    packed: tuple[Path, dict[str, Any]], cache_dir: Path
) -> None:
    """RELIABILITY B4 #34, by design: the 16 hex digits of a handle bind the *whole file's*
    SHA-256, not the (path, range) pair. A handle is a reference, not a permission (SPEC
    §3.3), so once the file is verified any line range of it may be asked for, including a
    range no pack ever handed out, a narrower one, or the whole file. Range tamper-evidence
    would need the digest to cover (path, range, file hash): a SPEC change, not a bug."""
    repo, item = packed
    data = (repo / REFUNDS_PATH).read_bytes()
    lines = data.splitlines(keepends=True)
    widened = format_handle(REFUNDS_PATH, 1, len(lines), item["source_sha256"])
    other = format_handle(REFUNDS_PATH, 19, 20, item["source_sha256"])
    one_line = format_handle(REFUNDS_PATH, 3, 3, item["source_sha256"])

    got = get_excerpts(repo, [widened, other, one_line], cache_dir=cache_dir)

    assert [g.status for g in got] == ["fresh", "fresh", "fresh"]
    assert got[0].text == REFUNDS
    assert got[1].text == "def unrelated():\n    return None\n"
    assert got[2].text == "import logging\n"
    assert [g.excerpt_sha256 for g in got] == [
        sha256(data),
        sha256(b"".join(lines[18:20])),
        sha256(b"import logging\n"),
    ]


LINE_ENDINGS = [
    pytest.param(b"a = 1\r\nb = 2\r\nc = 3\r\n", 2, 3, b"b = 2\r\nc = 3\r\n", id="crlf"),
    pytest.param(b"a = 1\r\nb = 2\r\n", 1, 1, b"a = 1\r\n", id="crlf-first-line"),
    pytest.param(b"a = 1\nb = 2", 2, 2, b"b = 2", id="no-trailing-newline-last-line"),
    pytest.param(b"a = 1\nb = 2", 1, 2, b"a = 1\nb = 2", id="no-trailing-newline-whole"),
    pytest.param(b"a = 1\rb = 2\nc = 3\n", 1, 1, b"a = 1\rb = 2\n", id="lone-cr-inside-line"),
    pytest.param(b"a = 1\rb = 2\nc = 3\n", 2, 2, b"c = 3\n", id="lone-cr-next-line"),
    pytest.param(b"x\ny\r", 2, 2, b"y\r", id="lone-cr-at-eof"),
    pytest.param(b"a\r\nb\rc\nd", 1, 3, b"a\r\nb\rc\nd", id="mixed-endings"),
    pytest.param(b"only\n", 1, 1, b"only\n", id="single-line"),
    pytest.param(b"\n\n\n", 2, 3, b"\n\n", id="only-newlines"),
]


@pytest.mark.parametrize(("content", "start", "end", "expected"), LINE_ENDINGS)
@pytest.mark.reliability(
    "B2.13",
    ids=(
        "no-trailing-newline-last-line",
        "no-trailing-newline-whole",
        "single-line",
        "only-newlines",
    ),
)
@pytest.mark.reliability(
    "B2.14",
    ids=(
        "crlf",
        "crlf-first-line",
        "lone-cr-inside-line",
        "lone-cr-next-line",
        "lone-cr-at-eof",
        "mixed-endings",
    ),
)
def test_fresh_text_is_the_exact_bytes_with_every_line_terminator_kept(
    make_repo: MakeRepo,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    content: bytes,
    start: int,
    end: int,
    expected: bytes,
) -> None:
    repo = make_repo({"f.py": content}, use_git=False)
    handle = handle_for("f.py", start, end, content)

    (res,) = get_excerpts(repo, [handle], cache_dir=cache_dir)

    assert res.status == "fresh"
    assert res.text is not None
    assert res.text.encode("utf-8") == expected
    assert res.excerpt_sha256 == sha256(expected)
    code, doc, _ = get_json(capsys, repo, handle)  # JSON keeps \r as \r
    assert code == 0
    assert doc[0]["text"].encode("utf-8") == expected


@pytest.mark.reliability("B2.14", cases=2)
def test_a_lone_cr_does_not_end_a_line_so_the_range_past_it_is_beyond_eof(
    make_repo: MakeRepo, cache_dir: Path
) -> None:
    content = b"a = 1\rb = 2\n"  # one line, not two
    repo = make_repo({"f.py": content}, use_git=False)

    handles = [handle_for("f.py", 1, 1, content), handle_for("f.py", 2, 2, content)]
    one, two = get_excerpts(repo, handles, cache_dir=cache_dir)

    assert (one.status, one.text) == ("fresh", "a = 1\rb = 2\n")
    assert (two.status, two.text) == ("refused", None)


NAMES_WITH_HANDLE_SYNTAX = [
    pytest.param("we ird/#L5@x.py", id="hash-L5-and-at"),
    pytest.param("a#L1-L2@0123456789abcdef.py", id="whole-handle-in-name"),
    pytest.param("-rf.py", id="leading-dash"),
    pytest.param("with space.py", id="space"),
    pytest.param("new\nline.py", id="newline"),
    pytest.param("ünïcødé/数据.py", id="unicode"),
]


@pytest.mark.parametrize("name", NAMES_WITH_HANDLE_SYNTAX)
@pytest.mark.reliability("B1.11")
def test_a_file_whose_name_looks_like_handle_syntax_is_served_fresh(
    make_repo: MakeRepo, cache_dir: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    content = b"x = 1\ny = 2\n"
    repo = make_repo({name: content}, use_git=False)
    handle = handle_for(name, 2, 2, content)

    code, doc, _ = get_json(capsys, repo, handle)

    assert code == 0
    assert doc[0]["status"] == "fresh"
    assert (doc[0]["path"], doc[0]["text"]) == (name, "y = 2\n")


# -- stale and missing ---------------------------------------------------------------------------


@pytest.mark.reliability("B4.30")
def test_a_line_changed_elsewhere_makes_the_handle_stale_with_no_text(
    packed: tuple[Path, dict[str, Any]], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, item = packed
    new = REFUNDS.replace("    return None\n", "    return 0\n").encode()
    (repo / REFUNDS_PATH).write_bytes(new)

    code, doc, out = get_json(capsys, repo, item["handle"])

    assert code == 1
    (res,) = doc
    assert res["status"] == "stale"
    assert res["text"] is None and res["excerpt_sha256"] is None
    assert "raise ValueError" not in out  # never old (or new) text presented as current
    # the excerpt's own bytes did not move: the hint is the same range at the new digest
    start, end = item["start_line"], item["end_line"]
    assert res["moved_to"] == handle_for(REFUNDS_PATH, start, end, new)


@pytest.mark.reliability("B4.30")
def test_lines_inserted_above_give_moved_to_the_new_range_which_is_fresh(
    packed: tuple[Path, dict[str, Any]], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, item = packed
    head, rest = REFUNDS.split("\n", 1)
    new = f"{head}\n# one\n# two\n# three\n{rest}".encode()
    (repo / REFUNDS_PATH).write_bytes(new)

    code, doc, _ = get_json(capsys, repo, item["handle"])

    assert code == 1
    assert doc[0]["status"] == "stale"
    assert doc[0]["text"] is None
    moved = doc[0]["moved_to"]
    assert moved == handle_for(REFUNDS_PATH, item["start_line"] + 3, item["end_line"] + 3, new)
    (again,) = get_excerpts(repo, [moved], cache_dir=cache_dir)
    assert again.status == "fresh"
    assert (again.text, again.excerpt_sha256) == (item["text"], item["excerpt_sha256"])


@pytest.mark.reliability("B4.30")
def test_when_the_excerpt_itself_changed_there_is_no_moved_to(
    packed: tuple[Path, dict[str, Any]], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, item = packed
    edited = REFUNDS.replace('"too much"', '"too large"')
    assert edited != REFUNDS
    (repo / REFUNDS_PATH).write_text("# moved down\n" + edited, encoding="utf-8")

    code, doc, _ = get_json(capsys, repo, item["handle"])

    assert code == 1
    assert (doc[0]["status"], doc[0]["text"], doc[0]["moved_to"]) == ("stale", None, None)


@pytest.mark.parametrize("position", [0, 7, 15], ids=["first-digit", "middle-digit", "last-digit"])
@pytest.mark.reliability("B4.31")
def test_a_digest_altered_by_one_hex_digit_is_stale(
    packed: tuple[Path, dict[str, Any]],
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    position: int,
) -> None:
    repo, item = packed
    handle = parse_handle(item["handle"])
    digits = list(handle.digest)
    digits[position] = format((int(digits[position], 16) + 1) % 16, "x")
    altered = str(Handle(handle.path, handle.start_line, handle.end_line, "".join(digits)))
    assert altered != item["handle"]

    code, doc, _ = get_json(capsys, repo, altered)

    assert code == 1
    assert (doc[0]["status"], doc[0]["text"], doc[0]["excerpt_sha256"]) == ("stale", None, None)
    assert doc[0]["moved_to"] is None  # no pack handed this handle out


@pytest.mark.reliability("B4.30", cases=2)
def test_a_stale_handle_the_cache_never_saw_has_no_moved_to_even_if_its_text_survives(
    packed: tuple[Path, dict[str, Any]], cache_dir: Path
) -> None:
    repo, item = packed
    old = (repo / REFUNDS_PATH).read_bytes()
    # a strict sub-range of the served excerpt: its text survives the edit, but no pack
    # handed this handle out, so the cache cannot vouch for where it went
    never_served = handle_for(REFUNDS_PATH, item["start_line"] + 1, item["end_line"], old)
    (repo / REFUNDS_PATH).write_bytes(b"# pushed down\n" + old)

    served, unseen = get_excerpts(repo, [item["handle"], never_served], cache_dir=cache_dir)

    assert served.status == "stale" and served.moved_to is not None  # the cache knew this one
    assert (unseen.status, unseen.text, unseen.moved_to) == ("stale", None, None)


@pytest.mark.reliability("B4.30")
def test_a_deleted_file_is_missing_with_exit_1(
    packed: tuple[Path, dict[str, Any]], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, item = packed
    (repo / REFUNDS_PATH).unlink()

    code, doc, _ = get_json(capsys, repo, item["handle"])

    assert code == 1
    assert doc[0]["status"] == "missing"
    assert (doc[0]["path"], doc[0]["text"], doc[0]["moved_to"]) == (REFUNDS_PATH, None, None)


# -- refused before any open ---------------------------------------------------------------------


def build_hostile(base: Path) -> Path:
    """``base/root`` (the repository) with bait: files outside it, sensitive files inside it,
    names that only a missing check would serve, and symlinks leading out.

    Every bait file holds ``CANARY``; ordinary files do not.
    """
    root = base / "root"
    bait = f"token = '{CANARY}'\n"
    files: dict[str, str] = {
        "a.py": "def f():\n    return 1\n",
        "pkg/b.py": "x = 2\n",
        ".env": f"SECRET={CANARY}\n",
        "config/.env.production": f"SECRET={CANARY}\n",
        "app/.ENV": f"SECRET={CANARY}\n",
        "C:\\x.py": bait,  # on POSIX a plain file name: only the check refuses it
        "\\\\server\\share\\x.py": bait,
        "%2e%2e/x.py": bait,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (base / "x.py").write_text(bait, encoding="utf-8")
    (base / "outside.txt").write_text(bait, encoding="utf-8")
    (base / "root_evil").mkdir()
    (base / "root_evil" / "secret.txt").write_text(bait, encoding="utf-8")
    links = {
        "link_out.py": base / "outside.txt",  # file symlink out, absolute target
        "evil": Path("../root_evil"),  # sibling whose name has the root's name as prefix
        "evil_file.txt": Path("../root_evil/secret.txt"),
        "up": Path(".."),  # intermediate directory symlink leaving the root
        "slash": Path("/"),  # ``a/b`` where ``a`` → ``/``
        "docs/cfg": Path("../.env"),  # inside the root, to a sensitive file
        "loop": Path("."),
        "dangling.py": Path("nowhere.py"),
    }
    for rel, target in links.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
    return root.resolve()


@pytest.fixture
def hostile(tmp_path: Path, cache_dir: Path) -> Path:
    return build_hostile(tmp_path)


# (handle path, bait file relative to the root's parent, refused by the path check alone)
REFUSED_PATHS = [
    pytest.param("../x.py", "x.py", True, id="dotdot"),
    pytest.param("pkg/../../x.py", "x.py", True, id="dotdot-after-a-dir"),
    pytest.param("/etc/passwd", None, True, id="absolute"),
    pytest.param("C:\\x.py", "root/C:\\x.py", True, id="drive-letter"),
    pytest.param("\\\\server\\share\\x.py", "root/\\\\server\\share\\x.py", True, id="unc"),
    pytest.param("%2e%2e/x.py", "root/%2e%2e/x.py", True, id="percent-encoded-dotdot"),
    pytest.param("a.py\x00.txt", "root/a.py", True, id="nul-byte"),
    pytest.param(".env", "root/.env", True, id="dotenv"),
    pytest.param("config/.env.production", "root/config/.env.production", True, id="nested-env"),
    pytest.param("app/.ENV", "root/app/.ENV", True, id="upper-case-env"),
    pytest.param("link_out.py", "outside.txt", False, id="file-symlink-out"),
    pytest.param("evil/secret.txt", "root_evil/secret.txt", False, id="sibling-prefix-dir"),
    pytest.param("evil_file.txt", "root_evil/secret.txt", False, id="sibling-prefix-file"),
    pytest.param("up/outside.txt", "outside.txt", False, id="intermediate-dir-symlink"),
    pytest.param("up/root_evil/secret.txt", "root_evil/secret.txt", False, id="up-then-sibling"),
    pytest.param("slash/ABS_OUTSIDE", "outside.txt", False, id="intermediate-symlink-to-slash"),
    pytest.param("docs/cfg", "root/.env", False, id="symlink-to-sensitive-inside"),
]


@pytest.mark.parametrize(("rel", "bait", "by_syntax"), REFUSED_PATHS)
@pytest.mark.reliability("B4.32")
@pytest.mark.reliability(
    "B1.1", ids=("file-symlink-out", "sibling-prefix-dir", "sibling-prefix-file")
)
@pytest.mark.reliability(
    "B1.2", ids=("intermediate-dir-symlink", "up-then-sibling", "intermediate-symlink-to-slash")
)
@pytest.mark.reliability("B1.3", ids=("symlink-to-sensitive-inside",))
def test_a_path_leaving_the_root_or_naming_a_secret_is_refused_without_opening_it(
    hostile: Path,
    capsys: pytest.CaptureFixture[str],
    rel: str,
    bait: str | None,
    by_syntax: bool,
) -> None:
    base = hostile.parent
    rel = rel.replace("ABS_OUTSIDE", str(base / "outside.txt").lstrip("/"))
    bait_path = (base / bait).resolve() if bait is not None else None
    # the handle carries the bait's real digest: if it were opened, it would come back fresh
    digest = digest_of(bait_path) if bait_path is not None else ZERO_DIGEST
    handle = f"{rel}#L1-L1@{digest}"
    # the command's modules are imported once before the audit: a test that runs first in its
    # worker would otherwise see the interpreter read their bytecode
    main(["get", "--repo", str(hostile), "--json", "--", f"warm.txt#L1-L1@{ZERO_DIGEST}"])
    capsys.readouterr()

    with recording_opens() as opened:
        code = main(["get", "--repo", str(hostile), "--json", "--", handle])
    captured = capsys.readouterr()

    assert code == 2
    (res,) = json.loads(captured.out)
    assert (res["status"], res["text"], res["excerpt_sha256"]) == ("refused", None, None)
    assert CANARY not in captured.out + captured.err
    assert "Traceback" not in captured.err
    assert opened_outside(opened, hostile) == []
    if bait_path is not None:
        assert bait_path not in absolute_opens(opened)
    if by_syntax:  # refused from the string alone: nothing at all was opened
        assert opened == []
        assert refusal_reason(rel) is not None


@pytest.mark.reliability("B4.32")
def test_a_sensitive_file_is_refused_even_when_its_handle_is_exactly_right(
    hostile: Path,
) -> None:
    """The handle is not a permission: a correct digest of ``.env`` does not unlock it."""
    handle = f".env#L1-L1@{digest_of(hostile / '.env')}"

    with recording_opens() as opened:
        res = retrieve(hostile, handle, {})

    assert res.status == "refused"
    assert res.text is None
    assert opened == []


# -- malformed -----------------------------------------------------------------------------------

A_DIGEST = sha256(b"x = 1\ny = 2\n")[:16]
MALFORMED = [
    pytest.param(f"a.py#L0-L1@{A_DIGEST}", id="L0"),
    pytest.param(f"a.py#L0-L0@{A_DIGEST}", id="L0-L0"),
    pytest.param(f"a.py#L2-L1@{A_DIGEST}", id="end-before-start"),
    pytest.param(f"a.py#L99999999999999999999-L99999999999999999999@{A_DIGEST}", id="huge"),
    pytest.param(f"a.py#L1-L99999999999999999999@{A_DIGEST}", id="huge-end"),
    pytest.param(f"a.py#L-1-L2@{A_DIGEST}", id="negative-start"),
    pytest.param(f"a.py#L1-L-2@{A_DIGEST}", id="negative-end"),
    pytest.param(f"a.py#1-2@{A_DIGEST}", id="missing-L"),
    pytest.param(f"a.py#L1-2@{A_DIGEST}", id="missing-second-L"),
    pytest.param("a.py#L1-L2", id="missing-at-and-digest"),
    pytest.param(f"a.py#L1-L2{A_DIGEST}", id="missing-at"),
    pytest.param(f"a.py#L1-L2@{A_DIGEST[:15]}", id="15-hex"),
    pytest.param(f"a.py#L1-L2@{A_DIGEST}0", id="17-hex"),
    pytest.param(f"a.py#L1-L2@{A_DIGEST.upper()}", id="upper-case-hex"),
    pytest.param(f"a.py#L1-L2@{'g' * 16}", id="non-hex"),
    pytest.param(f"#L1-L2@{A_DIGEST}", id="empty-path"),
    pytest.param(f"a.py#L1-L2@{A_DIGEST} ", id="trailing-space"),
    pytest.param("", id="empty-string"),
    pytest.param("a.py", id="bare-path"),
    pytest.param("x" * 100_000, id="100kb-junk"),
    pytest.param("a" * 100_000 + f"#L1-L1@{A_DIGEST}", id="100kb-path"),
    pytest.param(f"a.py#L3-L3@{A_DIGEST}", id="beyond-eof"),
    pytest.param(f"a.py#L1-L3@{A_DIGEST}", id="end-beyond-eof"),
    pytest.param(f"a.py#L999999999-L999999999@{A_DIGEST}", id="far-beyond-eof"),
]


@pytest.mark.parametrize("handle", MALFORMED)
@pytest.mark.reliability("B4.33")
def test_a_malformed_handle_or_range_is_refused_with_exit_2_and_no_traceback(
    make_repo: MakeRepo, cache_dir: Path, capsys: pytest.CaptureFixture[str], handle: str
) -> None:
    repo = make_repo({"a.py": "x = 1\ny = 2\n"}, use_git=False)
    # the well-formed neighbour of every case is fresh: only the defect refuses it
    (good,) = get_excerpts(repo, [f"a.py#L1-L2@{A_DIGEST}"], cache_dir=cache_dir)
    assert good.status == "fresh"

    code, doc, out = get_json(capsys, repo, handle)

    assert code == 2
    (res,) = doc
    assert res["handle"] == handle
    assert (res["status"], res["text"], res["excerpt_sha256"]) == ("refused", None, None)
    assert "x = 1" not in out


# -- properties ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_hostile(tmp_path_factory.mktemp("property"))


PATH_PIECES = [
    "..",
    ".",
    "",
    "a.py",
    "pkg",
    "b.py",
    "evil",
    "secret.txt",
    "evil_file.txt",
    "up",
    "root",
    "root_evil",
    "outside.txt",
    "slash",
    "etc",
    "passwd",
    "link_out.py",
    "docs",
    "cfg",
    ".env",
    "config",
    ".env.production",
    "loop",
    "dangling.py",
    "%2e%2e",
    "x.py",
    "C:\\x.py",
    "\\",
]
HEX = "0123456789abcdef"


def check_retrieval(root: Path, raw: str) -> Retrieved:
    """``retrieve`` one handle while recording opens; assert the never-do invariants."""
    with recording_opens() as opened:
        res = retrieve(root, raw, {})
    assert res.status in STATUSES
    assert CANARY not in (res.text or "")
    assert opened_outside(opened, root) == []
    sensitive = {root / ".env", root / "config/.env.production", root / "app/.ENV"}
    assert not sensitive & absolute_opens(opened)
    if res.status != "fresh":
        assert res.text is None
    return res


@settings(max_examples=500, derandomize=True, deadline=None)
@given(raw=st.text())
@pytest.mark.reliability("B4.35", cases=500)
def test_any_text_as_a_handle_never_raises_and_never_opens_outside_the_root(
    hostile_root: Path, raw: str
) -> None:
    # st.text() draws no lone surrogates; those are the known bug tested at the end
    check_retrieval(hostile_root, raw)


WHOLE_PATHS = [
    "a.py",
    "pkg/b.py",
    "pkg",
    "link_out.py",
    "evil",
    "evil/secret.txt",
    "evil_file.txt",
    "up/outside.txt",
    "up/root/a.py",  # leaves and re-enters the root: resolves inside, may be served
    "up/root_evil/secret.txt",
    "docs/cfg",
    ".env",
    "config/.env.production",
    "loop",
    "loop/a.py",
    "loop/loop/pkg/b.py",
    "loop/.env",
    "dangling.py",
]


@st.composite
def built_handles(draw: st.DrawFn, digests: list[str]) -> str:
    path = draw(
        st.one_of(
            st.text(),
            st.sampled_from(WHOLE_PATHS),
            st.lists(st.sampled_from(PATH_PIECES), min_size=1, max_size=6).map("/".join),
            st.tuples(st.sampled_from(WHOLE_PATHS + PATH_PIECES), st.text()).map("/".join),
        )
    )
    wild = st.integers(min_value=-2, max_value=10**12)
    start, end = draw(
        st.one_of(
            st.tuples(st.integers(1, 3), st.integers(0, 2)).map(lambda t: (t[0], t[0] + t[1])),
            st.tuples(wild, wild),
        )
    )
    digest = draw(
        st.one_of(
            st.sampled_from(digests),
            st.text(alphabet=HEX, min_size=16, max_size=16),
            st.text(alphabet=HEX, max_size=20),
        )
    )
    return f"{path}#L{start}-L{end}@{digest}"


@settings(max_examples=500, derandomize=True, deadline=None)
@given(data=st.data())
@pytest.mark.reliability("B4.35", cases=500)
def test_any_built_handle_never_raises_and_never_opens_outside_the_root(
    hostile_root: Path, data: st.DataObject
) -> None:
    base = hostile_root.parent
    # real digests, of the bait too, so that a wrongly followed path would come back fresh
    files = ["root/a.py", "root/pkg/b.py", "root/.env", "outside.txt", "root_evil/secret.txt"]
    digests = [digest_of(base / f) for f in files]
    check_retrieval(hostile_root, data.draw(built_handles(digests)))


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    path=st.one_of(
        st.text(min_size=1, max_size=200),
        st.tuples(
            st.text(max_size=20),
            st.sampled_from(["#L5", "@", " ", "\n", "#L1-L2@0123456789abcdef", "ü数", "\r\n"]),
            st.text(max_size=20),
        ).map("".join),
    ),
    start=st.integers(min_value=1, max_value=999_999_999),
    extra=st.integers(min_value=0, max_value=999_999_999),
    sha=st.text(alphabet=HEX, min_size=64, max_size=64),
)
@pytest.mark.reliability("B1.11", cases=200)
def test_format_then_parse_gives_back_every_part_of_the_handle(
    path: str, start: int, extra: int, sha: str
) -> None:
    end = min(start + extra, 999_999_999)

    parsed = parse_handle(format_handle(path, start, end, sha))

    assert parsed == Handle(path, start, end, sha[:16])


# -- output shape and exit codes -----------------------------------------------------------------


def test_get_json_is_a_list_of_the_contract_keys_in_handle_order(
    packed: tuple[Path, dict[str, Any]], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, item = packed
    (repo / "gone.py").write_text("x = 1\n", encoding="utf-8")
    gone = handle_for("gone.py", 1, 1, b"x = 1\n")
    (repo / "gone.py").unlink()
    readme = (repo / "README.md").read_bytes()
    stale = handle_for("README.md", 1, 1, readme + b"old\n")
    handles = [item["handle"], stale, gone, f"../x.py#L1-L1@{ZERO_DIGEST}"]

    code, doc, _ = get_json(capsys, repo, *handles)

    assert code == 2
    assert isinstance(doc, list)
    assert [d["handle"] for d in doc] == handles
    assert [d["status"] for d in doc] == ["fresh", "stale", "missing", "refused"]
    for d in doc:
        assert GET_KEYS <= d.keys() <= GET_KEYS | {"error"}
    fresh = doc[0]
    assert fresh == {
        "handle": item["handle"],
        "status": "fresh",
        "path": REFUNDS_PATH,
        "start_line": item["start_line"],
        "end_line": item["end_line"],
        "text": item["text"],
        "excerpt_sha256": item["excerpt_sha256"],
        "moved_to": None,
    }
    for d in doc[1:]:
        assert (d["text"], d["excerpt_sha256"], d["start_line"], d["end_line"]) == (
            None,
            None,
            None,
            None,
        )


EXIT_CODES = [
    pytest.param(["fresh"], 0, id="all-fresh"),
    pytest.param(["fresh", "fresh"], 0, id="two-fresh"),
    pytest.param(["fresh", "stale"], 1, id="one-stale"),
    pytest.param(["missing"], 1, id="missing"),
    pytest.param(["stale", "missing"], 1, id="stale-and-missing"),
    pytest.param(["fresh", "refused"], 2, id="one-refused"),
    pytest.param(["stale", "malformed"], 2, id="stale-and-malformed"),
    pytest.param(["missing", "refused", "fresh"], 2, id="refused-wins"),
]


@pytest.mark.parametrize(("kinds", "expected"), EXIT_CODES)
def test_the_exit_code_is_the_worst_status(
    make_repo: MakeRepo,
    cache_dir: Path,
    capsys: pytest.CaptureFixture[str],
    kinds: list[str],
    expected: int,
) -> None:
    content = b"x = 1\n"
    repo = make_repo({"a.py": content}, use_git=False)
    by_kind = {
        "fresh": handle_for("a.py", 1, 1, content),
        "stale": handle_for("a.py", 1, 1, b"x = 0\n"),
        "missing": handle_for("nope.py", 1, 1, content),
        "refused": handle_for(".env", 1, 1, content),
        "malformed": "a.py#L1",
    }

    code, doc, _ = get_json(capsys, repo, *[by_kind[k] for k in kinds])

    assert code == expected
    assert [d["status"] for d in doc] == ["refused" if k == "malformed" else k for k in kinds]


def test_markdown_output_holds_the_fresh_text_inside_a_fence(
    packed: tuple[Path, dict[str, Any]], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, item = packed

    code = main(["get", "--repo", str(repo), item["handle"]])
    out = capsys.readouterr().out

    assert code == 0
    assert f"```python\n{item['text']}```\n" in out
    assert item["handle"] in out


@pytest.mark.reliability("B4.30")
def test_markdown_output_of_a_stale_handle_holds_no_source_text(
    packed: tuple[Path, dict[str, Any]], cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, item = packed
    (repo / REFUNDS_PATH).write_text("# new first line\n" + REFUNDS, encoding="utf-8")

    code = main(["get", "--repo", str(repo), item["handle"]])
    out = capsys.readouterr().out

    assert code == 1
    assert "stale" in out
    assert "```" not in out
    assert "payment.total" not in out


# -- known bugs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("\ud800.py", id="high-surrogate"),
        pytest.param("pkg/\udfff.py", id="low-surrogate-in-subdir"),
    ],
)
@pytest.mark.reliability("B4.35")
def test_retrieve_answers_a_path_holding_a_lone_surrogate(hostile: Path, path: str) -> None:
    check_retrieval(hostile, f"{path}#L1-L1@{ZERO_DIGEST}")


@pytest.mark.reliability("B1.11")
def test_get_after_a_pack_answers_a_handle_holding_a_non_utf8_byte(
    packed: tuple[Path, dict[str, Any]], cache_dir: Path
) -> None:
    repo, _item = packed
    argv: list[str | bytes] = [sys.executable, "-m", "excerpt", "get", "--repo", str(repo)]
    argv += ["--json", "--", b"\xff.py#L1-L1@" + ZERO_DIGEST.encode()]
    proc = subprocess.run(
        argv,
        capture_output=True,
        env={**os.environ, "EXCERPT_CACHE_DIR": str(cache_dir)},
        check=False,
        timeout=60,
    )
    assert b"internal error" not in proc.stderr
    assert proc.returncode == 1  # missing, like the same handle without a cache
