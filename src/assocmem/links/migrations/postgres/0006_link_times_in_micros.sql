-- Link times become integer microseconds since the Unix epoch, as in SQLite (where
-- the narrower rows pay at every fold); one representation keeps the SQL shared.
ALTER TABLE links ALTER COLUMN updated_at TYPE BIGINT
    USING (EXTRACT(EPOCH FROM updated_at::timestamptz) * 1000000)::BIGINT;
