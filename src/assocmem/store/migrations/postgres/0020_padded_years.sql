-- Stored times before the year 1000 were written with an unpadded year
-- ('999-01-01T00:00:00.000000Z'): such a time sorts after every later one and no
-- reader parses it. Each is rewritten to the padded form ('0999-01-01T…'), the same
-- instant, in every column holding a stored time, as in SQLite. A padded time's
-- first '-' is its fifth character, an unpadded one's the second to fourth.
UPDATE memories SET observed_at = lpad(observed_at, 27, '0')
    WHERE strpos(observed_at, '-') BETWEEN 2 AND 4;
UPDATE memories SET verified_at = lpad(verified_at, 27, '0')
    WHERE strpos(verified_at, '-') BETWEEN 2 AND 4;
UPDATE memories SET recheck_by = lpad(recheck_by, 27, '0')
    WHERE strpos(recheck_by, '-') BETWEEN 2 AND 4;
UPDATE memories SET created_at = lpad(created_at, 27, '0')
    WHERE strpos(created_at, '-') BETWEEN 2 AND 4;
UPDATE memories SET accessed_at = lpad(accessed_at, 27, '0')
    WHERE strpos(accessed_at, '-') BETWEEN 2 AND 4;

-- The two append-only logs refuse every update, so their guards step aside for this
-- one, as in 0008_tenancy.
ALTER TABLE feedback DISABLE TRIGGER feedback_append_only;
UPDATE feedback SET created_at = lpad(created_at, 27, '0')
    WHERE strpos(created_at, '-') BETWEEN 2 AND 4;
ALTER TABLE feedback ENABLE TRIGGER feedback_append_only;
ALTER TABLE trust_credits DISABLE TRIGGER trust_credits_append_only;
UPDATE trust_credits SET created_at = lpad(created_at, 27, '0')
    WHERE strpos(created_at, '-') BETWEEN 2 AND 4;
ALTER TABLE trust_credits ENABLE TRIGGER trust_credits_append_only;

UPDATE entities SET created_at = lpad(created_at, 27, '0')
    WHERE strpos(created_at, '-') BETWEEN 2 AND 4;
UPDATE entity_mentions SET created_at = lpad(created_at, 27, '0')
    WHERE strpos(created_at, '-') BETWEEN 2 AND 4;
UPDATE relations SET declared_at = lpad(declared_at, 27, '0')
    WHERE strpos(declared_at, '-') BETWEEN 2 AND 4;
UPDATE consolidation_hubs SET flagged_at = lpad(flagged_at, 27, '0')
    WHERE strpos(flagged_at, '-') BETWEEN 2 AND 4;
UPDATE near_duplicates SET linked_at = lpad(linked_at, 27, '0')
    WHERE strpos(linked_at, '-') BETWEEN 2 AND 4;
UPDATE state_toggles SET superseded_at = lpad(superseded_at, 27, '0')
    WHERE strpos(superseded_at, '-') BETWEEN 2 AND 4;
UPDATE state_toggles SET reverted_at = lpad(reverted_at, 27, '0')
    WHERE strpos(reverted_at, '-') BETWEEN 2 AND 4;
UPDATE graduations SET graduated_at = lpad(graduated_at, 27, '0')
    WHERE strpos(graduated_at, '-') BETWEEN 2 AND 4;
UPDATE graduations SET reverted_at = lpad(reverted_at, 27, '0')
    WHERE strpos(reverted_at, '-') BETWEEN 2 AND 4;
UPDATE procedures SET created_at = lpad(created_at, 27, '0')
    WHERE strpos(created_at, '-') BETWEEN 2 AND 4;
UPDATE trust_cases SET raised_at = lpad(raised_at, 27, '0')
    WHERE strpos(raised_at, '-') BETWEEN 2 AND 4;
UPDATE trust_monitor SET updated_at = lpad(updated_at, 27, '0')
    WHERE strpos(updated_at, '-') BETWEEN 2 AND 4;
UPDATE trust_ratifications SET created_at = lpad(created_at, 27, '0')
    WHERE strpos(created_at, '-') BETWEEN 2 AND 4;
UPDATE trust_receipts SET created_at = lpad(created_at, 27, '0')
    WHERE strpos(created_at, '-') BETWEEN 2 AND 4;
UPDATE trust_slashes SET slashed_at = lpad(slashed_at, 27, '0')
    WHERE strpos(slashed_at, '-') BETWEEN 2 AND 4;
