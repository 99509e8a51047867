-- Concepts common in a layer (links/once_seen.py): a fold marks a concept once
-- `COMMON` memories of the layer folded so far carry it, with the seq folded so
-- far then (`since`). From then on a fold gives every pair of two marked concepts
-- a row, so the walk that tells such a pair once-seen reads no further than the
-- later of their two marks.
CREATE TABLE links_common (
    scope_id   INTEGER NOT NULL,
    concept_id INTEGER NOT NULL,
    since      INTEGER NOT NULL,
    PRIMARY KEY (scope_id, concept_id)
) WITHOUT ROWID;
