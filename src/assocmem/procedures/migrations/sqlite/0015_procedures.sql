-- Procedures and graduation: candidate procedures and their versions, and
-- the record of each episodic memory that graduated to semantic (with the evidence,
-- so it can be explained and reverted). Empty tables change no read.

-- A procedure version. `status` is candidate (proposed, not readable as a procedure),
-- rejected (failed the gate: `reason`), promoted (its `procedural` record is
-- `memory_seq`), superseded (a later version replaced it) or retired (archived).
-- `steps`, `preconditions`, `checks`, `episodes` (public ids) and `gate` are JSON.
CREATE TABLE procedures (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    scope_id      INTEGER NOT NULL,
    name          TEXT,
    version       INTEGER NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('candidate', 'rejected', 'promoted',
                                                  'superseded', 'retired')),
    steps         TEXT NOT NULL,
    preconditions TEXT NOT NULL,
    checks        TEXT NOT NULL,
    episodes      TEXT NOT NULL,
    gate          TEXT NOT NULL DEFAULT '{}',
    reason        TEXT,
    memory_seq    INTEGER,
    supersedes    TEXT,
    created_at    TEXT NOT NULL
);
CREATE INDEX procedures_by_scope ON procedures (scope_id, name);

-- One graduation of a memory's kind, with the evidence that earned it; `reverted_at`
-- is set when it was taken back.
CREATE TABLE graduations (
    id           INTEGER PRIMARY KEY,
    memory_seq   INTEGER NOT NULL,
    from_kind    TEXT NOT NULL,
    to_kind      TEXT NOT NULL,
    evidence     TEXT NOT NULL,
    graduated_at TEXT NOT NULL,
    reverted_at  TEXT
);
CREATE INDEX graduations_by_memory ON graduations (memory_seq);
