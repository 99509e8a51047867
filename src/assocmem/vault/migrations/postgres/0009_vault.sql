-- A vault of Markdown notes (PostgreSQL): the same tables and invariants as the
-- SQLite migration of the same name; see that file for the why of each.
CREATE TABLE vault_roots (
    scope_id   BIGINT PRIMARY KEY,
    root       TEXT NOT NULL,
    indexed_at BIGINT NOT NULL
);

CREATE TABLE vault_notes (
    scope_id   BIGINT NOT NULL,
    path       TEXT NOT NULL,
    hash       TEXT NOT NULL,
    size       BIGINT NOT NULL,
    mtime_ns   BIGINT NOT NULL,
    title      TEXT NOT NULL,
    aliases    TEXT NOT NULL,
    tags       TEXT NOT NULL,
    dated      TEXT,
    folder     TEXT NOT NULL,
    memory_ids TEXT NOT NULL,
    words      BIGINT NOT NULL,
    PRIMARY KEY (scope_id, path)
);

CREATE TABLE vault_links (
    scope_id BIGINT NOT NULL,
    source   TEXT NOT NULL,
    target   TEXT NOT NULL,
    resolved TEXT,
    line     INTEGER NOT NULL,
    PRIMARY KEY (scope_id, source, target)
);
CREATE INDEX vault_links_by_resolved ON vault_links (scope_id, resolved);
