-- Who sees a declared entity follows who may read what declares it.
-- An alias row is one layer's declaration of a name, so one entity may be named in
-- several layers (a public memory and a restricted one declaring it): the key is
-- the layer and the name, which keeps one entity per name per layer. `standalone`
-- marks a name declared with no memory; it shows the entity to that layer's readers
-- by itself. Rows written before were the only record of who saw an entity, so
-- they keep showing it.
DROP TRIGGER entities_cascade;
CREATE TABLE entity_aliases_by_layer (
    entity_id  INTEGER NOT NULL,
    scope_id   INTEGER NOT NULL,
    alias      TEXT NOT NULL,
    normalized TEXT NOT NULL,
    standalone INTEGER NOT NULL DEFAULT 0 CHECK (standalone IN (0, 1)),
    PRIMARY KEY (scope_id, normalized)
);
INSERT INTO entity_aliases_by_layer (entity_id, scope_id, alias, normalized, standalone)
SELECT entity_id, scope_id, alias, normalized, 1 FROM entity_aliases;
DROP TABLE entity_aliases;
ALTER TABLE entity_aliases_by_layer RENAME TO entity_aliases;
CREATE INDEX entity_aliases_by_entity ON entity_aliases (entity_id);

CREATE TRIGGER entities_cascade AFTER DELETE ON entities
BEGIN
    DELETE FROM entity_aliases WHERE entity_id = old.id;
    DELETE FROM entity_mentions WHERE entity_id = old.id;
    DELETE FROM relations
     WHERE (subject_kind = 'entity' AND subject_id = old.id)
        OR (object_kind = 'entity' AND object_id = old.id);
END;
