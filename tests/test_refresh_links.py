"""A no-change refresh reads nothing, symlinks included (README "excerpt index")."""

from __future__ import annotations

import os
from pathlib import Path

from excerpt.index.build import index_repository


def test_a_refresh_with_unchanged_symlinks_reads_nothing_and_a_changed_target_is_read_again(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "real.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    os.symlink("pkg/real.py", repo / "alias.py")
    os.symlink("pkg/nowhere.py", repo / "dangling.py")
    (tmp_path / "elsewhere.py").write_text("X = 1\n", encoding="utf-8")
    os.symlink(tmp_path / "elsewhere.py", repo / "outside.py")
    cache = tmp_path / "cache"
    first = index_repository(repo, cache_dir=cache)
    assert first.files_read == 2
    omitted = dict(first.omitted_paths)
    assert omitted["dangling.py"] == "not_regular_file"
    assert omitted["outside.py"] == "symlink_outside_root"
    assert index_repository(repo, cache_dir=cache).files_read == 0
    with (repo / "pkg" / "real.py").open("a", encoding="utf-8") as f:
        f.write("\n\ndef g():\n    return 2\n")
    again = index_repository(repo, cache_dir=cache)
    assert again.files_read == 2  # the file, and the link that reads it
    assert index_repository(repo, cache_dir=cache).files_read == 0
