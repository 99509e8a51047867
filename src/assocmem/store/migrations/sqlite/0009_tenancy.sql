-- Tenancy: a supersession key holds one active value per access class, and the
-- ids a caller sees are random, so they count nothing of anyone else's activity.

-- One active value per key per scope layer: a layer is one (agent, project,
-- channel, access) class, so a restricted value never retires the plain one.
DROP INDEX memories_one_active_key;
DROP INDEX memories_by_key;
CREATE INDEX memories_by_key ON memories (scope_id, key_subject, key_relation)
    WHERE key_subject IS NOT NULL;
CREATE UNIQUE INDEX memories_one_active_key
    ON memories (scope_id, key_subject, key_relation)
    WHERE key_subject IS NOT NULL AND status = 'active';
-- A class whose current value another class retired gets its latest value back.
UPDATE memories SET status = 'active', superseded_by = NULL
 WHERE status = 'superseded' AND key_subject IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM memories a WHERE a.scope_id = memories.scope_id
                   AND a.key_subject = memories.key_subject
                   AND a.key_relation = memories.key_relation AND a.status = 'active')
   AND NOT EXISTS (SELECT 1 FROM memories n WHERE n.scope_id = memories.scope_id
                   AND n.key_subject = memories.key_subject
                   AND n.key_relation = memories.key_relation AND n.status = 'superseded'
                   AND (n.observed_at > memories.observed_at
                        OR (n.observed_at = memories.observed_at AND n.seq > memories.seq)));

-- The id a caller sees of a feedback call, entity or relation: random in
-- [1, 2^53 - 1] (exact in JSON), unique; the integer key stays internal.
ALTER TABLE feedback ADD COLUMN public_id INTEGER;
ALTER TABLE entities ADD COLUMN public_id INTEGER;
ALTER TABLE relations ADD COLUMN public_id INTEGER;
DROP TRIGGER feedback_append_only;
UPDATE feedback SET public_id = (random() & 9007199254740990) + 1;
CREATE TRIGGER feedback_append_only BEFORE UPDATE ON feedback
BEGIN
    SELECT RAISE(ABORT, 'the feedback log is append-only');
END;
UPDATE entities SET public_id = (random() & 9007199254740990) + 1;
UPDATE relations SET public_id = (random() & 9007199254740990) + 1;
CREATE UNIQUE INDEX feedback_by_public_id ON feedback (public_id);
CREATE UNIQUE INDEX entities_by_public_id ON entities (public_id);
CREATE UNIQUE INDEX relations_by_public_id ON relations (public_id);
