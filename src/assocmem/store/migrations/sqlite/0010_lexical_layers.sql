-- Lexical statistics per scope layer, so that BM25 ranks a reader's memories by
-- what the reader can read (document count, average length, document frequency)
-- and never by another tenant's writes.

-- Each memory's length in tokens, as FTS5 counted it: its docsize blob holds one
-- SQLite varint (one text column), decoded here (lengths under 2^28 tokens).
CREATE VIEW lexical_lengths AS
SELECT id AS seq,
       CASE length(h) WHEN 2 THEN ((instr('0123456789ABCDEF', substr(h, 1, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(h, 2, 1)) - 1)
        WHEN 4 THEN (((instr('0123456789ABCDEF', substr(h, 1, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(h, 2, 1)) - 1) - 128) * 128 + ((instr('0123456789ABCDEF', substr(h, 3, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(h, 4, 1)) - 1)
        WHEN 6 THEN ((((instr('0123456789ABCDEF', substr(h, 1, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(h, 2, 1)) - 1) - 128) * 128 + ((instr('0123456789ABCDEF', substr(h, 3, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(h, 4, 1)) - 1) - 128) * 128 + ((instr('0123456789ABCDEF', substr(h, 5, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(h, 6, 1)) - 1)
        ELSE (((((instr('0123456789ABCDEF', substr(h, 1, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(h, 2, 1)) - 1) - 128) * 128 + ((instr('0123456789ABCDEF', substr(h, 3, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(h, 4, 1)) - 1) - 128) * 128 + ((instr('0123456789ABCDEF', substr(h, 5, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(h, 6, 1)) - 1) - 128) * 128 + ((instr('0123456789ABCDEF', substr(h, 7, 1)) - 1) * 16 + instr('0123456789ABCDEF', substr(h, 8, 1)) - 1) END AS tokens
FROM (SELECT id, hex(sz) AS h FROM memories_fts_docsize);

-- Memories and tokens per layer: BM25's N and average length for a reader are the
-- sums over the reader's layers. Kept by the index triggers, in the write's
-- transaction (rebuilt here in one pass for an existing store).
CREATE TABLE lexical_layers (
    scope_id INTEGER PRIMARY KEY,
    docs     INTEGER NOT NULL,
    tokens   INTEGER NOT NULL
);
INSERT INTO lexical_layers (scope_id, docs, tokens)
SELECT m.scope_id, COUNT(*), COALESCE(SUM(l.tokens), 0)
FROM memories m LEFT JOIN lexical_lengths l ON l.seq = m.seq GROUP BY m.scope_id;

-- The index triggers again, with the counts: the length is read from FTS5 after the
-- insert and before the delete, so one trigger does both, in that order.
DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.seq, new.text);
    INSERT INTO lexical_layers (scope_id, docs, tokens)
    SELECT new.scope_id, 1, COALESCE((SELECT tokens FROM lexical_lengths WHERE seq = new.seq), 0)
    WHERE TRUE
    ON CONFLICT (scope_id) DO UPDATE SET
        docs = docs + 1, tokens = tokens + excluded.tokens;
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
BEGIN
    UPDATE lexical_layers SET
        docs = docs - 1,
        tokens = tokens - COALESCE((SELECT tokens FROM lexical_lengths WHERE seq = old.seq), 0)
    WHERE scope_id = old.scope_id;
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;
