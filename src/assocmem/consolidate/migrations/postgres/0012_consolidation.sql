-- The dream pass's derived layer (PostgreSQL): the same tables and invariants as the
-- SQLite migration of the same name; see that file for the why of each. Rows go with
-- their memories by foreign-key cascade.

CREATE TABLE consolidation_hubs (
    memory_seq BIGINT PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    share      DOUBLE PRECISION NOT NULL,
    flagged_at TEXT NOT NULL
);

CREATE TABLE near_duplicates (
    a          BIGINT NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    b          BIGINT NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    similarity DOUBLE PRECISION NOT NULL,
    linked_at  TEXT NOT NULL,
    PRIMARY KEY (a, b),
    CHECK (a < b)
);
CREATE INDEX near_duplicates_by_b ON near_duplicates (b);

CREATE TABLE state_toggles (
    older         BIGINT PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    newer         BIGINT NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    superseded_at TEXT NOT NULL,
    reverted_at   TEXT
);
CREATE INDEX state_toggles_by_newer ON state_toggles (newer);
