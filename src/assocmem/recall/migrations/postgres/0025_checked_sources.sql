-- The sources an operator names as checked (PostgreSQL): the same table and invariants
-- as the SQLite migration of the same name; see that file for the why.
CREATE TABLE checked_sources (
    agent_id   TEXT NOT NULL,
    project_id TEXT NOT NULL,
    channel    TEXT NOT NULL,
    source     TEXT NOT NULL,
    PRIMARY KEY (agent_id, project_id, channel, source)
);
