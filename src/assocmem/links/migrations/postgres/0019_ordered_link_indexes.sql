-- A read's neighbour walk takes each concept's strongest links, ORDER BY weight DESC
-- and the other end, above a floor. On (scope_id, a, weight) the index gave weight
-- order only: each call sorted its ties and fetched the other end from the heap, and a
-- generic plan of the walk could not be trusted to keep that incremental sort. Ordered
-- and carrying the other end, these answer from their own pages in the walk's order, so
-- the plan is the same for a hub and a rare concept and the walk can keep one
-- (store/postgres.py, `_neighbor_weights`).
DROP INDEX links_by_a_weight;
DROP INDEX links_by_b_weight;
CREATE INDEX links_by_a_weight ON links (scope_id, a, weight DESC, b);
CREATE INDEX links_by_b_weight ON links (scope_id, b, weight DESC, a);
