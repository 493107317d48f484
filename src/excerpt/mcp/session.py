"""What a tool call knows besides its arguments: the served repository and cache, the
client's roots and the client's profile, each injected by the SDK (``Resolve``)."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Annotated
from urllib.parse import unquote, urlparse

from mcp.server.mcpserver import Context, ListRoots, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ListRootsResult

from excerpt.core import git
from excerpt.core.settings import INDEX_DB, repo_cache_dir
from excerpt.errors import ExcerptError
from excerpt.index.build import IndexReport, index_repository, refresh_paths
from excerpt.index.watch import TreeWatcher, identity
from excerpt.mcp.clients import ClientProfile, profile_for

__all__ = ["Client", "Roots", "ServedRepo", "Session"]

_NAMED_MAX = 256  # changed paths refreshed one by one; more (a checkout): the whole tree


class ServedRepo:
    """The server's repository and cache; the effective root is checked against roots.

    A repository that cannot be served (``--repo`` missing, not a directory, unreadable)
    does not stop the server: every call answers with the problem, which a client shows,
    where an exiting server shows only "connection closed".
    """

    def __init__(self, repo: Path | None, cache_dir: Path | None, problem: str = "",
                 client: str | None = None) -> None:  # fmt: skip
        self._repo = repo
        self.cache_dir = cache_dir
        self.problem = problem
        self.client = client  # the client it was registered for (``excerpt mcp --client``)
        self.watcher: TreeWatcher | None = None
        self._named = False
        self._refresh = threading.Lock()
        # the last refresh's report, the watcher's mark when it began, and which database file
        # it wrote (a cache removed or rebuilt since is not the index the report describes)
        self._last: tuple[IndexReport, int | None, tuple[int, int] | None] | None = None

    def watch(self) -> None:
        """Start noticing changes to the repository (and to its git directory when that lies
        outside it), so a pack after none skips the refresh and one after a few edits reads
        only those files. Nothing is written."""
        if self._repo is None or self.watcher is not None:
            return
        paths = [self._repo]
        try:
            top = git.work_tree_top(self._repo)
            gitdir = git.git_dir(top) if top is not None else None
        except ExcerptError:
            top, gitdir = self._repo.parent, None  # (never the tree itself: no named refresh)
        if gitdir is not None and not gitdir.is_relative_to(self._repo):
            paths.append(gitdir)
        # the named paths alone are refreshed only where every file that decides what
        # discovery lists lies in the watched tree (not a .gitignore above a subdirectory)
        self._named = top is None or _same_dir(top, self._repo)
        self.watcher = TreeWatcher(paths)
        self.watcher.start()

    def unwatch(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        # not under the refresh lock: a call still refreshing must not hold up the exit
        self.watcher, self._last = None, None

    def index_report(self, root: Path) -> IndexReport:
        """The index of ``root`` brought up to date: the last refresh's report when the
        watcher saw nothing change since that refresh began, else a refresh's."""
        with self._refresh:
            watcher = self.watcher
            db = repo_cache_dir(root, self.cache_dir) / INDEX_DB
            if self._last is not None and watcher is not None:
                report, mark, written = self._last
                seen = watcher.changes_since(mark) if identity(db) == written else None
                if seen is not None and not seen[1]:
                    # what a refresh that finds nothing reports: nothing read or removed
                    return dataclasses.replace(
                        report, seconds=0.0, files_read=0, files_removed=0, rows_rebuilt=0,
                        rebuilt=None, history_seconds=0.0,
                    )  # fmt: skip
                named = self._named_paths(seen[1]) if seen is not None else None
                if named is not None:
                    fresh = refresh_paths(root, named, cache_dir=self.cache_dir)
                    if fresh is not None:
                        self._last = (fresh, seen[0] if seen else None, identity(db))
                        return fresh
            mark = watcher.begin_refresh() if watcher is not None else None
            report = index_repository(root, cache_dir=self.cache_dir)
            self._last = (report, mark, identity(db))
            return report

    def _named_paths(self, changed: frozenset[str]) -> list[str] | None:
        """The watcher's changed paths relative to the repository, when they can be
        refreshed alone: a few, all inside it; else None (the tree is refreshed)."""
        if not self._named or self._repo is None or len(changed) > _NAMED_MAX:
            return None
        prefix = f"{self._repo}/"
        if not all(path.startswith(prefix) for path in changed):
            return None  # the git directory outside the tree: a commit, a checkout
        return sorted(path[len(prefix) :] for path in changed)

    def freshness(self) -> str:
        """How packs find the index current, in a line."""
        if self.watcher is None:
            return "refreshed before every call (no watcher)"
        state = self.watcher.state
        if state == "watching":
            return "kept current by file-system notifications (no refresh after no change)"
        return f"refreshed before every call (watcher {state})"

    @property
    def repo(self) -> Path:
        if self._repo is None:
            raise ToolError(
                f"excerpt cannot serve this repository: {self.problem}. Fix the --repo"
                " argument where this MCP server is registered, then restart it."
            )
        return self._repo

    def root(self, roots: ListRootsResult | None) -> Path:
        """The repository, refused when the client's roots do not hold it.

        No roots capability, or an empty list (a client that has not scoped the session),
        leaves the repository as given by ``--repo``.
        """
        if roots is None or not roots.roots:
            return self.repo
        for item in roots.roots:
            path = _root_path(str(item.uri))
            if path is not None and (self.repo == path or self.repo.is_relative_to(path)):
                return self.repo
        raise ToolError("the repository is outside the roots this client allows")

    def first_index(self) -> bool:
        try:
            return not (repo_cache_dir(self.repo, self.cache_dir) / INDEX_DB).exists()
        except OSError:  # an unreadable cache directory: the call itself will say so
            return False


def _served(ctx: Context) -> ServedRepo:
    """The repository the server was built for: its lifespan state (``build_server``)."""
    served = ctx.request_context.lifespan_context
    if not isinstance(served, ServedRepo):
        raise TypeError("the server's lifespan state must be its ServedRepo")
    return served


def _client_roots(ctx: Context) -> ListRoots | None:
    """Ask for the client's roots when it declared the capability (the SDK carries the
    request over whichever protocol version was negotiated)."""
    caps = ctx.client_capabilities
    return ListRoots() if caps is not None and caps.roots is not None else None


def _client_profile(ctx: Context) -> ClientProfile:
    params = ctx.session.client_params
    served = ctx.request_context.lifespan_context
    registered = served.client if isinstance(served, ServedRepo) else None
    return profile_for(params.client_info.name if params is not None else None, registered)


def _root_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    try:
        return Path(unquote(parsed.path)).resolve()
    except (OSError, RuntimeError):
        return None


Session = Annotated[ServedRepo, Resolve(_served)]
Roots = Annotated[ListRootsResult | None, Resolve(_client_roots)]
Client = Annotated[ClientProfile, Resolve(_client_profile)]


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
