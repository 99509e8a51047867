-- The declared graph (seed 002): entities, aliases, mentions and relations an
-- agent or an operator asserts. Every row lives in one scope layer, like a memory.

CREATE TABLE entities (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_id    INTEGER NOT NULL,
    name        TEXT NOT NULL,          -- the canonical name, as declared
    normalized  TEXT NOT NULL,          -- NFKC, case-folded, whitespace collapsed, trimmed
    declared_by TEXT NOT NULL CHECK (declared_by IN ('agent', 'operator')),
    created_at  TEXT NOT NULL,
    UNIQUE (scope_id, normalized)
);

-- Every name an entity answers to, its canonical name included, so that one
-- normalized alias resolves to at most one entity per layer: a constraint, not a
-- convention.
CREATE TABLE entity_aliases (
    entity_id  INTEGER NOT NULL,
    scope_id   INTEGER NOT NULL,
    alias      TEXT NOT NULL,
    normalized TEXT NOT NULL,
    PRIMARY KEY (entity_id, normalized)
);
CREATE UNIQUE INDEX entity_aliases_in_layer ON entity_aliases (scope_id, normalized);

CREATE TABLE entity_mentions (
    entity_id   INTEGER NOT NULL,
    memory_seq  INTEGER NOT NULL,
    declared_by TEXT NOT NULL CHECK (declared_by IN ('agent', 'operator')),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (entity_id, memory_seq)
) WITHOUT ROWID;
CREATE INDEX entity_mentions_by_memory ON entity_mentions (memory_seq);

-- entity -> entity relations are walked; mem -> mem relations bundle and carry roles.
CREATE TABLE relations (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_id             INTEGER NOT NULL,
    subject_kind         TEXT NOT NULL CHECK (subject_kind IN ('entity', 'mem')),
    subject_id           INTEGER NOT NULL,
    predicate            TEXT NOT NULL,   -- as declared
    predicate_normalized TEXT NOT NULL,
    object_kind          TEXT NOT NULL CHECK (object_kind IN ('entity', 'mem')),
    object_id            INTEGER NOT NULL,
    anchor_seq           INTEGER NOT NULL DEFAULT 0,   -- the memory that evidences it; 0: none
    declared_by          TEXT NOT NULL CHECK (declared_by IN ('agent', 'operator')),
    declared_at          TEXT NOT NULL,
    UNIQUE (scope_id, subject_kind, subject_id, predicate_normalized, object_kind, object_id,
            anchor_seq)
);
CREATE INDEX relations_by_subject ON relations (subject_kind, subject_id);
CREATE INDEX relations_by_object ON relations (object_kind, object_id);
CREATE INDEX relations_by_anchor ON relations (anchor_seq) WHERE anchor_seq != 0;

-- No declaration outlives its endpoints (seed 002, invariant 8).
CREATE TRIGGER entities_cascade AFTER DELETE ON entities
BEGIN
    DELETE FROM entity_aliases WHERE entity_id = old.id;
    DELETE FROM entity_mentions WHERE entity_id = old.id;
    DELETE FROM relations
     WHERE (subject_kind = 'entity' AND subject_id = old.id)
        OR (object_kind = 'entity' AND object_id = old.id);
END;
CREATE TRIGGER memories_graph_cascade AFTER DELETE ON memories
BEGIN
    DELETE FROM entity_mentions WHERE memory_seq = old.seq;
    DELETE FROM relations
     WHERE (subject_kind = 'mem' AND subject_id = old.seq)
        OR (object_kind = 'mem' AND object_id = old.seq)
        OR anchor_seq = old.seq;
END;
