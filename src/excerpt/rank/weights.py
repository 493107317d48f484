"""The numbers ranking and selection run on, as one record read from ``weights.toml``.

The shipped file is the default and documents each number (what it does, and the figure
that chose it); a variant file names only what it changes. ``Weights`` declares the names
and types; it has no defaults of its own, so the file is the one place a number is written.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from excerpt.errors import EnvironmentFault, UsageError

__all__ = ["Weights", "default_weights", "load_weights"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """Ranking and selection numbers; see ``weights.toml`` for each one's meaning."""

    lexical_limit: int
    lexical_gain: float
    title_gain: float
    max_query_terms: int
    max_title_terms: int
    named_path_pinned_gain: float
    named_path_gain: float
    module_gain: float
    package_init_gain: float
    scope_name_gain: float
    scope_dir_gain: float
    scope_pieces_gain: float
    scope_max_spread: int
    component_gain: float
    component_prose_factor: float
    component_max_spread: int
    frame_gain: float
    frame_depth_gain: float
    defines_exact_gain: float
    defines_gain: float
    defines_max_spread: int
    title_name_factor: float
    code_only_name_factor: float
    defines_exact_anchor: float
    defines_anchor: float
    everyday_share: float
    opening_name_factor: float
    error_name_factor: float
    changed_gain: float
    fallback_gain: float
    fallback_files: int
    graph_seeds: int
    graph_floor_rank: int
    graph_import_share: float
    graph_test_share: float
    graph_seed_cap: float
    graph_hub_fanout: float
    graph_bare_share: float
    graph_ceiling: float
    demote_translation: float
    demote_generated: float
    demote_vendored: float
    demote_lock: float
    demote_fixture: float
    demote_library_copy: float
    demote_repository_metadata: float
    demote_test_data: float
    demote_test: float
    sample_corpus_languages: int
    demote_example: float
    demote_notes: float
    demote_docs: float
    demote_manifest: float
    demote_data: float
    candidates: int
    line_terms: int
    line_term_share: float
    deep_files: int
    deep_regions: int
    shallow_regions: int
    max_symbol_lines: int
    window: int
    head_lines: int
    follow_regions: int
    follow_calls: int
    follow_share: float
    follow_header_lines: int
    whole_file_lines: int
    pad_lines: int
    breadth: int
    whole_shares: tuple[float, ...]
    gap_lines: int
    read_order: int
    region_order: int
    region_coefficients: tuple[float, ...]
    chance_size: float
    region_worth_tokens: float
    rest_share: float
    rest_files: int
    confidence_coefficients: tuple[float, ...]
    primary_confidence: float
    pack_floor: float
    related_tests: int
    related_per_primary: int
    related_regions: int
    related_ranked: int
    related_share: float
    history_gain: float
    history_title_gain: float
    history_commits: int
    history_terms: int
    history_rank_decay: float
    history_cap: float
    history_spread: float
    history_test_factor: float
    history_other_factor: float


_TYPES = {f.name: str(f.type) for f in dataclasses.fields(Weights)}
_REGION_FEATURES = 6  # excerpt.pack.build.REGION_FEATURES (a test holds them equal)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _value(key: str, value: Any, where: str) -> Any:
    """``value`` as the type of field ``key``; a bool is never a number here."""
    kind = _TYPES[key]
    if kind == "int" and _number(value) and isinstance(value, int) and value >= 0:
        return value
    if kind == "float" and _number(value):
        return float(value)
    if kind == "tuple[float, ...]" and isinstance(value, list) and all(map(_number, value)):
        return tuple(float(v) for v in value)
    wanted = {"int": "a whole number of 0 or more", "float": "a number"}
    raise UsageError(f"{where}: {key} must be {wanted.get(kind, 'a list of numbers')}")


def _parse(text: str, where: str) -> dict[str, Any]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where} is not valid TOML: {exc}") from None
    unknown = sorted(set(doc) - set(_TYPES))
    if unknown:
        raise UsageError(
            f"{where}: unknown weight {', '.join(unknown)} (known: see the shipped weights.toml)"
        )
    return {key: _value(key, value, where) for key, value in doc.items()}


@cache
def default_weights() -> Weights:
    """The shipped ``weights.toml``.

    Raises:
        EnvironmentFault: it is missing, or lacks or mistypes a number (a broken install).
    """
    try:
        text = resources.files("excerpt.rank").joinpath("weights.toml").read_text("utf-8")
        values = _parse(text, "weights.toml")
        missing = sorted(set(_TYPES) - set(values))
        if missing:
            raise UsageError(f"weights.toml lacks {', '.join(missing)}")
    except (OSError, UnicodeDecodeError, UsageError) as exc:
        raise EnvironmentFault(f"the packaged ranking weights cannot be used: {exc}") from None
    return Weights(**values)


def load_weights(path: Path) -> Weights:
    """The default weights with those ``path`` names replaced.

    Raises:
        UsageError: the file cannot be read, is not TOML, or names an unknown key or a value
            of the wrong type.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read weights {path}: {type(exc).__name__}") from None
    weights = dataclasses.replace(default_weights(), **_parse(text, str(path)))
    if len(weights.region_coefficients) != _REGION_FEATURES:
        raise UsageError(f"{path}: region_coefficients needs {_REGION_FEATURES} numbers")
    return weights
