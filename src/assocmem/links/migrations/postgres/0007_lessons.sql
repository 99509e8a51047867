-- What outcomes taught (PostgreSQL): the same tables and invariants as the SQLite
-- migration of the same name; see that file for the why of each.

CREATE TABLE lessons (
    scope_id   BIGINT NOT NULL,
    concept_id BIGINT NOT NULL,
    memory_seq BIGINT NOT NULL,
    weight     DOUBLE PRECISION NOT NULL,
    outcomes   INTEGER NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (scope_id, concept_id, memory_seq)
);
CREATE INDEX lessons_by_weight ON lessons (scope_id, concept_id, weight);
CREATE INDEX lessons_by_memory ON lessons (memory_seq);

CREATE TABLE lesson_concepts (
    scope_id   BIGINT NOT NULL,
    concept_id BIGINT NOT NULL,
    taught     DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (scope_id, concept_id)
);
