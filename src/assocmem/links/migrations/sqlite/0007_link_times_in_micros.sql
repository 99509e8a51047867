-- Link times become integer microseconds since the Unix epoch, in `links` and in
-- the pending list, and co-occurrence rows stop carrying feedback columns. Every
-- pending row is a sort record at the next fold and `links` is rewritten at every
-- fold, so their width is paid over and over: a 27-character time was half a row.

-- What is pending is folded first, exactly as a fold does (see store/sql.py).
INSERT INTO links (scope_id, a, b, weight, count, outcome_sum, feedback_count, updated_at)
SELECT scope_id, a, b, SUM(weight), SUM(count), SUM(outcome_sum), SUM(feedback_count),
       MAX(updated_at)
FROM pending_links WHERE true GROUP BY scope_id, a, b
ON CONFLICT (scope_id, a, b) DO UPDATE SET
    weight = links.weight + excluded.weight,
    count = links.count + excluded.count,
    outcome_sum = links.outcome_sum + excluded.outcome_sum,
    feedback_count = links.feedback_count + excluded.feedback_count,
    updated_at = MAX(links.updated_at, excluded.updated_at);
DROP TABLE pending_links;

CREATE TABLE links_micros (
    scope_id       INTEGER NOT NULL,
    a              INTEGER NOT NULL,
    b              INTEGER NOT NULL,
    weight         REAL NOT NULL DEFAULT 0.0,
    count          INTEGER NOT NULL DEFAULT 0,
    outcome_sum    REAL NOT NULL DEFAULT 0.0,
    feedback_count INTEGER NOT NULL DEFAULT 0,
    updated_at     INTEGER NOT NULL,   -- microseconds since 1970-01-01T00:00:00Z
    PRIMARY KEY (scope_id, a, b),
    CHECK (a < b)
) WITHOUT ROWID;
-- Stored times read YYYY-MM-DDTHH:MM:SS.ffffffZ: whole seconds, then the micros.
INSERT INTO links_micros
SELECT scope_id, a, b, weight, count, outcome_sum, feedback_count,
       CAST(strftime('%s', substr(updated_at, 1, 19)) AS INTEGER) * 1000000
       + CAST(substr(updated_at, 21, 6) AS INTEGER)
FROM links;
DROP TABLE links;
ALTER TABLE links_micros RENAME TO links;
CREATE INDEX links_by_a_weight ON links (scope_id, a, weight);
CREATE INDEX links_by_b_weight ON links (scope_id, b, weight);

-- A co-occurrence row is (layer, a, b, count, at); feedback adds the weight it
-- moved and its outcome (NULL on co-occurrence rows, so they cost no bytes).
-- AUTOINCREMENT, as before: ids are never reused within this table.
CREATE TABLE pending_links (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_id INTEGER NOT NULL,
    a        INTEGER NOT NULL,
    b        INTEGER NOT NULL,
    count    INTEGER NOT NULL,
    at       INTEGER NOT NULL,
    moved    REAL,
    outcome  REAL,
    CHECK (a < b)
);
INSERT INTO store_info (key, value) SELECT 'links_at_fold', COUNT(*) FROM links WHERE true
ON CONFLICT (key) DO UPDATE SET value = excluded.value;
