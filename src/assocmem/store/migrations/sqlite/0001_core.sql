-- The associative core: scopes, memories, concepts, learned links and the feedback log.

-- Each (agent, project, channel, access) is one scope layer, interned as a small
-- integer so every hot row and index carries 8 bytes instead of four strings.
-- `access` is the roles allowed to read, sorted and joined by newlines ('' for
-- everyone): records, learned links and declarations of a restricted class live in
-- their own layer, so a reader's role selects layers before anything is scored.
CREATE TABLE scopes (
    id         INTEGER PRIMARY KEY,
    agent_id   TEXT NOT NULL,
    project_id TEXT NOT NULL,
    channel    TEXT NOT NULL,
    access     TEXT NOT NULL DEFAULT '',
    UNIQUE (agent_id, project_id, channel, access)
);

-- One row per memory. `seq` is internal (joins, order of arrival); `id` is the
-- public, opaque identifier, so ids reveal nothing about other agents' writes.
CREATE TABLE memories (
    seq                INTEGER PRIMARY KEY,
    id                 TEXT NOT NULL UNIQUE,
    scope_id           INTEGER NOT NULL,
    agent_id           TEXT NOT NULL,
    project_id         TEXT NOT NULL DEFAULT '',
    channel            TEXT NOT NULL DEFAULT '',
    text               TEXT NOT NULL,
    kind               TEXT NOT NULL CHECK (kind IN ('working', 'episodic', 'semantic', 'procedural')),
    tags               TEXT NOT NULL DEFAULT '[]',
    value              REAL NOT NULL DEFAULT 1.0,
    meta               TEXT NOT NULL DEFAULT '{}',
    source             TEXT,
    observed_at        TEXT NOT NULL,
    version            TEXT,
    verified_at        TEXT,
    verification_scope TEXT,
    recheck_by         TEXT,
    confidence         REAL,
    access             TEXT NOT NULL DEFAULT '[]',
    key_subject        TEXT,
    key_relation       TEXT,
    derived_from       TEXT NOT NULL DEFAULT '[]',
    status             TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'archived')),
    protected          INTEGER NOT NULL DEFAULT 0,
    valence            REAL NOT NULL DEFAULT 0.0,
    fingerprint        TEXT NOT NULL,
    dedupe_key         TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    accessed_at        TEXT
);
-- A retried write of the same observation is refused, never stored twice.
CREATE UNIQUE INDEX memories_dedupe ON memories (scope_id, dedupe_key);
CREATE INDEX memories_by_scope ON memories (scope_id, seq);

-- Normalised concept strings, interned. Ids never change once assigned.
CREATE TABLE concepts (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- Which concepts each memory carries, clustered by (scope, concept, memory) so a
-- concept's newest memories are read from one index range, never a full scan.
CREATE TABLE memory_concepts (
    scope_id   INTEGER NOT NULL,
    concept_id INTEGER NOT NULL,
    memory_seq INTEGER NOT NULL,
    position   INTEGER NOT NULL,
    form       TEXT NOT NULL,       -- the caller's original spelling
    PRIMARY KEY (scope_id, concept_id, memory_seq)
) WITHOUT ROWID;
CREATE INDEX memory_concepts_by_memory ON memory_concepts (memory_seq);

-- Learned links: state of their own, never recomputed from memories. One row per
-- unordered pair (a < b) per scope layer; a read sums the layers it can see.
-- `weight` starts as the co-occurrence `count` and moves with feedback; a layer's
-- row may hold a negative correction so the summed weight never drops below 0.
CREATE TABLE links (
    scope_id       INTEGER NOT NULL,
    a              INTEGER NOT NULL,
    b              INTEGER NOT NULL,
    weight         REAL NOT NULL DEFAULT 0.0,
    count          INTEGER NOT NULL DEFAULT 0,
    outcome_sum    REAL NOT NULL DEFAULT 0.0,
    feedback_count INTEGER NOT NULL DEFAULT 0,
    updated_at     TEXT NOT NULL,
    PRIMARY KEY (scope_id, a, b),
    CHECK (a < b)
) WITHOUT ROWID;
-- Strongest links of a concept first, from either end: a read follows the top of
-- these ranges and never aggregates a hub concept's thousands of weak links.
CREATE INDEX links_by_a_weight ON links (scope_id, a, weight);
CREATE INDEX links_by_b_weight ON links (scope_id, b, weight);

-- Append-only log of every feedback call: who, when, which concepts, which outcome
-- (which memories: feedback_items, migration 0004).
CREATE TABLE feedback (
    id             INTEGER PRIMARY KEY,
    scope_id       INTEGER NOT NULL,
    query_concepts TEXT NOT NULL,
    outcome        REAL NOT NULL,
    created_at     TEXT NOT NULL
);
CREATE INDEX feedback_by_scope ON feedback (scope_id);
CREATE TRIGGER feedback_append_only BEFORE UPDATE ON feedback
BEGIN
    SELECT RAISE(ABORT, 'the feedback log is append-only');
END;

-- Facts about the store itself (which embedder filled it, and so on).
CREATE TABLE store_info (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
