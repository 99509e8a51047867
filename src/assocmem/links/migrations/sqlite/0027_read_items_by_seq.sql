-- A read's returned memories name the read by an integer `seq` instead of its
-- 26-character handle: every read writes one `read_items` row per memory it
-- returned, in the table and in its index by memory, so the handle repeated there
-- was most of what reads kept on disk. `reads` is rebuilt to give each read a
-- stable `seq` (a rowid that a VACUUM would not renumber); `read_lessons`, written
-- only for rated reads, keeps the handle.
CREATE TABLE reads_by_seq (
    seq       INTEGER PRIMARY KEY,
    id        TEXT NOT NULL UNIQUE, -- the handle: a ULID
    scope_id  INTEGER NOT NULL,     -- the reader's own layer
    at        INTEGER NOT NULL,     -- microseconds since 1970-01-01T00:00:00Z
    concepts  TEXT NOT NULL,        -- JSON list of the read's concept names
    model     TEXT,                 -- the embedder of `vector`
    vector    BLOB,                 -- the query's unit float32 vector
    rated_at  INTEGER               -- when an outcome first taught it (NULL: never)
);
INSERT INTO reads_by_seq (id, scope_id, at, concepts, model, vector, rated_at)
SELECT id, scope_id, at, concepts, model, vector, rated_at FROM reads ORDER BY at, id;

CREATE TABLE read_items_by_seq (
    read_seq   INTEGER NOT NULL,
    memory_seq INTEGER NOT NULL,
    PRIMARY KEY (read_seq, memory_seq)
) WITHOUT ROWID;
INSERT INTO read_items_by_seq (read_seq, memory_seq)
SELECT r.seq, i.memory_seq FROM read_items i JOIN reads_by_seq r ON r.id = i.read_id;

DROP TABLE read_items;
DROP TABLE reads;
ALTER TABLE reads_by_seq RENAME TO reads;
ALTER TABLE read_items_by_seq RENAME TO read_items;
CREATE INDEX reads_by_layer ON reads (scope_id, at);
CREATE INDEX reads_rated ON reads (scope_id, rated_at) WHERE rated_at IS NOT NULL;
CREATE INDEX read_items_by_memory ON read_items (memory_seq);
