"""Index a workspace: files, hashes, symbols, imports, graph and lexical statistics.

In: a root directory and limits. Out: an up-to-date SQLite index in the cache directory and an
``IndexReport``. Reads the workspace only through ``excerpt.discover``; never writes inside it.
"""
