-- Who sees a declared entity follows who may read what declares it (PostgreSQL); see
-- the SQLite migration of the same name.
ALTER TABLE entity_aliases DROP CONSTRAINT entity_aliases_pkey;
DROP INDEX entity_aliases_in_layer;
ALTER TABLE entity_aliases ADD PRIMARY KEY (scope_id, normalized);
ALTER TABLE entity_aliases ADD COLUMN standalone SMALLINT NOT NULL DEFAULT 1
    CHECK (standalone IN (0, 1));
ALTER TABLE entity_aliases ALTER COLUMN standalone SET DEFAULT 0;
CREATE INDEX entity_aliases_by_entity ON entity_aliases (entity_id);
