"""Every pack passes the standalone ``scripts/verify_pack.py`` (SPEC §11), on the three
repositories of ``pack_repos``; and a pack with any one thing corrupted fails it: its text, its
digests, its lines, its size, the budget, the pack id, a path outside the repository, a source
edited after packing."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from packs import Doc, cli, pack_of, recomputed_pack_id, run_verify

VERIFY_CASES = [
    pytest.param("py_shop", "fix the refund webhook retry", 32_000, id="shop-default"),
    pytest.param("py_shop", "fix the refund webhook retry", 500, id="shop-fragments"),
    pytest.param("py_shop", "fix the refund webhook retry", 0, id="shop-empty"),
    pytest.param(
        "py_shop", "rotate GITHUB_TOKEN in app/integrations/signing.py", 2_000, id="shop-secrets"
    ),
    pytest.param("py_shop", "RefundService.refund double counts", 200_000, id="shop-large"),
    pytest.param("ts_pkg", "discount is applied twice at checkout", 32_000, id="ts-default"),
    pytest.param("ts_pkg", "export Cart and checkout from src/index.ts", 700, id="ts-no-eol"),
    pytest.param("go_svc", "Reserve returns out of stock after restock", 1_000, id="go-small"),
    pytest.param("go_svc", "restock notes in docs/notes.md", 32_000, id="go-crlf"),
]


@pytest.mark.parametrize(("name", "task", "budget"), VERIFY_CASES)
def test_verify_script_accepts_every_pack(
    repos: dict[str, Path], cache_dir: Path, tmp_path: Path, name: str, task: str, budget: int
) -> None:
    pack = pack_of(repos[name], task, cache_dir, budget)
    proc = run_verify(pack, repos[name], tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.strip().endswith(f"OK {len(pack['items'])} items verified")
    if budget >= 700:
        assert pack["items"], "a pack with room for excerpts should hold some"


def test_verify_script_accepts_the_cli_json_output(
    repos: dict[str, Path], cache_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repos["py_shop"]
    code, out, _ = cli(
        capsys, "pack", "fix the refund webhook retry", "--repo", str(repo), "--format", "json"
    )
    assert code == 0
    proc = run_verify(out, repo, tmp_path)
    assert proc.returncode == 0, proc.stdout


def _first_multiline(pack: Doc) -> Doc:
    return next(i for i in pack["items"] if i["end_line"] > i["start_line"])


def _flip_char(pack: Doc, repo: Path) -> None:
    item = _first_multiline(pack)
    item["text"] = ("Y" if item["text"][0] == "X" else "X") + item["text"][1:]


def _alter_excerpt_sha(pack: Doc, repo: Path) -> None:
    item = _first_multiline(pack)
    item["excerpt_sha256"] = hashlib.sha256(b"not these lines").hexdigest()


def _alter_source_sha(pack: Doc, repo: Path) -> None:
    item = _first_multiline(pack)
    item["source_sha256"] = hashlib.sha256(b"another file").hexdigest()


def _shift_start(pack: Doc, repo: Path) -> None:
    _first_multiline(pack)["start_line"] += 1


def _bytes_off_by_one(pack: Doc, repo: Path) -> None:
    _first_multiline(pack)["bytes"] += 1


def _used_bytes(pack: Doc, repo: Path) -> None:
    pack["budget"]["used_bytes"] -= 1


def _pack_id(pack: Doc, repo: Path) -> None:
    digest = pack["pack_id"][len("sha256:") :]
    pack["pack_id"] = "sha256:" + digest[::-1]


def _outside_path(pack: Doc, repo: Path) -> None:
    # the same bytes outside the repository: only the containment check can tell
    item = _first_multiline(pack)
    (repo.parent / "outside.py").write_bytes((repo / item["path"]).read_bytes())
    item["path"] = "../outside.py"


def _edit_source(pack: Doc, repo: Path) -> None:
    target = repo / _first_multiline(pack)["path"]
    target.write_bytes(target.read_bytes() + b"# edited after packing\n")


ID_MISMATCH = "pack_id does not match"
CORRUPTIONS = [
    pytest.param(_flip_char, False, "text or bytes differ", id="text-one-char"),
    pytest.param(_flip_char, True, "text or bytes differ", id="text-one-char-id-recomputed"),
    pytest.param(_alter_excerpt_sha, False, "excerpt_sha256 differs", id="excerpt-sha256"),
    pytest.param(_alter_source_sha, False, "source_sha256 differs", id="source-sha256"),
    pytest.param(_shift_start, False, "excerpt_sha256 differs", id="start-line-shifted"),
    pytest.param(_shift_start, True, "excerpt_sha256 differs", id="start-line-id-recomputed"),
    pytest.param(_bytes_off_by_one, False, "text or bytes differ", id="bytes-off-by-one"),
    pytest.param(_used_bytes, False, "used_bytes", id="used-bytes"),
    pytest.param(_pack_id, False, None, id="pack-id"),
    pytest.param(_outside_path, False, "not a file inside", id="path-outside"),
    pytest.param(_outside_path, True, "not a file inside", id="path-outside-id-recomputed"),
    pytest.param(_edit_source, True, "source_sha256 differs", id="source-edited-after-packing"),
]


@pytest.mark.parametrize(("corrupt", "recompute_id", "expected"), CORRUPTIONS)
def test_verify_script_rejects_a_corrupted_pack(
    py_shop: Path,
    cache_dir: Path,
    tmp_path: Path,
    corrupt: Callable[[Doc, Path], None],
    recompute_id: bool,
    expected: str | None,
) -> None:
    pack = pack_of(py_shop, "fix the refund webhook retry", cache_dir)
    assert run_verify(pack, py_shop, tmp_path / "before").returncode == 0
    corrupt(pack, py_shop)
    if recompute_id:
        pack["pack_id"] = recomputed_pack_id(pack)
    proc = run_verify(pack, py_shop, tmp_path / "after")
    assert proc.returncode == 1, proc.stdout
    assert proc.stdout.strip().endswith("FAIL")
    # a field changed without recomputing the id breaks the id too; a recomputed id holds
    id_changed = corrupt is not _edit_source and not recompute_id
    assert (ID_MISMATCH in proc.stdout) is id_changed, proc.stdout
    if expected is not None:
        assert expected in proc.stdout, proc.stdout
