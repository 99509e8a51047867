-- A read's returned memories name the read by an integer `seq` instead of its
-- handle (PostgreSQL): the same change as the SQLite migration of the same name;
-- see that file for the why.
ALTER TABLE reads ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY;
ALTER TABLE reads ADD CONSTRAINT reads_seq_key UNIQUE (seq);

ALTER TABLE read_items ADD COLUMN read_seq BIGINT;
UPDATE read_items i SET read_seq = r.seq FROM reads r WHERE r.id = i.read_id;
DELETE FROM read_items WHERE read_seq IS NULL;
ALTER TABLE read_items DROP CONSTRAINT read_items_pkey;
ALTER TABLE read_items DROP COLUMN read_id;
ALTER TABLE read_items ALTER COLUMN read_seq SET NOT NULL;
ALTER TABLE read_items ADD PRIMARY KEY (read_seq, memory_seq);
