-- Lifecycle: working memory per task, canonical sources, supersession chains,
-- and a feedback log whose memory references can be scrubbed by forget.

ALTER TABLE memories ADD COLUMN task TEXT;               -- working memory's task or session
ALTER TABLE memories ADD COLUMN source_canonical TEXT;   -- variants of one origin compare equal
ALTER TABLE memories ADD COLUMN superseded_by INTEGER;   -- seq of the record that retired it
CREATE INDEX memories_by_task ON memories (scope_id, task) WHERE task IS NOT NULL;
CREATE INDEX memories_by_key ON memories (agent_id, project_id, channel, key_subject, key_relation)
    WHERE key_subject IS NOT NULL;
-- Exactly one active value per supersession key in a scope, whatever the writers do.
CREATE UNIQUE INDEX memories_one_active_key
    ON memories (agent_id, project_id, channel, key_subject, key_relation)
    WHERE key_subject IS NOT NULL AND status = 'active';

-- Which memories each feedback call rated, as rows forget can delete; the log row
-- itself stays append-only.
CREATE TABLE feedback_items (
    feedback_id INTEGER NOT NULL,
    memory_seq  INTEGER NOT NULL,
    PRIMARY KEY (feedback_id, memory_seq)
) WITHOUT ROWID;
CREATE INDEX feedback_items_by_memory ON feedback_items (memory_seq);
CREATE TRIGGER memories_feedback_cascade AFTER DELETE ON memories
BEGIN
    DELETE FROM feedback_items WHERE memory_seq = old.seq;
    UPDATE memories SET superseded_by = NULL WHERE superseded_by = old.seq;
END;
