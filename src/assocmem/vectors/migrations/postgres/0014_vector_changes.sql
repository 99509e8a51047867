-- Vector changes: every insert, replacement, move to another layer and deletion of a
-- stored vector takes a new change number, so a copy of the vectors kept outside the
-- database (a process's search index when pgvector is absent) catches up by reading the
-- changes after the last one it applied. Writes hold the store's write lock, so change
-- numbers commit in order. One row per memory: its latest change; a deleted vector's row
-- keeps only its memory's number.
CREATE TABLE vector_changes (
    id         BIGSERIAL PRIMARY KEY,
    memory_seq BIGINT NOT NULL UNIQUE
);
INSERT INTO vector_changes (memory_seq) SELECT memory_seq FROM vectors ORDER BY memory_seq;
CREATE FUNCTION assocmem_vector_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed BIGINT;
BEGIN
    IF TG_OP = 'DELETE' THEN changed := OLD.memory_seq; ELSE changed := NEW.memory_seq; END IF;
    INSERT INTO vector_changes (memory_seq) VALUES (changed)
        ON CONFLICT (memory_seq) DO UPDATE SET id = nextval('vector_changes_id_seq');
    RETURN NULL;
END $$;
CREATE TRIGGER vectors_changes AFTER INSERT OR UPDATE OR DELETE ON vectors
    FOR EACH ROW EXECUTE FUNCTION assocmem_vector_changed();
CREATE INDEX vectors_layer ON vectors (scope_id, memory_seq);
