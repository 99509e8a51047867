-- Changes to learned links appended by writes (co-occurrence: weight and count +n)
-- and feedback (weight +delta, outcome, one feedback), folded into `links` in bulk
-- by a later writer (see store/pending_links.py). AUTOINCREMENT: ids are never
-- reused, so a reader that copied rows up to id N resumes after N, and a fold
-- (which deletes every row) shows as a changed first id.
CREATE TABLE pending_links (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_id       INTEGER NOT NULL,
    a              INTEGER NOT NULL,
    b              INTEGER NOT NULL,
    weight         REAL NOT NULL,
    count          INTEGER NOT NULL DEFAULT 0,
    outcome_sum    REAL NOT NULL DEFAULT 0.0,
    feedback_count INTEGER NOT NULL DEFAULT 0,
    updated_at     TEXT NOT NULL,
    CHECK (a < b)
);
