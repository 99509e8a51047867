-- Memories and full-text document frequencies per scope layer, kept in the write's
-- transaction, so a read sizes its layers and counts a term's matches by looking
-- them up: counting rows in PostgreSQL visits each one (its heap tuple, for
-- visibility), ~1 µs a row, where SQLite's FTS5 walks a posting list (see the SQLite
-- migration lexical_layers). Sums over the reader's layers only, so no tenant's
-- writes change another's counts. A lexeme's row goes when its last memory does,
-- so a forgotten word leaves no row behind (and VACUUM FULL takes the dead ones).
CREATE TABLE lexical_layers (
    scope_id BIGINT PRIMARY KEY,
    docs     BIGINT NOT NULL
);
CREATE TABLE lexical_terms (
    scope_id BIGINT NOT NULL,
    lexeme   TEXT NOT NULL,
    docs     BIGINT NOT NULL,
    PRIMARY KEY (scope_id, lexeme)
);
INSERT INTO lexical_layers (scope_id, docs)
SELECT scope_id, COUNT(*) FROM memories GROUP BY scope_id;
INSERT INTO lexical_terms (scope_id, lexeme, docs)
SELECT scope_id, lexeme, COUNT(*) FROM memories, unnest(tsvector_to_array(fts)) AS lexeme
GROUP BY scope_id, lexeme;

-- Once per statement, over all its rows: a batch of a thousand memories makes one
-- upsert per distinct (layer, lexeme), not eight thousand. Rows are upserted in key
-- order, so two transactions counting the same lexemes (writers hold the store's
-- advisory lock, but a session outside it may write too) wait on each other rather
-- than deadlock.
CREATE FUNCTION assocmem_lexical_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lexical_layers (scope_id, docs)
    SELECT scope_id, COUNT(*) FROM inserted GROUP BY scope_id ORDER BY scope_id
    ON CONFLICT (scope_id) DO UPDATE SET docs = lexical_layers.docs + excluded.docs;
    INSERT INTO lexical_terms (scope_id, lexeme, docs)
    SELECT scope_id, lexeme, COUNT(*) FROM inserted, unnest(tsvector_to_array(fts)) AS lexeme
    GROUP BY scope_id, lexeme ORDER BY scope_id, lexeme
    ON CONFLICT (scope_id, lexeme) DO UPDATE SET docs = lexical_terms.docs + excluded.docs;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_lexical_inserted AFTER INSERT ON memories
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION assocmem_lexical_counted();

CREATE FUNCTION assocmem_lexical_uncounted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE lexical_layers l SET docs = l.docs - gone.docs
    FROM (SELECT scope_id, COUNT(*) AS docs FROM deleted GROUP BY scope_id) AS gone
    WHERE l.scope_id = gone.scope_id;
    UPDATE lexical_terms t SET docs = t.docs - gone.docs
    FROM (SELECT scope_id, lexeme, COUNT(*) AS docs
          FROM deleted, unnest(tsvector_to_array(fts)) AS lexeme
          GROUP BY scope_id, lexeme) AS gone
    WHERE t.scope_id = gone.scope_id AND t.lexeme = gone.lexeme;
    DELETE FROM lexical_terms t
    USING (SELECT DISTINCT scope_id, lexeme
           FROM deleted, unnest(tsvector_to_array(fts)) AS lexeme) AS gone
    WHERE t.scope_id = gone.scope_id AND t.lexeme = gone.lexeme AND t.docs <= 0;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_lexical_deleted AFTER DELETE ON memories
    REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION assocmem_lexical_uncounted();
