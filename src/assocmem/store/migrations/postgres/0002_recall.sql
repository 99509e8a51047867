-- Hybrid recall (PostgreSQL): author and thread, the authors each layer has seen,
-- immutable text, a full-text column kept by the database itself, stored vectors.

ALTER TABLE memories ADD COLUMN author TEXT;
ALTER TABLE memories ADD COLUMN thread TEXT;
CREATE INDEX memories_by_thread ON memories (scope_id, thread, seq);
CREATE INDEX memories_by_fingerprint ON memories (scope_id, fingerprint);

CREATE TABLE authors (
    scope_id BIGINT NOT NULL,
    author   TEXT NOT NULL,
    PRIMARY KEY (scope_id, author)
);
CREATE FUNCTION assocmem_author_seen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.author IS NOT NULL THEN
        INSERT INTO authors (scope_id, author) VALUES (NEW.scope_id, NEW.author)
            ON CONFLICT DO NOTHING;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER memories_author_insert AFTER INSERT ON memories
    FOR EACH ROW EXECUTE FUNCTION assocmem_author_seen();

CREATE FUNCTION assocmem_text_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a memory''s text is immutable';
END $$;
CREATE TRIGGER memories_text_immutable BEFORE UPDATE OF text ON memories
    FOR EACH ROW EXECUTE FUNCTION assocmem_text_immutable();

-- Full text: English stemming, a GIN index, computed in the row's own transaction.
ALTER TABLE memories ADD COLUMN fts tsvector
    GENERATED ALWAYS AS (to_tsvector('english', text)) STORED;
CREATE INDEX memories_fts ON memories USING GIN (fts);

CREATE TABLE vectors (
    memory_seq BIGINT PRIMARY KEY,
    scope_id   BIGINT NOT NULL,
    vector     BYTEA NOT NULL
);
CREATE FUNCTION assocmem_memory_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM vectors WHERE memory_seq = OLD.seq;
    RETURN OLD;
END $$;
CREATE TRIGGER memories_cascade AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION assocmem_memory_deleted();
