"""What a tool call knows besides its arguments: the served repository and cache, the
client's roots and the client's profile, each injected by the SDK (``Resolve``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import unquote, urlparse

from mcp.server.mcpserver import Context, ListRoots, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ListRootsResult

from excerpt.core.settings import repo_cache_dir
from excerpt.mcp.clients import ClientProfile, profile_for

__all__ = ["Client", "Roots", "ServedRepo", "Session"]


class ServedRepo:
    """The server's repository and cache; the effective root is checked against roots.

    A repository that cannot be served (``--repo`` missing, not a directory, unreadable)
    does not stop the server: every call answers with the problem, which a client shows,
    where an exiting server shows only "connection closed".
    """

    def __init__(self, repo: Path | None, cache_dir: Path | None, problem: str = "") -> None:
        self._repo = repo
        self.cache_dir = cache_dir
        self.problem = problem

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
            return not (repo_cache_dir(self.repo, self.cache_dir) / "index.sqlite3").exists()
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
    return profile_for(params.client_info.name if params is not None else None)


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
