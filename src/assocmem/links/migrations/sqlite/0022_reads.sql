-- Reads kept as state of their own, so feedback can name the read it rates
-- (`feedback(read=...)`) instead of every caller carrying its concepts back. A read
-- row is what was asked (the question's concepts, and its query vector where an
-- embedder was attached), never what was found: the memories it returned are
-- rows of `read_items`, which `forget` deletes with the read. Unrated reads are
-- kept up to a bound per layer (`links/precedents.py`); a rated read lives as long
-- as what it taught (`read_lessons`).
CREATE TABLE reads (
    id        TEXT PRIMARY KEY,     -- the handle: a ULID
    scope_id  INTEGER NOT NULL,     -- the reader's own layer
    at        INTEGER NOT NULL,     -- microseconds since 1970-01-01T00:00:00Z
    concepts  TEXT NOT NULL,        -- JSON list of the read's concept names
    model     TEXT,                 -- the embedder of `vector`
    vector    BLOB,                 -- the query's unit float32 vector
    rated_at  INTEGER               -- when an outcome first taught it (NULL: never)
);
CREATE INDEX reads_by_layer ON reads (scope_id, at);
CREATE INDEX reads_rated ON reads (scope_id, rated_at) WHERE rated_at IS NOT NULL;

CREATE TABLE read_items (
    read_id    TEXT NOT NULL,
    memory_seq INTEGER NOT NULL,
    PRIMARY KEY (read_id, memory_seq)
) WITHOUT ROWID;
CREATE INDEX read_items_by_memory ON read_items (memory_seq);

-- What outcomes taught a read's meaning: for each rated (read, memory), the sum of
-- its outcomes (negative when rated harmful), so a later question that means the
-- same finds what helped this one (precedents).
CREATE TABLE read_lessons (
    read_id    TEXT NOT NULL,
    memory_seq INTEGER NOT NULL,
    weight     REAL NOT NULL,
    outcomes   INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (read_id, memory_seq)
) WITHOUT ROWID;
CREATE INDEX read_lessons_by_memory ON read_lessons (memory_seq);
