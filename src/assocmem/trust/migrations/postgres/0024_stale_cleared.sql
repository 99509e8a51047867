-- Provenance demotion (PostgreSQL): the same table and invariants as the SQLite
-- migration of the same name; see that file for the why.
CREATE TABLE trust_stale_cleared (
    memory_seq BIGINT PRIMARY KEY,
    reasons    TEXT NOT NULL
);
