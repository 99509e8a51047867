-- Attribution: write receipts, ratifications, the per-source
-- CUSUM monitor and its cases, and the per-source irreversible budget.

-- One hash chain per store. `position` is 1, 2, ... in commit order: the head is
-- read and appended inside the write transaction, which no other writer
-- interleaves with, so concurrent writers still form one chain. `sources` is the
-- JSON list of canonical sources the write was attributed to (own + taint).
CREATE TABLE trust_receipts (
    position    INTEGER PRIMARY KEY,
    memory_id   TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    sources     TEXT NOT NULL,
    prev_hash   TEXT NOT NULL,
    hash        TEXT NOT NULL,
    public_key  TEXT,
    signature   TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX trust_receipts_by_memory ON trust_receipts (memory_id);

-- External events on a claim; a (memory, kind, by_key, lens) happens once.
CREATE TABLE trust_ratifications (
    id         INTEGER PRIMARY KEY,
    memory_id  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    by_key     TEXT NOT NULL,
    lens       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (memory_id, kind, by_key, lens)
);

-- The CUSUM statistic of each (agent, source), kept so no session resets it;
-- `evidence` holds the ids of its latest bad outcomes (a JSON list, bounded).
CREATE TABLE trust_monitor (
    agent_id     TEXT NOT NULL,
    source       TEXT NOT NULL,
    statistic    REAL NOT NULL,
    observations INTEGER NOT NULL,
    bad          INTEGER NOT NULL,
    evidence     TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (agent_id, source)
);
CREATE TABLE trust_cases (
    id        INTEGER PRIMARY KEY,
    agent_id  TEXT NOT NULL,
    source    TEXT NOT NULL,
    raised_at TEXT NOT NULL,
    statistic REAL NOT NULL,
    evidence  TEXT NOT NULL,
    status    TEXT NOT NULL
);
CREATE INDEX trust_cases_open ON trust_cases (agent_id, source) WHERE status = 'open';

-- What each (agent, source) has spent of irreversible influence, for good.
CREATE TABLE trust_budgets (
    agent_id TEXT NOT NULL,
    source   TEXT NOT NULL,
    spent    REAL NOT NULL,
    PRIMARY KEY (agent_id, source)
);
