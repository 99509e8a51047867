-- A pair written together once and never rated keeps no `links` row: it is read
-- from the memory that carries it (links/once_seen.py). What is pending is folded
-- first, as a fold does, so every memory is counted; then each row that says no
-- more than its memory does (count 1, weight 1, unrated, counted when the memory
-- was written) is deleted.
INSERT INTO links (scope_id, a, b, weight, count, outcome_sum, feedback_count, updated_at)
SELECT scope_id, a, b, SUM(count) + TOTAL(moved), SUM(count), TOTAL(outcome), COUNT(outcome),
       MAX(at)
FROM pending_pairs WHERE true GROUP BY scope_id, a, b
ON CONFLICT (scope_id, a, b) DO UPDATE SET
    weight = links.weight + excluded.weight,
    count = links.count + excluded.count,
    outcome_sum = links.outcome_sum + excluded.outcome_sum,
    feedback_count = links.feedback_count + excluded.feedback_count,
    updated_at = MAX(links.updated_at, excluded.updated_at);
INSERT INTO store_info (key, value)
SELECT 'pending_links_base', MAX(id) FROM pending_links HAVING COUNT(*) > 0
ON CONFLICT (key) DO UPDATE SET value = excluded.value;
DELETE FROM pending_links;
INSERT INTO store_info (key, value)
SELECT 'links_folded_seq', COALESCE(MAX(seq), 0) FROM memories WHERE true
ON CONFLICT (key) DO UPDATE SET value = excluded.value;
-- Each layer's count of once-seen pairs, kept so `stats` need not enumerate them.
CREATE TABLE links_once_seen (
    scope_id INTEGER PRIMARY KEY,
    pairs    INTEGER NOT NULL
);
-- The rows to delete; stored times read YYYY-MM-DDTHH:MM:SS.ffffffZ: whole seconds,
-- then the micros.
CREATE TEMP TABLE plain_links AS
SELECT scope_id, a, b FROM links
WHERE count = 1 AND weight = 1 AND outcome_sum = 0 AND feedback_count = 0
  AND EXISTS (
    SELECT 1 FROM memory_concepts y
    CROSS JOIN memory_concepts x
        ON x.scope_id = y.scope_id AND x.concept_id = links.a AND x.memory_seq = y.memory_seq
    JOIN memories m ON m.seq = y.memory_seq
    WHERE y.scope_id = links.scope_id AND y.concept_id = links.b
      AND CAST(strftime('%s', substr(m.created_at, 1, 19)) AS INTEGER) * 1000000
          + CAST(substr(m.created_at, 21, 6) AS INTEGER) = links.updated_at
  );
INSERT INTO links_once_seen (scope_id, pairs)
SELECT scope_id, COUNT(*) FROM plain_links WHERE true GROUP BY scope_id;
DELETE FROM links WHERE (scope_id, a, b) IN (SELECT scope_id, a, b FROM plain_links);
DROP TABLE plain_links;
INSERT INTO store_info (key, value) SELECT 'links_at_fold', COUNT(*) FROM links WHERE true
ON CONFLICT (key) DO UPDATE SET value = excluded.value;
