-- One pending row per written memory instead of one per pair: the row holds the
-- memory's concept ids, and every pair of them gains `count`. An 8-concept memory
-- appended 28 rows; inserting them was a sixth of a single write's time. Feedback
-- keeps a row per pair it moved, as a group of two ids. `pending_pairs` reads the
-- rows as the pairs they stand for, in the columns the per-pair table had.
--
-- Ids are no longer AUTOINCREMENT, whose counter row in sqlite_sequence was one more
-- page written per commit. The writer numbers the rows itself: a row's id is the
-- number of pair changes appended before it and by it since the store began, so ids
-- still only grow and are never reused, and the changes waiting are the last id
-- minus `pending_links_base` in store_info (the last id when the rows were last
-- folded away). An existing row is one pair, so it keeps its id.
CREATE TABLE pending_groups (
    id       INTEGER PRIMARY KEY,
    scope_id INTEGER NOT NULL,
    concepts TEXT NOT NULL,   -- JSON array of two or more distinct concept ids, ascending
    count    INTEGER NOT NULL,
    at       INTEGER NOT NULL,
    moved    REAL,
    outcome  REAL
);
INSERT INTO pending_groups (id, scope_id, concepts, count, at, moved, outcome)
SELECT id, scope_id, json_array(a, b), count, at, moved, outcome FROM pending_links ORDER BY id;
INSERT INTO store_info (key, value)
SELECT 'pending_links_base', COALESCE(
    (SELECT MIN(id) - 1 FROM pending_links),
    (SELECT seq FROM sqlite_sequence WHERE name = 'pending_links'),
    0)
WHERE true ON CONFLICT (key) DO UPDATE SET value = excluded.value;
DROP TABLE pending_links;
ALTER TABLE pending_groups RENAME TO pending_links;

CREATE VIEW pending_pairs AS
SELECT p.id, p.scope_id, x.value AS a, y.value AS b, p.count, p.at, p.moved, p.outcome
FROM pending_links p, json_each(p.concepts) x, json_each(p.concepts) y
WHERE x.value < y.value;
