-- What outcomes taught, kept apart from co-occurrence so a lesson's weight means
-- only "an outcome said so": a rated memory answers questions carrying these
-- concepts (query-log document expansion). One row per (layer, concept, memory);
-- `weight` sums the outcomes, and a layer's row may hold a negative correction so
-- the weight a reader sees, summed over its layers, never drops below zero.
CREATE TABLE lessons (
    scope_id   INTEGER NOT NULL,
    concept_id INTEGER NOT NULL,
    memory_seq INTEGER NOT NULL,
    weight     REAL NOT NULL,
    outcomes   INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,   -- microseconds since 1970-01-01T00:00:00Z
    PRIMARY KEY (scope_id, concept_id, memory_seq)
) WITHOUT ROWID;
-- A concept's strongest lessons first; a memory's lessons for `forget`.
CREATE INDEX lessons_by_weight ON lessons (scope_id, concept_id, weight);
CREATE INDEX lessons_by_memory ON lessons (memory_seq);

-- How much helpful teaching each concept received: one outcome per feedback call,
-- however many memories it rated. A lesson's share of it reads "when this concept
-- was asked about, this memory helped".
CREATE TABLE lesson_concepts (
    scope_id   INTEGER NOT NULL,
    concept_id INTEGER NOT NULL,
    taught     REAL NOT NULL,
    PRIMARY KEY (scope_id, concept_id)
) WITHOUT ROWID;
