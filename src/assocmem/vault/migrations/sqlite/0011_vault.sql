-- A vault of Markdown notes indexed into a scope layer of its own (vault/ room).
-- One root per layer, remembered so later calls need no path.
CREATE TABLE vault_roots (
    scope_id   INTEGER PRIMARY KEY,
    root       TEXT NOT NULL,
    indexed_at INTEGER NOT NULL      -- microseconds since 1970-01-01T00:00:00Z
);

-- Each indexed note, by its path relative to the root (forward slashes). `hash`
-- carries its algorithm tag; `size` and `mtime_ns` let a re-index skip hashing a
-- file whose stat did not move. `memory_ids` is the JSON list of its chunks' ids.
CREATE TABLE vault_notes (
    scope_id   INTEGER NOT NULL,
    path       TEXT NOT NULL,
    hash       TEXT NOT NULL,
    size       INTEGER NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    title      TEXT NOT NULL,
    aliases    TEXT NOT NULL,        -- JSON list
    tags       TEXT NOT NULL,        -- JSON list
    dated      TEXT,                 -- the frontmatter's updated/date/created, ISO date
    folder     TEXT NOT NULL,
    memory_ids TEXT NOT NULL,        -- JSON list
    words      INTEGER NOT NULL,
    PRIMARY KEY (scope_id, path)
) WITHOUT ROWID;

-- The links each note makes: its raw target as written, and the note it resolves
-- to (NULL: a dead link). Replaced whole whenever its source note is re-read.
CREATE TABLE vault_links (
    scope_id INTEGER NOT NULL,
    source   TEXT NOT NULL,
    target   TEXT NOT NULL,
    resolved TEXT,
    line     INTEGER NOT NULL,
    PRIMARY KEY (scope_id, source, target)
) WITHOUT ROWID;
CREATE INDEX vault_links_by_resolved ON vault_links (scope_id, resolved);
