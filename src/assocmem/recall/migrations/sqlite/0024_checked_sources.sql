-- The sources an operator names as checked, per scope (seed 001): evidence mode admits
-- a semantic fact only from one of them where any is named for the reader's scope (its
-- own project and channel, and the shared ones it reads); where none is, any named
-- source counts, as before. Canonical forms (`text/sources.py`), so spellings of one
-- origin are one entry. Configuration, not memory: forget leaves it.
CREATE TABLE checked_sources (
    agent_id   TEXT NOT NULL,
    project_id TEXT NOT NULL,
    channel    TEXT NOT NULL,
    source     TEXT NOT NULL,
    PRIMARY KEY (agent_id, project_id, channel, source)
);
