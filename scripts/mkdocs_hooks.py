"""MkDocs hooks: the site's home page is the README itself, so the two cannot differ.

The README links its pages as ``docs/PAGE.md`` (right on a code host); on the site, where the
home page sits beside them, those links are rewritten to ``PAGE.md``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_DOCS_LINK = re.compile(r"\]\(docs/")


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != "index.md":
        return markdown
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return _DOCS_LINK.sub("](", readme)
