-- Two indexes that took a random page per write, made local or small.
--
-- A duplicate has the same observation time as the record it repeats (the time is
-- part of the dedupe key's basis), so the unique index leads with the time: new
-- records land at the index's right edge instead of on a random page of it.
DROP INDEX memories_dedupe;
CREATE UNIQUE INDEX memories_dedupe ON memories (scope_id, observed_at, dedupe_key);

-- Exact-text lookups need only a slice of the hash in the index (32 bits: a stray
-- match per billion records); the full fingerprint is compared on the row. The
-- index holds a third of what it held.
DROP INDEX memories_by_fingerprint;
ALTER TABLE memories ADD COLUMN fingerprint_key TEXT
    GENERATED ALWAYS AS (substr(fingerprint, 4, 8)) VIRTUAL;  -- after the 'b2:' prefix
CREATE INDEX memories_by_fingerprint ON memories (scope_id, fingerprint_key);
