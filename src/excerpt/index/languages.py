"""Which language a path is, and the grammar of the parsed ones: the registry's public face.

The languages themselves live in ``excerpt.index.lang`` (one module each); this module keeps
the names other packages import.
"""

from __future__ import annotations

from excerpt.index.lang import PARSED_LANGUAGES, Grammar, grammar, language_of

__all__ = ["PARSED_LANGUAGES", "Grammar", "grammar", "language_of"]
