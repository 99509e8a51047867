-- Vector changes: every insert, replacement, move to another layer and deletion of a
-- stored vector takes a new, ever-growing change number, so a copy of the vectors kept
-- outside the database (a process's search index, the ANN file beside the store) catches
-- up by reading the changes after the last one it applied. One row per memory: its
-- latest change. A deleted vector's row keeps only its memory's number, so an index
-- learns to drop it; nothing of the vector or the text stays.
CREATE TABLE vector_changes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_seq INTEGER NOT NULL UNIQUE
);
INSERT INTO vector_changes (memory_seq) SELECT memory_seq FROM vectors ORDER BY memory_seq;
CREATE TRIGGER vectors_changes_insert AFTER INSERT ON vectors
BEGIN
    REPLACE INTO vector_changes (memory_seq) VALUES (new.memory_seq);
END;
CREATE TRIGGER vectors_changes_update AFTER UPDATE ON vectors
BEGIN
    REPLACE INTO vector_changes (memory_seq) VALUES (new.memory_seq);
END;
CREATE TRIGGER vectors_changes_delete AFTER DELETE ON vectors
BEGIN
    REPLACE INTO vector_changes (memory_seq) VALUES (old.memory_seq);
END;
-- An index loads the layers it has no file for, and checks a file's row count, by layer.
CREATE INDEX vectors_layer ON vectors (scope_id, memory_seq);
