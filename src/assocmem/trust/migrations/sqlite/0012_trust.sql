-- Standing (the trust room): the outcome log standing is earned from, the taint a
-- derived memory inherits, the slashes that forfeit standing (with the standing
-- each saved) and verified attestations. Keyed by memory seq; forget deletes a
-- memory's rows with it. Empty tables change no read.

-- Who credited which memory how, when; `counted` is 0 for an outcome recorded while
-- the memory was slashed (logged, never banked). Rows are never edited.
CREATE TABLE trust_credits (
    id         INTEGER PRIMARY KEY,
    memory_seq INTEGER NOT NULL,
    agent_id   TEXT NOT NULL,
    good       INTEGER NOT NULL CHECK (good IN (0, 1)),
    counted    INTEGER NOT NULL CHECK (counted IN (0, 1)),
    created_at TEXT NOT NULL
);
CREATE INDEX trust_credits_by_memory ON trust_credits (memory_seq);
CREATE TRIGGER trust_credits_append_only BEFORE UPDATE ON trust_credits
BEGIN
    SELECT RAISE(ABORT, 'the credit log is append-only');
END;

-- The canonical sources a memory inherited through derived_from, transitively.
CREATE TABLE trust_taint (
    memory_seq INTEGER NOT NULL,
    source     TEXT NOT NULL,
    PRIMARY KEY (memory_seq, source)
);
CREATE INDEX trust_taint_by_source ON trust_taint (source);

-- A slashed memory, with the standing it had when first slashed.
CREATE TABLE trust_slashes (
    memory_seq INTEGER PRIMARY KEY,
    good       INTEGER NOT NULL,
    bad        INTEGER NOT NULL,
    slashes    INTEGER NOT NULL,
    slashed_at TEXT NOT NULL
);

-- The Ed25519 key (hex) whose signature over the claim was verified at write time.
CREATE TABLE trust_attestations (
    memory_seq INTEGER PRIMARY KEY,
    public_key TEXT NOT NULL,
    signature  TEXT NOT NULL
);
CREATE INDEX trust_attestations_by_key ON trust_attestations (public_key);
