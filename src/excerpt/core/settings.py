"""Limits and locations: the bounded, explicit knobs of discovery and the cache."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

__all__ = ["Limits", "cache_root", "repo_cache_dir"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Discovery and reading limits; every one that is hit is reported."""

    max_file_bytes: int = 2 * 1024 * 1024
    max_files: int = 200_000
    max_total_bytes: int = 2 * 1024 * 1024 * 1024
    binary_prefix_bytes: int = 8192

    def __post_init__(self) -> None:
        if min(self.max_file_bytes, self.max_files, self.max_total_bytes) <= 0:
            raise ValueError("limits must be positive")
        if self.binary_prefix_bytes <= 0:
            raise ValueError("binary_prefix_bytes must be positive")


def cache_root() -> Path:
    """``$EXCERPT_CACHE_DIR`` if set, else the user cache directory for excerpt."""
    configured = os.environ.get("EXCERPT_CACHE_DIR")
    if configured:
        return Path(configured).expanduser().absolute()
    return Path(platformdirs.user_cache_dir("excerpt", appauthor=False))


def repo_cache_dir(root: Path, base: Path | None = None) -> Path:
    """The cache directory of one repository: keyed by its resolved absolute path."""
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:20]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in root.name)[:40] or "root"
    return (base or cache_root()) / "repos" / f"{name}-{key}"
