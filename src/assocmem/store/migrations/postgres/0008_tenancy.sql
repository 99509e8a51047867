-- Tenancy (PostgreSQL); see the SQLite migration of the same name.

DROP INDEX memories_one_active_key;
DROP INDEX memories_by_key;
CREATE INDEX memories_by_key ON memories (scope_id, key_subject, key_relation)
    WHERE key_subject IS NOT NULL;
CREATE UNIQUE INDEX memories_one_active_key
    ON memories (scope_id, key_subject, key_relation)
    WHERE key_subject IS NOT NULL AND status = 'active';
UPDATE memories m SET status = 'active', superseded_by = NULL
 WHERE m.status = 'superseded' AND m.key_subject IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM memories a WHERE a.scope_id = m.scope_id
                   AND a.key_subject = m.key_subject
                   AND a.key_relation = m.key_relation AND a.status = 'active')
   AND NOT EXISTS (SELECT 1 FROM memories n WHERE n.scope_id = m.scope_id
                   AND n.key_subject = m.key_subject
                   AND n.key_relation = m.key_relation AND n.status = 'superseded'
                   AND (n.observed_at > m.observed_at
                        OR (n.observed_at = m.observed_at AND n.seq > m.seq)));

ALTER TABLE feedback ADD COLUMN public_id BIGINT;
ALTER TABLE entities ADD COLUMN public_id BIGINT;
ALTER TABLE relations ADD COLUMN public_id BIGINT;
ALTER TABLE feedback DISABLE TRIGGER feedback_append_only;
UPDATE feedback SET public_id = floor(random() * 9007199254740990)::bigint + 1;
ALTER TABLE feedback ENABLE TRIGGER feedback_append_only;
UPDATE entities SET public_id = floor(random() * 9007199254740990)::bigint + 1;
UPDATE relations SET public_id = floor(random() * 9007199254740990)::bigint + 1;
CREATE UNIQUE INDEX feedback_by_public_id ON feedback (public_id);
CREATE UNIQUE INDEX entities_by_public_id ON entities (public_id);
CREATE UNIQUE INDEX relations_by_public_id ON relations (public_id);
