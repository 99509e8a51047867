-- Provenance demotion (seed 003): a derived memory whose ancestry holds a memory since
-- contradicted, superseded or slashed is demoted, in standing and in rank, until it is
-- re-derived or re-credited. A re-credit (a banked good outcome while demoted) clears
-- the troubles known at that moment, kept here as their reasons; a trouble that comes
-- later demotes the memory again. forget deletes the row with its memory.
CREATE TABLE trust_stale_cleared (
    memory_seq INTEGER PRIMARY KEY,
    reasons    TEXT NOT NULL  -- JSON list of the cleared reasons
);
