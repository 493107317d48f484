"""Numbered schema migrations of the index database; ``PRAGMA user_version`` is the number.

Append only: a released migration is never edited. A database whose version is higher than
``len(MIGRATIONS)`` comes from another excerpt version and is rebuilt, not trusted.
"""

from __future__ import annotations

__all__ = ["APPLICATION_ID", "MIGRATIONS"]

APPLICATION_ID = 0x45584350  # "EXCP"

MIGRATIONS: tuple[str, ...] = (
    # 1: files, symbols, imports, full-text lexicon, graph edges, omissions, runs.
    # lexicon is contentless; lexicon_docs keeps each file's indexed terms (zlib) so that
    # exactly those can be deleted when the file changes.
    """
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta(key, value) VALUES ('clean', '1'), ('graph_dirty', '1');
    CREATE TABLE files(
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        language TEXT NOT NULL,
        encoding TEXT NOT NULL,
        lines INTEGER NOT NULL,
        status TEXT,
        is_test INTEGER NOT NULL,
        package TEXT,
        manifest TEXT,
        checksum INTEGER NOT NULL
    );
    CREATE TABLE symbols(
        file_id INTEGER NOT NULL REFERENCES files(id),
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        qualname TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL
    );
    CREATE INDEX symbols_file ON symbols(file_id);
    CREATE INDEX symbols_name ON symbols(name COLLATE NOCASE);
    CREATE TABLE imports(
        file_id INTEGER NOT NULL REFERENCES files(id),
        module TEXT NOT NULL,
        names TEXT NOT NULL,
        line INTEGER NOT NULL,
        kind TEXT NOT NULL
    );
    CREATE INDEX imports_file ON imports(file_id);
    CREATE VIRTUAL TABLE lexicon USING fts5(path, symbols, body, content='', tokenize='ascii');
    CREATE TABLE lexicon_docs(
        file_id INTEGER PRIMARY KEY REFERENCES files(id),
        data BLOB NOT NULL
    );
    CREATE TABLE edges(
        src_id INTEGER NOT NULL REFERENCES files(id),
        dst_id INTEGER NOT NULL REFERENCES files(id),
        kind TEXT NOT NULL,
        evidence TEXT NOT NULL,
        PRIMARY KEY(src_id, dst_id, kind, evidence)
    ) WITHOUT ROWID;
    CREATE INDEX edges_dst ON edges(dst_id);
    CREATE TABLE omitted(path TEXT PRIMARY KEY, reason TEXT NOT NULL, size INTEGER);
    CREATE TABLE runs(
        id INTEGER PRIMARY KEY,
        started_ns INTEGER NOT NULL,
        finished_ns INTEGER,
        files_written INTEGER,
        files_removed INTEGER
    )
    """,
    # 2: git blob ids (to tell changed files from git without running git on the work tree)
    # and what packs handed out (to say where a stale excerpt moved). Existing rows are
    # re-read on the next run (mtime reset) so that every row gets its blob id.
    """
    ALTER TABLE files ADD COLUMN git_blob TEXT;
    UPDATE files SET mtime_ns = -1;
    CREATE TABLE handles(
        handle TEXT PRIMARY KEY,
        excerpt_sha256 TEXT NOT NULL,
        lines INTEGER NOT NULL,
        first_line_sha256 TEXT NOT NULL
    )
    """,
    # 3: test files recognised in more layouts (Java test source sets beyond src/test, Rust
    # helpers under tests/<dir>/): the flag is derived again from each path by the same rule
    # new rows get (``excerpt_is_test``, registered on every connection), and the graph,
    # whose test edges depend on it, is rebuilt on the next run.
    """
    UPDATE files SET is_test = excerpt_is_test(path);
    UPDATE meta SET value = '1' WHERE key = 'graph_dirty'
    """,
    # 4: a digest of each file's symbol, import and term rows (``excerpt.index.checks``),
    # compared when they are read, and the files whose rows failed it, which the next run
    # reads again. Rows from before get the digest of what they hold now (they were trusted
    # as they were), by the functions registered on every connection (an aggregate over no
    # rows gives NULL there: hence the digest of none); nothing is re-read.
    """
    ALTER TABLE files ADD COLUMN symbols_check INTEGER;
    ALTER TABLE files ADD COLUMN imports_check INTEGER;
    ALTER TABLE files ADD COLUMN terms_check INTEGER;
    UPDATE files SET
        symbols_check = COALESCE(
            (SELECT excerpt_rows_check(kind, name, qualname, start_line, end_line)
             FROM symbols WHERE file_id = files.id),
            excerpt_no_rows_check()),
        imports_check = COALESCE(
            (SELECT excerpt_rows_check(module, names, line, kind)
             FROM imports WHERE file_id = files.id),
            excerpt_no_rows_check()),
        terms_check = excerpt_terms_check(
            (SELECT data FROM lexicon_docs WHERE file_id = files.id));
    CREATE TABLE repairs(path TEXT PRIMARY KEY)
    """,
    # 5: the repository's past commits (``excerpt.index.history``): ancestors of the head in
    # meta ``history_head``, each with how many files it changed (``skipped``: too many to
    # say anything), the indexed files it changed, and its message's terms (subject and body
    # as ``lexicon_text`` gives them, so task terms match as they match file text). Written to
    # find its objects already there (a database taken back to an older version by hand).
    """
    CREATE TABLE IF NOT EXISTS history_commits(
        id INTEGER PRIMARY KEY,
        sha TEXT NOT NULL UNIQUE,
        time INTEGER NOT NULL,
        changed INTEGER NOT NULL,
        skipped INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS history_files(
        commit_id INTEGER NOT NULL REFERENCES history_commits(id),
        path TEXT NOT NULL,
        PRIMARY KEY(commit_id, path)
    ) WITHOUT ROWID;
    CREATE VIRTUAL TABLE IF NOT EXISTS history_text USING fts5(subject, body, tokenize='ascii');
    INSERT OR IGNORE INTO meta(key, value) VALUES ('history_head', ''), ('history_key', ''),
        ('history_truncated', '0')
    """,
    # 6: the files whose import rows changed while what the resolvers' tables are built from
    # (paths, languages, packages, manifests) did not: only their own imports are resolved
    # again (``graph_dirty`` still asks for the whole graph).
    """
    CREATE TABLE IF NOT EXISTS graph_pending(path TEXT PRIMARY KEY)
    """,
)
