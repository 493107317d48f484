"""``core.durable.replace_atomic``: the one atomic write every writer of excerpt (and of its
benchmarks) calls: whole or not at all, the mode asked for, synced when asked, passing its
caller's labelled crash points. What a crash at each label leaves is ``test_crash_points``;
a path a user names (symlinks, modes kept, pipes) is ``test_cli_output``."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from excerpt.core import durable
from excerpt.core.durable import WRITE_POINTS, replace_atomic


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _refuse(src: object, dst: object) -> None:
    raise OSError(28, "No space left on device")


def test_a_replacement_cut_off_at_its_rename_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "doc"
    target.write_bytes(b"old\n")
    monkeypatch.setattr(os, "replace", _refuse)
    with pytest.raises(OSError, match="No space left on device"):
        replace_atomic(target, b"new\n")
    assert target.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["doc"]


@pytest.mark.parametrize(
    ("mode", "before", "after"),
    [
        pytest.param(0o600, None, 0o600, id="private-new"),
        pytest.param(0o600, 0o644, 0o600, id="private-over-public"),
        pytest.param(0o640, None, 0o640, id="exact-not-umasked"),
        pytest.param(None, None, 0o644, id="default-is-what-open-gives"),
        pytest.param(None, 0o600, 0o644, id="default-does-not-keep-the-old-mode"),
    ],
)
def test_a_replacement_has_exactly_the_mode_asked_for_else_the_one_open_gives(
    tmp_path: Path, umask: None, mode: int | None, before: int | None, after: int
) -> None:
    target = tmp_path / "file"
    if before is not None:
        target.write_bytes(b"old")
        target.chmod(before)
    replace_atomic(target, b"new", mode=mode)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == after


def test_a_symlink_at_the_name_is_replaced_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_bytes(b"old")
    link = tmp_path / "link"
    link.symlink_to(real)
    replace_atomic(link, b"new")
    assert not link.is_symlink() and link.read_bytes() == b"new"
    assert real.read_bytes() == b"old"


@pytest.mark.parametrize(("sync", "synced"), [(True, 2), (False, 0)], ids=["sync", "no-sync"])
def test_a_synced_replacement_flushes_the_file_and_its_directory_an_unsynced_one_neither(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: bool, synced: int
) -> None:
    calls: list[int] = []
    real_fsync = os.fsync

    def counted(fd: int) -> None:
        calls.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counted)
    replace_atomic(tmp_path / "file", b"data", sync=sync)
    assert len(calls) == synced
    assert (tmp_path / "file").read_bytes() == b"data"


@pytest.mark.parametrize("kind", [None, *WRITE_POINTS], ids=str)
def test_a_replacement_passes_its_caller_s_crash_points_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: durable.CrashPoints | None
) -> None:
    passed: list[str] = []
    monkeypatch.setattr(durable, "crash_point", passed.append)
    replace_atomic(tmp_path / "file", b"data", crash_points=kind)
    expected = [] if kind is None else [label for label in WRITE_POINTS[kind] if label]
    assert passed == expected
    assert all(label in durable.LABELS for label in passed)
