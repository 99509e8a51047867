-- The dream pass's derived layer: hub flags, near-duplicate links and the toggle
-- guard's supersessions. Raw memories are never rewritten; these rows only point
-- at them, and go with them when a memory is forgotten.

-- A memory that matches nearly every query; `share` is the share of probes it matched.
CREATE TABLE consolidation_hubs (
    memory_seq INTEGER PRIMARY KEY,
    share      REAL NOT NULL,
    flagged_at TEXT NOT NULL
);

-- Two memories saying nearly the same thing (a < b, by seq); their text stays apart.
CREATE TABLE near_duplicates (
    a          INTEGER NOT NULL,
    b          INTEGER NOT NULL,
    similarity REAL NOT NULL,
    linked_at  TEXT NOT NULL,
    PRIMARY KEY (a, b),
    CHECK (a < b)
) WITHOUT ROWID;
CREATE INDEX near_duplicates_by_b ON near_duplicates (b);

-- A state statement the toggle guard retired (`older`) and the newer one that did;
-- `reverted_at` is set when `restore` brought the older one back, and a later pass
-- leaves that pair alone.
CREATE TABLE state_toggles (
    older         INTEGER PRIMARY KEY,
    newer         INTEGER NOT NULL,
    superseded_at TEXT NOT NULL,
    reverted_at   TEXT
);
CREATE INDEX state_toggles_by_newer ON state_toggles (newer);

CREATE TRIGGER memories_consolidation_cascade AFTER DELETE ON memories
BEGIN
    DELETE FROM consolidation_hubs WHERE memory_seq = old.seq;
    DELETE FROM near_duplicates WHERE a = old.seq OR b = old.seq;
    DELETE FROM state_toggles WHERE older = old.seq OR newer = old.seq;
END;
