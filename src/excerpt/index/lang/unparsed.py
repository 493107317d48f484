"""Languages the index names but does not parse: the file's language, and nothing more.

A parsed language's own extensions and file names take precedence over these, so adding a
language never needs an edit here.
"""

from __future__ import annotations

from typing import Final

__all__ = ["EXTENSIONS", "NAMES"]

EXTENSIONS: Final[dict[str, str]] = {
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp",
    ".rb": "ruby", ".php": "php", ".kt": "kotlin", ".swift": "swift", ".scala": "scala",
    ".sh": "shell", ".bash": "shell", ".sql": "sql", ".md": "markdown", ".rst": "rst",
    ".txt": "text", ".json": "json", ".yml": "yaml", ".yaml": "yaml", ".toml": "toml",
    ".ini": "ini", ".cfg": "ini", ".xml": "xml", ".html": "html", ".htm": "html",
    ".css": "css", ".scss": "css", ".vue": "vue", ".svelte": "svelte", ".po": "gettext",
}  # fmt: skip
NAMES: Final[dict[str, str]] = {
    "Makefile": "make", "Dockerfile": "dockerfile", "Cargo.lock": "toml", "go.mod": "gomod",
}  # fmt: skip
