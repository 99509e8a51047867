-- Reads kept as state of their own (PostgreSQL): the same tables and invariants as
-- the SQLite migration of the same name; see that file for the why of each.

CREATE TABLE reads (
    id        TEXT PRIMARY KEY,
    scope_id  BIGINT NOT NULL,
    at        BIGINT NOT NULL,
    concepts  TEXT NOT NULL,
    model     TEXT,
    vector    BYTEA,
    rated_at  BIGINT
);
CREATE INDEX reads_by_layer ON reads (scope_id, at);
CREATE INDEX reads_rated ON reads (scope_id, rated_at) WHERE rated_at IS NOT NULL;

CREATE TABLE read_items (
    read_id    TEXT NOT NULL,
    memory_seq BIGINT NOT NULL,
    PRIMARY KEY (read_id, memory_seq)
);
CREATE INDEX read_items_by_memory ON read_items (memory_seq);

CREATE TABLE read_lessons (
    read_id    TEXT NOT NULL,
    memory_seq BIGINT NOT NULL,
    weight     DOUBLE PRECISION NOT NULL,
    outcomes   INTEGER NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (read_id, memory_seq)
);
CREATE INDEX read_lessons_by_memory ON read_lessons (memory_seq);
