-- Lifecycle (PostgreSQL); see the SQLite migration of the same name.

ALTER TABLE memories ADD COLUMN task TEXT;
ALTER TABLE memories ADD COLUMN source_canonical TEXT;
ALTER TABLE memories ADD COLUMN superseded_by BIGINT;
CREATE INDEX memories_by_task ON memories (scope_id, task) WHERE task IS NOT NULL;
CREATE INDEX memories_by_key ON memories (agent_id, project_id, channel, key_subject, key_relation)
    WHERE key_subject IS NOT NULL;
CREATE UNIQUE INDEX memories_one_active_key
    ON memories (agent_id, project_id, channel, key_subject, key_relation)
    WHERE key_subject IS NOT NULL AND status = 'active';

CREATE TABLE feedback_items (
    feedback_id BIGINT NOT NULL,
    memory_seq  BIGINT NOT NULL,
    PRIMARY KEY (feedback_id, memory_seq)
);
CREATE INDEX feedback_items_by_memory ON feedback_items (memory_seq);

CREATE FUNCTION assocmem_memory_feedback_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM feedback_items WHERE memory_seq = OLD.seq;
    UPDATE memories SET superseded_by = NULL WHERE superseded_by = OLD.seq;
    RETURN OLD;
END $$;
CREATE TRIGGER memories_feedback_cascade AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION assocmem_memory_feedback_deleted();
