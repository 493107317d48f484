"""The tooling API: what measurement tools outside the product (the ``excerpt-bench``
distribution in this repository, or anyone's own harness) may build on.

Every name here is kept stable across releases as the CLI is; anything of ``excerpt`` not
named here or in the package's own API (``excerpt.__all__``) is internal. The benchmarks
import nothing else (``tests/test_architecture.py`` holds them to it), so a change inside
the pipeline cannot break them unnoticed, and a change to a name here is a change of the
tools' contract.

The names, by what a tool does with them:

- A repository and its history: ``run_git``, ``resolve_root``, ``repo_cache_dir``,
  ``sha256_hex``, ``HistorySource``, ``history_disabled``, ``is_test_path``,
  ``language_of``, ``PARSED_LANGUAGES``, ``grammar``.
- Indexing: ``index_repository``, ``IndexReport``, ``IndexStore`` (opened to read a cache's
  view), ``terms`` (the indexed terms of a text).
- The index view a ranking reads, recorded and replayed: ``IndexView``, ``MemoryView``,
  ``RecordingView``, ``ReplayMiss``, ``view_to_dict``, ``view_from_dict``; the files a pack
  reads: ``FileSource``, ``WorkspaceFiles``, ``FileContent``, ``Omission``.
- Ranking: ``analyze_task``, ``rank_files``, ``SIGNALS``, ``Weights``, ``default_weights``,
  ``load_weights``, ``features`` (the confidence model's inputs of a ranking),
  ``region_features`` (the region model's of a region).
- Preparing and fitting a pack: ``PackRequest``, ``Prepared``, ``prepare_ranked``,
  ``pack_prepared``, ``Delivered``, ``Pack``, ``build_pack``, ``get_excerpts``,
  ``render_retrieved``, ``parse_handle``, ``escape_controls``, ``to_json``.
- What the hooks and the MCP server send a client: ``build_seed``, ``Shape``,
  ``DEFAULT_SEED_TOKENS``, ``seed_limits``, ``classify_prompt``, ``MAX_PROMPT``,
  ``ClientProfile``, ``profile_for``, ``budget_note``, ``listed_definitions``.
- Counting: ``TokenCounter``, ``o200k_count``; the evaluations' measures: ``gold_lines``,
  ``line_coverage``, ``mean``, ``mrr``, ``nearest_rank``, ``derived_tasks``,
  ``AgentRunRecord``.
- Running many jobs: ``Scheduler``, ``SERIAL``, ``fan_out``, ``parse_scheduler``,
  ``require_dask``, ``SCHEDULER_HELP``.
- Files a tool keeps (a recording), each written whole or not at all: ``replace_atomic``.
- A command mounted under the CLI: ``command``, ``complete_as``, ``git_dirs``, ``emit``,
  ``ProgressBar``. Errors are raised as the product's own (excerpt.errors, which tools
  import too), so the CLI reports them with their exit codes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# each name -> the module that defines it; loaded when first asked for, so a command that
# mounts itself through this module (``excerpt bench``) loads none of the library with it
_WHERE = {
    "AgentRunRecord": "excerpt.evals.agent_records",
    "analyze_task": "excerpt.rank.task",
    "budget_note": "excerpt.mcp.clients",
    "build_pack": "excerpt.deliver",
    "build_seed": "excerpt.hooks.seed",
    "classify_prompt": "excerpt.hooks.prompt",
    "ClientProfile": "excerpt.mcp.clients",
    "command": "excerpt.cli.common",
    "complete_as": "excerpt.cli.common",
    "DEFAULT_SEED_TOKENS": "excerpt.hooks.seed",
    "default_weights": "excerpt.rank.weights",
    "Delivered": "excerpt.deliver",
    "derived_tasks": "excerpt.evals.savings",
    "emit": "excerpt.cli.output",
    "escape_controls": "excerpt.core.escape",
    "fan_out": "excerpt.batch.scheduler",
    "features": "excerpt.rank.confidence",
    "FileContent": "excerpt.discover.reader",
    "FileSource": "excerpt.pack.prepare",
    "get_excerpts": "excerpt.pipeline",
    "git_dirs": "excerpt.cli.common",
    "gold_lines": "excerpt.evals.metrics",
    "grammar": "excerpt.index.lang",
    "history_disabled": "excerpt.index.history",
    "HistorySource": "excerpt.index.history",
    "index_repository": "excerpt.index.build",
    "IndexReport": "excerpt.index.build",
    "IndexStore": "excerpt.index.store",
    "IndexView": "excerpt.index.view",
    "is_test_path": "excerpt.index.lang",
    "language_of": "excerpt.index.lang",
    "line_coverage": "excerpt.evals.metrics",
    "listed_definitions": "excerpt.mcp.server",
    "load_weights": "excerpt.rank.weights",
    "MAX_PROMPT": "excerpt.hooks.run",
    "mean": "excerpt.evals.metrics",
    "MemoryView": "excerpt.index.view",
    "mrr": "excerpt.evals.metrics",
    "nearest_rank": "excerpt.evals.metrics",
    "o200k_count": "excerpt.core.tokens",
    "Omission": "excerpt.discover.reader",
    "Pack": "excerpt.pack.model",
    "pack_prepared": "excerpt.deliver",
    "PackRequest": "excerpt.pack.prepare",
    "parse_handle": "excerpt.pack.handles",
    "parse_scheduler": "excerpt.batch.scheduler",
    "PARSED_LANGUAGES": "excerpt.index.lang",
    "prepare_ranked": "excerpt.pack.prepare",
    "Prepared": "excerpt.pack.prepare",
    "profile_for": "excerpt.mcp.clients",
    "ProgressBar": "excerpt.render.progress",
    "rank_files": "excerpt.rank.score",
    "RecordingView": "excerpt.index.view",
    "region_features": "excerpt.pack",
    "render_retrieved": "excerpt.deliver",
    "replace_atomic": "excerpt.core.durable",
    "ReplayMiss": "excerpt.index.view",
    "repo_cache_dir": "excerpt.core.settings",
    "require_dask": "excerpt.batch.scheduler",
    "resolve_root": "excerpt.discover.walk",
    "run_git": "excerpt.core.git",
    "Scheduler": "excerpt.batch.scheduler",
    "SCHEDULER_HELP": "excerpt.batch",
    "seed_limits": "excerpt.hooks.answer",
    "SERIAL": "excerpt.batch.scheduler",
    "sha256_hex": "excerpt.core.hashing",
    "Shape": "excerpt.hooks.seed",
    "SIGNALS": "excerpt.rank.score",
    "terms": "excerpt.index.tokens",
    "to_json": "excerpt.render.text",
    "TokenCounter": "excerpt.core.tokens",
    "view_from_dict": "excerpt.index.view",
    "view_to_dict": "excerpt.index.view",
    "Weights": "excerpt.rank.weights",
    "WorkspaceFiles": "excerpt.pack.prepare",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'excerpt.tooling' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


if TYPE_CHECKING:  # the names as the type checker sees them
    from excerpt.batch import SCHEDULER_HELP
    from excerpt.batch.scheduler import SERIAL, Scheduler, fan_out, parse_scheduler, require_dask
    from excerpt.cli.common import command, complete_as, git_dirs
    from excerpt.cli.output import emit
    from excerpt.core.durable import replace_atomic
    from excerpt.core.escape import escape_controls
    from excerpt.core.git import run_git
    from excerpt.core.hashing import sha256_hex
    from excerpt.core.settings import repo_cache_dir
    from excerpt.core.tokens import TokenCounter, o200k_count
    from excerpt.deliver import Delivered, build_pack, pack_prepared, render_retrieved
    from excerpt.discover.reader import FileContent, Omission
    from excerpt.discover.walk import resolve_root
    from excerpt.evals.agent_records import AgentRunRecord
    from excerpt.evals.metrics import gold_lines, line_coverage, mean, mrr, nearest_rank
    from excerpt.evals.savings import derived_tasks
    from excerpt.hooks.answer import seed_limits
    from excerpt.hooks.prompt import classify_prompt
    from excerpt.hooks.run import MAX_PROMPT
    from excerpt.hooks.seed import DEFAULT_SEED_TOKENS, Shape, build_seed
    from excerpt.index.build import IndexReport, index_repository
    from excerpt.index.history import HistorySource, history_disabled
    from excerpt.index.lang import PARSED_LANGUAGES, grammar, is_test_path, language_of
    from excerpt.index.store import IndexStore
    from excerpt.index.tokens import terms
    from excerpt.index.view import (
        IndexView,
        MemoryView,
        RecordingView,
        ReplayMiss,
        view_from_dict,
        view_to_dict,
    )
    from excerpt.mcp.clients import ClientProfile, budget_note, profile_for
    from excerpt.mcp.server import listed_definitions
    from excerpt.pack import region_features
    from excerpt.pack.handles import parse_handle
    from excerpt.pack.model import Pack
    from excerpt.pack.prepare import (
        FileSource,
        PackRequest,
        Prepared,
        WorkspaceFiles,
        prepare_ranked,
    )
    from excerpt.pipeline import get_excerpts
    from excerpt.rank.confidence import features
    from excerpt.rank.score import SIGNALS, rank_files
    from excerpt.rank.task import analyze_task
    from excerpt.rank.weights import Weights, default_weights, load_weights
    from excerpt.render.progress import ProgressBar
    from excerpt.render.text import to_json

__all__ = [
    "DEFAULT_SEED_TOKENS",
    "MAX_PROMPT",
    "PARSED_LANGUAGES",
    "SCHEDULER_HELP",
    "SERIAL",
    "SIGNALS",
    "AgentRunRecord",
    "ClientProfile",
    "Delivered",
    "FileContent",
    "FileSource",
    "HistorySource",
    "IndexReport",
    "IndexStore",
    "IndexView",
    "MemoryView",
    "Omission",
    "Pack",
    "PackRequest",
    "Prepared",
    "ProgressBar",
    "RecordingView",
    "ReplayMiss",
    "Scheduler",
    "Shape",
    "TokenCounter",
    "Weights",
    "WorkspaceFiles",
    "analyze_task",
    "budget_note",
    "build_pack",
    "build_seed",
    "classify_prompt",
    "command",
    "complete_as",
    "default_weights",
    "derived_tasks",
    "emit",
    "escape_controls",
    "fan_out",
    "features",
    "get_excerpts",
    "git_dirs",
    "gold_lines",
    "grammar",
    "history_disabled",
    "index_repository",
    "is_test_path",
    "language_of",
    "line_coverage",
    "listed_definitions",
    "load_weights",
    "mean",
    "mrr",
    "nearest_rank",
    "o200k_count",
    "pack_prepared",
    "parse_handle",
    "parse_scheduler",
    "prepare_ranked",
    "profile_for",
    "rank_files",
    "region_features",
    "render_retrieved",
    "replace_atomic",
    "repo_cache_dir",
    "require_dask",
    "resolve_root",
    "run_git",
    "seed_limits",
    "sha256_hex",
    "terms",
    "to_json",
    "view_from_dict",
    "view_to_dict",
]
