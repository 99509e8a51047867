-- A read's neighbour walk takes each side's strongest links, ORDER BY weight DESC and
-- the other end, above a floor, cut by a LIMIT (`_fetch_strongest`). On (scope_id, a,
-- weight) the index gave weight order only, ascending: SQLite scanned it backwards and
-- sorted each run of equal weights by the other end in a temporary B-tree, reading the
-- whole run at the cut, and most weights are small whole counts shared by many links.
-- Ordered as the walk asks, the scan stops at the LIMIT, as PostgreSQL's has since its
-- migration 0019. The other end is the key's last column either way; the entries and
-- their size are the same.
DROP INDEX links_by_a_weight;
DROP INDEX links_by_b_weight;
CREATE INDEX links_by_a_weight ON links (scope_id, a, weight DESC, b);
CREATE INDEX links_by_b_weight ON links (scope_id, b, weight DESC, a);
