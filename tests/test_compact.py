"""Compaction: the store keeps originals durably, verifies them, evicts the least recently
used with a tombstone; the compactors keep what matters and mark every elision with the call
that brings it back; the CLI reads, writes and fails as documented."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import signal
import stat
import sys
from pathlib import Path

import pytest

from excerpt.cli import main
from excerpt.compact import (
    OriginalCorrupt,
    OriginalEvicted,
    OriginalUnknown,
    Store,
    compact,
    expand,
)
from excerpt.compact.store import id_of
from excerpt.errors import CacheFault, UsageError

PIP_LIST = json.dumps(
    [{"name": f"package-{i:03d}", "version": f"{i % 7}.{i % 11}.{i}"} for i in range(80)]
    + [{"name": "broken", "version": "0.1", "error": "metadata unreadable"}]
    + [{"name": f"tail-{i}", "version": "1.0"} for i in range(5)]
).encode()
LOG = "\n".join(
    [f"2026-01-0{1 + i % 9}T10:00:{i % 60:02d}Z INFO GET /api/items/{i} 200 in {i}ms"
     for i in range(300)]
    + ["Traceback (most recent call last):", '  File "app/x.py", line 3, in <module>',
       "    run()", "ValueError: bad item 17"]
    + [f"step {i}: copied file_{i}.txt ({i * 37} bytes) to dist/ using the fast path"
       for i in range(60)]
    + ["warning: 2 files were skipped", "done"]
).encode() + b"\n"  # fmt: skip


def _diff(context: int = 30) -> bytes:
    old = [f"line {i} of the module, unchanged and fairly ordinary" for i in range(context)]
    hunk = [f" {x}" for x in old[:15]] + ["-    return total", "+    return total - refund"]
    hunk += [f" {x}" for x in old[15:]]
    head = ["diff --git a/app/refund.py b/app/refund.py", "index 1111111..2222222 100644",
            "--- a/app/refund.py", "+++ b/app/refund.py",
            f"@@ -1,{context + 1} +1,{context + 1} @@ def refund(order):"]  # fmt: skip
    return ("\n".join(head + hunk) + "\n").encode()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(root=tmp_path / "store")


def _object(store: Store, ident: str) -> Path:
    (path,) = (store.root / "objects" / ident[:2]).glob(ident + "*")
    return path


# -------------------------------------------------------------------------------- the store


def test_an_original_comes_back_byte_for_byte_and_is_named_by_its_hash(store: Store) -> None:
    data = b"\x00\xff\r\nany bytes\n"
    done = compact(data, store=store)
    assert expand(done.id, store=store).data == data
    import hashlib

    assert _object(store, done.id).name == hashlib.sha256(data).hexdigest()


def test_a_truncated_or_altered_original_is_corrupt_never_returned(store: Store) -> None:
    ident = compact(LOG, store=store, kind="log").id
    path = _object(store, ident)
    path.write_bytes(LOG[:-10])
    with pytest.raises(OriginalCorrupt, match="corrupt"):
        expand(ident, store=store)
    altered = bytearray(LOG)
    altered[100] ^= 1
    path.write_bytes(bytes(altered))
    with pytest.raises(OriginalCorrupt):
        expand(ident, store=store, lines="1-3")
    compact(LOG, store=store, kind="log")  # compacting the same payload again repairs it
    assert expand(ident, store=store).data == LOG


def test_past_the_cap_the_least_recently_used_is_evicted_with_a_tombstone(tmp_path: Path) -> None:
    store = Store(root=tmp_path / "store", cap=2500)
    a, b, c = (bytes([65 + k]) * 1000 for k in range(3))
    ia, ib = compact(a, store=store).id, compact(b, store=store).id
    expand(ia, store=store)  # a is used after b: b is now the least recently used
    ic = compact(c, store=store).id
    with pytest.raises(OriginalEvicted, match="evicted"):
        expand(ib, store=store)
    assert expand(ia, store=store).data == a and expand(ic, store=store).data == c
    assert (store.root / "tombstones" / ib).exists()
    assert compact(b, store=store).id == ib  # stored again, it is back
    assert expand(ib, store=store).data == b


def test_originals_and_tombstones_are_private_and_one_cut_off_at_its_rename_is_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(root=tmp_path / "store", cap=1500)
    old = os.umask(0o022)
    try:
        evicted = store.put(b"A" * 1000)
        kept = store.put(b"B" * 1000)  # past the cap: A is evicted, its tombstone written
    finally:
        os.umask(old)
    for path in (_object(store, kept), store.root / "tombstones" / evicted):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(CacheFault, match="No space left on device"):
        store.put(b"C" * 10)
    monkeypatch.undo()
    with pytest.raises(OriginalUnknown):
        store.get(id_of(b"C" * 10))
    assert not [p for p in store.root.rglob("*") if p.name.startswith(".")]  # no temporary


def test_an_id_never_stored_is_unknown_and_a_malformed_one_a_usage_error(store: Store) -> None:
    with pytest.raises(OriginalUnknown):
        expand("0123456789abcdef", store=store)
    with pytest.raises(UsageError):
        expand("../../etc/passwd", store=store)


def test_an_id_survives_the_process_being_killed_right_after_compact_returns(
    tmp_path: Path,
) -> None:
    """20 children each compact a payload, report its id and are SIGKILLed at once."""
    root = tmp_path / "store"
    compact(LOG[:2000], store=Store(root=tmp_path / "warm"), kind="log")  # counts known to all
    ids = {}
    for k in range(20):
        payload = LOG[:2000] + f"run {k}\n".encode()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compact, say the id, wait to be killed
            try:
                os.close(read)
                ident = compact(payload, store=Store(root=root), kind="log").id
                os.write(write, ident.encode())
                signal.pause()
            finally:
                os._exit(1)
        os.close(write)
        ident = os.read(read, 64).decode()
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(read)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        ids[ident] = payload
    assert len(ids) == 20
    fresh = Store(root=root)
    for ident, payload in ids.items():
        assert expand(ident, store=fresh).data == payload
    assert not list(root.rglob("*.tmp"))


# ------------------------------------------------------------------------------ compactors


def test_similar_json_items_become_one_marker_and_error_and_outlier_items_stay(
    store: Store,
) -> None:
    done = compact(PIP_LIST, store=store)
    assert done.kind == "json" and not done.unchanged
    assert '"error": "metadata unreadable"' in done.text
    assert '"package-000"' in done.text and '"tail-4"' in done.text  # first and last
    assert "package-040" not in done.text
    assert done.compacted_bytes < done.original_bytes / 3
    assert done.compacted_tokens < done.original_tokens
    (first, *_) = done.elisions
    assert first["what"] == "similar items" and first["count"] == 79
    part = expand(done.id, store=store, path=first["path"]).data
    assert json.loads(b"[" + part + b"]") == json.loads(PIP_LIST)[1:80]


def test_object_members_of_one_shape_fold_by_position(store: Store) -> None:
    deps: dict[str, dict[str, object]] = {
        f"dep{i}": {"version": f"1.{i}.0", "resolved": f"https://r/dep{i}.tgz"} for i in range(30)
    }
    deps["odd"] = {"version": "2.0.0", "invalid": True, "resolved": "x"}
    doc = json.dumps({"name": "app", "dependencies": deps}, indent=2).encode()
    done = compact(doc, store=store)
    assert '"invalid": true' in done.text and '"name": "app"' in done.text
    (e,) = done.elisions
    assert e["path"] == "$.dependencies[1:30]"
    got = expand(done.id, store=store, path=e["path"]).data
    assert got.startswith(b'"dep1": {') and got.endswith(b"}") and b'"odd"' not in got


def test_a_log_keeps_head_tail_and_every_error_line_and_folds_repeats(store: Store) -> None:
    done = compact(LOG, store=store)
    assert done.kind == "log" and not done.unchanged
    for line in LOG.decode().splitlines():
        if re.search(r"(?i)error|warning|traceback|File \"", line):
            assert line in done.text
    kept = done.text.splitlines()
    assert kept[0] == LOG.decode().splitlines()[0] and kept[-1] == "done"
    folded = [e for e in done.elisions if e["what"] == "similar lines"]
    assert folded and folded[0]["count"] >= 280  # the timestamps and ids differ, not the shape


def test_a_diff_keeps_headers_and_changed_lines_and_folds_context(store: Store) -> None:
    data = _diff()
    done = compact(data, store=store)
    assert done.kind == "diff" and not done.unchanged
    for line in data.decode().splitlines():
        if not line.startswith(" "):
            assert line in done.text.splitlines()
    assert all(e["what"] == "unchanged lines" for e in done.elisions)


def test_under_ten_percent_saved_the_payload_comes_back_unchanged(store: Store) -> None:
    data = b"one line\nanother line\n"
    done = compact(data, store=store)
    assert done.unchanged and done.text.encode() == data and done.elisions == ()
    assert expand(done.id, store=store).data == data


def test_every_marker_names_the_cli_call_that_returns_exactly_what_it_replaced(
    store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfdbinary: pytest.CaptureFixture[bytes],
) -> None:
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "cache"))
    cli_store = Store.in_cache(tmp_path / "cache")
    for data in (PIP_LIST, LOG, _diff()):
        done = compact(data, store=cli_store)
        view = done.text.encode()
        for e in done.elisions:
            assert e["expand"] in done.text
            argv = shlex.split(e["expand"])
            assert argv[:2] == ["excerpt", "expand"]
            assert main(argv[1:]) == 0
            part = capfdbinary.readouterr().out
            assert part in data
            view = view.replace(_marker_of(view, e["expand"]), part, 1)
        assert view == data


def _marker_of(view: bytes, call: str) -> bytes:
    """The marker (for a line marker: its line, indentation and newline) naming ``call``."""
    m = re.search(
        rb"(?m)(^[ \t]*)?\[\xe2\x80\xa6 [^\n]*? \xc2\xb7 " + re.escape(call.encode()) + rb"\]\n?",
        view,
    )
    assert m is not None
    return m.group()


def test_the_same_payload_gives_the_same_view(store: Store, tmp_path: Path) -> None:
    other = Store(root=tmp_path / "other")
    for data in (PIP_LIST, LOG, _diff()):
        assert compact(data, store=store).to_dict() == compact(data, store=other).to_dict()


def test_savings_say_what_claude_codes_spill_would_have_done(store: Store) -> None:
    big = compact(LOG * 3, store=store).to_dict()
    assert big["original_bytes"] > 30_000 and "written to a file" in big["claude_code_spill"]
    assert big["saved_bytes"] == big["original_bytes"] - big["compacted_bytes"]
    small = compact(PIP_LIST, store=store).to_dict()
    assert small["claude_code_spill"].startswith("none")


# --------------------------------------------------------------------------------- the CLI


def _run(argv: list[str], data: bytes, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    return main(argv)


def test_cli_compact_json_and_expand_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "cache"))
    assert _run(["compact", "--json"], LOG, monkeypatch) == 0
    doc = json.loads(capfdbinary.readouterr().out)
    assert set(doc) >= {"id", "kind", "original_bytes", "compacted_bytes", "text"}
    assert doc["kind"] == "log" and doc["original_bytes"] == len(LOG)
    assert main(["expand", doc["id"], "--lines", "301-304"]) == 0
    assert capfdbinary.readouterr().out == b"".join(LOG.splitlines(keepends=True)[300:304])
    assert main(["expand", doc["id"], "--grep", "^Value", "--json"]) == 0
    got = json.loads(capfdbinary.readouterr().out)
    assert got["text"] == "ValueError: bad item 17\n" and got["lines"] == [[304, 304]]


def test_cli_expand_of_a_damaged_or_evicted_original_fails_with_its_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EXCERPT_COMPACT_STORE_BYTES", str(len(LOG) + 10))
    store = Store.in_cache(tmp_path / "cache")
    first = compact(LOG, store=store).id
    second = compact(LOG + b"more\n", store=store).id
    assert main(["expand", first, "--json"]) == 1
    assert json.loads(capfdbinary.readouterr().out)["code"] == "evicted"
    _object(store, second).write_bytes(b"other bytes")
    assert main(["expand", second]) == 3
    out = capfdbinary.readouterr()
    assert out.out == b"" and b"corrupt" in out.err
    assert main(["expand", second, "--lines", "x"]) == 2


def test_cli_compact_of_an_unreadable_file_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setenv("EXCERPT_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["compact", str(tmp_path / "missing.log"), "--json"]) == 2
    assert json.loads(capfdbinary.readouterr().out)["code"] == "usage_error"
