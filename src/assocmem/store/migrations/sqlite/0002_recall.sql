-- Hybrid recall: author and thread as first-class fields, a full-text index kept
-- in the write's transaction, exact fingerprints, and stored vectors.

ALTER TABLE memories ADD COLUMN author TEXT;   -- who said or wrote it
ALTER TABLE memories ADD COLUMN thread TEXT;   -- the session, conversation or thread it belongs to
CREATE INDEX memories_by_thread ON memories (scope_id, thread, seq);

-- The authors each layer has seen, kept by the write: a question is checked for
-- the names in it without scanning the memories.
CREATE TABLE authors (
    scope_id INTEGER NOT NULL,
    author   TEXT NOT NULL,
    PRIMARY KEY (scope_id, author)
) WITHOUT ROWID;
INSERT OR IGNORE INTO authors (scope_id, author)
    SELECT scope_id, author FROM memories WHERE author IS NOT NULL;
CREATE TRIGGER memories_author_insert AFTER INSERT ON memories
WHEN new.author IS NOT NULL
BEGIN
    INSERT OR IGNORE INTO authors (scope_id, author) VALUES (new.scope_id, new.author);
END;
CREATE INDEX memories_by_fingerprint ON memories (scope_id, fingerprint);

-- Raw text is immutable after write (SPEC C1); the full-text index relies on it.
CREATE TRIGGER memories_text_immutable BEFORE UPDATE OF text ON memories
BEGIN
    SELECT RAISE(ABORT, 'a memory''s text is immutable');
END;

-- BM25 over the text, Porter-stemmed, diacritics folded. External content: the
-- text lives once, in memories; triggers keep the index in the same transaction.
CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, content = 'memories', content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO memories_fts (rowid, text) SELECT seq, text FROM memories;
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;

-- One unit float32 vector per memory, from the embedder recorded in store_info.
CREATE TABLE vectors (
    memory_seq INTEGER PRIMARY KEY,
    scope_id   INTEGER NOT NULL,
    vector     BLOB NOT NULL
);
CREATE TRIGGER memories_vectors_delete AFTER DELETE ON memories
BEGIN
    DELETE FROM vectors WHERE memory_seq = old.seq;
END;
